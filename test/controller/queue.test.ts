import { describe, expect, it } from "vitest";
import { RunQueue, effectivePriority } from "../../src/controller/task/run-queue.ts";

describe("run queue: which waiting Task starts next, by aged priority", () => {
  const now = 1_000_000_000;
  it("ages priority by 25 per 30 s waited, capped at 1000, and puts a 5-minute waiter first", () => {
    expect(effectivePriority({ key: "a", priority: 500, queuedAt: now - 65_000, createdAt: 0 }, now)).toBe(550);
    expect(effectivePriority({ key: "a", priority: 990, queuedAt: now - 120_000, createdAt: 0 }, now)).toBe(1000);
    expect(effectivePriority({ key: "a", priority: 0, queuedAt: now - 301_000, createdAt: 0 }, now)).toBe(Infinity);
  });

  it("orders by effective priority, then earlier queued, then earlier created", () => {
    const queue = new RunQueue();
    queue.offer({ key: "low-old", priority: 100, queuedAt: now - 301_000, createdAt: 1 });
    queue.offer({ key: "high", priority: 900, queuedAt: now, createdAt: 2 });
    queue.offer({ key: "mid-aged", priority: 850, queuedAt: now - 60_000, createdAt: 3 });
    queue.offer({ key: "mid-b", priority: 500, queuedAt: now, createdAt: 5 });
    queue.offer({ key: "mid-a", priority: 500, queuedAt: now, createdAt: 4 });
    // mid-aged reaches 900 after 60 s, ties with high, and wins by having queued earlier.
    expect(queue.head(5, now)).toEqual(["low-old", "mid-aged", "high", "mid-a", "mid-b"]);
    expect(queue.head(2, now)).toEqual(["low-old", "mid-aged"]);
    queue.remove("low-old");
    expect(queue.head(1, now)).toEqual(["mid-aged"]);
  });
});
