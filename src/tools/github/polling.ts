// The waiting of the GitHub tools that poll, in their worker halves: each poll is one short
// control-plane call, so no server request blocks for minutes.
import { setTimeout as sleep } from "node:timers/promises";
import { errorMessage, OrkaError } from "../../util/errors.ts";

export interface PollResult<T> {
  /** The last answer a poll got, if any got one. */
  last?: T;
  attempts: number;
  /** The last rate limit, server error or timeout a poll met, if any did. */
  lastTransientError?: string;
  /** Whether the deadline came before an answer that ends the wait. */
  timedOut: boolean;
}

/**
 * Rate limits, GitHub's server errors and timeouts may pass by the next poll; any other refusal is the
 * model's to see at once.
 */
function isTransientToolError(err: unknown): boolean {
  return err instanceof OrkaError && (err.code === "unavailable" || err.code === "resource_exhausted" || err.code === "deadline_exceeded");
}

/**
 * Polls at once, then every `intervalMs` (the last sleep cut to the deadline, and one final poll at
 * it), until `done` accepts an answer. Transient failures are remembered and skipped; any other error,
 * or `signal` firing, ends the wait by throwing.
 */
export async function pollUntil<T>(poll: () => Promise<T>, done: (answer: T) => boolean, wait: { totalMs: number; intervalMs: number; signal: AbortSignal }): Promise<PollResult<T>> {
  const deadline = Date.now() + wait.totalMs;
  const result: PollResult<T> = { attempts: 0, timedOut: false };
  for (;;) {
    wait.signal.throwIfAborted();
    result.attempts++;
    try {
      result.last = await poll();
      if (done(result.last)) return result;
    } catch (err) {
      if (!isTransientToolError(err)) throw err;
      result.lastTransientError = errorMessage(err);
    }
    const remaining = deadline - Date.now();
    if (remaining <= 0) return { ...result, timedOut: true };
    await sleep(Math.min(wait.intervalMs, remaining), undefined, { signal: wait.signal });
  }
}
