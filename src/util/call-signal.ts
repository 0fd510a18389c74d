import { setLongTimeout } from "./timer.ts";

/** What a call that ran out of time fails with: the error `AbortSignal.timeout` aborts with. */
export const timeoutError = () => new DOMException("The operation was aborted due to timeout", "TimeoutError");

export interface CallSignalOptions {
  /** Aborts with a TimeoutError (as `AbortSignal.timeout` does) after this long. */
  timeoutMs?: number;
  /** Aborts with the reason of the first of these to abort. */
  parents?: readonly (AbortSignal | undefined)[];
}

/**
 * Runs `call` with a signal that aborts when a parent does or its time is up, and that lets go of its
 * parents and its timer as soon as the call settles. `AbortSignal.any` over `AbortSignal.timeout` keeps
 * both alive long after a quick call has ended (a timer for the whole timeout, weak links the garbage
 * collector must trace), at three to ten times the CPU per call of this (docs/performance-history.md): every
 * call to a model, an egress URL, GitHub, a search API or a brokered tool, and to the control plane over
 * HTTP, has its signal from here (over the pool's IPC channel a call needs none: a timer and its caller's
 * signal end it).
 */
export async function withCallSignal<T>(options: CallSignalOptions, call: (signal: AbortSignal) => Promise<T>): Promise<T> {
  const controller = new AbortController();
  const parents = (options.parents ?? []).filter((parent): parent is AbortSignal => parent !== undefined);
  const abortedParent = parents.find((parent) => parent.aborted);
  if (abortedParent) controller.abort(abortedParent.reason);
  const forward = (event: Event) => controller.abort((event.target as AbortSignal).reason);
  for (const parent of parents) parent.addEventListener("abort", forward, { once: true });
  const timer =
    options.timeoutMs === undefined
      ? undefined
      : setLongTimeout(() => controller.abort(timeoutError()), options.timeoutMs);
  try {
    return await call(controller.signal);
  } finally {
    timer?.clear();
    for (const parent of parents) parent.removeEventListener("abort", forward);
  }
}
