/** The longest delay setTimeout honours; Node fires a longer one after 1 ms (with a TimeoutOverflowWarning). */
export const MAX_TIMER_DELAY_MS = 2 ** 31 - 1;

export interface LongTimer {
  /** When the callback runs (epoch ms). */
  readonly at: number;
  clear(): void;
}

/**
 * setTimeout for any delay: a delay past the limit waits in steps of at most the limit, re-armed
 * until it is due, so a far wake-up (a yearly schedule, a long timeout) neither spins nor warns.
 * The timer never keeps the process alive.
 */
export function setLongTimeout(callback: () => void, delayMs: number): LongTimer {
  const at = Date.now() + delayMs;
  let timer: NodeJS.Timeout;
  const arm = () => {
    const remaining = Math.max(0, at - Date.now());
    timer = setTimeout(remaining > MAX_TIMER_DELAY_MS ? arm : callback, Math.min(remaining, MAX_TIMER_DELAY_MS));
    timer.unref();
  };
  arm();
  return { at, clear: () => clearTimeout(timer) };
}
