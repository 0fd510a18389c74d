import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import { MAX_TIMER_DELAY_MS, setLongTimeout } from "../../src/util/timer.ts";
import { WorkQueue } from "../../src/controller/work-queue.ts";

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

  it("a WorkQueue key delayed 30 days is handled once, after 30 days, not every millisecond", async () => {
    const handled = vi.fn(async () => undefined);
    const queue = new WorkQueue(handled, () => undefined);
    queue.add("Task/default/yearly", 30 * DAY_MS);
    await vi.advanceTimersByTimeAsync(1_000);
    expect(handled).not.toHaveBeenCalled();
    await vi.advanceTimersByTimeAsync(30 * DAY_MS - 1_000);
    expect(handled).toHaveBeenCalledTimes(1);
    queue.stop();
  });
});
