import { setImmediate as nextTurn } from "node:timers/promises";
import { describe, expect, it } from "vitest";
import { BatchedSender } from "../../src/runner/local/batched-sender.ts";

describe("messages batched per turn of the event loop", () => {
  it("writes one batch per turn, in order, merging what may travel as one", async () => {
    const writes: string[][] = [];
    const sender = new BatchedSender<string>({
      write: (batch, done) => (writes.push(batch), done(null)),
      merge: (last, next) => (last.startsWith("log:") && next.startsWith("log:") ? last + next.slice(4) : undefined),
    });
    for (const message of ["call 1", "log:a", "log:b", "call 2", "log:c"]) sender.push(message);
    await nextTurn();
    sender.push("call 3");
    await nextTurn();
    expect(writes).toEqual([["call 1", "log:ab", "call 2", "log:c"], ["call 3"]]);
  });

  it("tells which batch the channel did not take", async () => {
    const failed: string[][] = [];
    const sender = new BatchedSender<string>({ write: (_batch, done) => done(new Error("EPIPE")), failed: (batch) => failed.push(batch) });
    sender.push("start a");
    sender.push("start b");
    await nextTurn();
    expect(failed).toEqual([["start a", "start b"]]);
  });
});
