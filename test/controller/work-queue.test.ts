import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import { WorkQueue } from "../../src/controller/work-queue.ts";

const DAY_MS = 24 * 60 * 60_000;

describe("work queue", () => {
  beforeEach(() => vi.useFakeTimers());
  afterEach(() => vi.useRealTimers());

  it("a key delayed 30 days is handled once, after 30 days, not every millisecond", async () => {
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
