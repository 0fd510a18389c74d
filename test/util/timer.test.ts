import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import { MAX_TIMER_DELAY_MS, setLongTimeout } from "../../src/util/timer.ts";

const DAY_MS = 24 * 60 * 60_000;

describe("timers past setTimeout's limit", () => {
  beforeEach(() => vi.useFakeTimers());
  afterEach(() => vi.useRealTimers());

  it("setLongTimeout waits 40 days in steps no longer than the limit, then fires once", () => {
    const fired = vi.fn();
    const armed = vi.spyOn(globalThis, "setTimeout");
    setLongTimeout(fired, 40 * DAY_MS);
    vi.advanceTimersByTime(1_000);
    expect(fired).not.toHaveBeenCalled();
    vi.advanceTimersByTime(MAX_TIMER_DELAY_MS);
    expect(fired).not.toHaveBeenCalled();
    vi.advanceTimersByTime(40 * DAY_MS - MAX_TIMER_DELAY_MS - 1_001);
    expect(fired).not.toHaveBeenCalled();
    vi.advanceTimersByTime(1);
    expect(fired).toHaveBeenCalledTimes(1);
    expect(armed.mock.calls.map(([, delay]) => delay)).toEqual([MAX_TIMER_DELAY_MS, 40 * DAY_MS - MAX_TIMER_DELAY_MS]);
    vi.advanceTimersByTime(100 * DAY_MS);
    expect(fired).toHaveBeenCalledTimes(1);
  });

  it("clear() stops a re-armed timer", () => {
    const fired = vi.fn();
    const timer = setLongTimeout(fired, 60 * DAY_MS);
    vi.advanceTimersByTime(MAX_TIMER_DELAY_MS + 1);
    timer.clear();
    vi.advanceTimersByTime(100 * DAY_MS);
    expect(fired).not.toHaveBeenCalled();
    expect(vi.getTimerCount()).toBe(0);
  });
});
