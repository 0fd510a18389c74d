import { describe, expect, it } from "vitest";
import { withCallSignal } from "../../src/util/call-signal.ts";

/** Resolves when `signal` aborts, with its reason. */
const abortOf = (signal: AbortSignal) => new Promise<unknown>((resolve) => signal.addEventListener("abort", () => resolve(signal.reason), { once: true }));

describe("withCallSignal", () => {
  it("aborts the call with the reason of the parent that aborts", async () => {
    const quiet = new AbortController();
    const parent = new AbortController();
    const reason = new Error("attempt stopped");
    const seen = withCallSignal({ timeoutMs: 60_000, parents: [quiet.signal, undefined, parent.signal] }, (signal) => {
      const aborted = abortOf(signal);
      parent.abort(reason);
      return aborted;
    });
    await expect(seen).resolves.toBe(reason);
  });

  it("aborts the call with a TimeoutError when its time is up", async () => {
    const reason = await withCallSignal({ timeoutMs: 20 }, abortOf);
    expect(reason).toMatchObject({ name: "TimeoutError" });
  });

  it("starts a call whose parent has already aborted with its signal aborted", async () => {
    const parent = new AbortController();
    parent.abort(new Error("gone"));
    const aborted = await withCallSignal({ parents: [parent.signal] }, async (signal) => signal.aborted && signal.reason);
    expect(aborted).toMatchObject({ message: "gone" });
  });

  it("lets go of its parents and its timer once the call has settled", async () => {
    const parent = new AbortController();
    let kept: AbortSignal | undefined;
    await withCallSignal({ timeoutMs: 20, parents: [parent.signal] }, async (signal) => void (kept = signal));
    parent.abort(new Error("late"));
    await new Promise((resolve) => setTimeout(resolve, 60));
    expect(kept?.aborted).toBe(false);
  });

  it("settles as the call does, its error included", async () => {
    await expect(withCallSignal({ timeoutMs: 1000 }, async () => "answer")).resolves.toBe("answer");
    await expect(withCallSignal({ timeoutMs: 1000 }, async () => Promise.reject(new Error("refused")))).rejects.toThrow("refused");
  });
});
