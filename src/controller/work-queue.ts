import { errorMessage } from "../util/errors.ts";
import { setLongTimeout, type LongTimer } from "../util/timer.ts";

/**
 * Keys to reconcile, each processed by one handler call at a time; a key queued while it is
 * being processed runs again afterwards. Delayed keys keep only the earliest wake-up.
 */
export class WorkQueue {
  private readonly handler: (key: string) => Promise<void>;
  private readonly onError: (key: string, message: string) => void;
  private readonly timers = new Map<string, LongTimer>();
  private readonly active = new Set<string>();
  private readonly again = new Set<string>();
  private stopped = false;

  constructor(handler: (key: string) => Promise<void>, onError: (key: string, message: string) => void) {
    this.handler = handler;
    this.onError = onError;
  }

  add(key: string, delayMs = 0): void {
    if (this.stopped) return;
    if (delayMs <= 0) {
      this.clearTimer(key);
      this.run(key);
      return;
    }
    const existing = this.timers.get(key);
    if (existing && existing.at <= Date.now() + delayMs) return;
    existing?.clear();
    const timer = setLongTimeout(() => {
      this.timers.delete(key);
      this.run(key);
    }, delayMs);
    this.timers.set(key, timer);
  }

  stop(): void {
    this.stopped = true;
    for (const timer of this.timers.values()) timer.clear();
    this.timers.clear();
  }

  /** Resolves when nothing is being processed (for orderly shutdown). */
  async idle(): Promise<void> {
    while (this.active.size > 0) await new Promise((r) => setTimeout(r, 10));
  }

  private clearTimer(key: string): void {
    this.timers.get(key)?.clear();
    this.timers.delete(key);
  }

  private run(key: string): void {
    if (this.stopped) return;
    if (this.active.has(key)) {
      this.again.add(key);
      return;
    }
    this.active.add(key);
    this.handler(key)
      .catch((err) => this.onError(key, errorMessage(err)))
      .finally(() => {
        this.active.delete(key);
        if (this.again.delete(key)) this.run(key);
      });
  }
}
