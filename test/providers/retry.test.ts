import { describe, expect, it } from "vitest";
import { ModelApiError, type ModelClient, type ModelRequest } from "../../src/providers/model.ts";
import { CALL_BUDGET_DEADLINES, withRetries } from "../../src/providers/retry.ts";

const request: ModelRequest = { model: "m", messages: [{ role: "user", content: "hi" }], tools: [], maxTokens: 10 };

/** A provider that answers every try with `fault` (or never, with `hang`), counting the tries. */
function faultyProvider(fault: ModelApiError | "hang") {
  const provider = {
    tries: 0,
    client: {
      provider: "test",
      complete: () => {
        provider.tries++;
        return fault === "hang" ? new Promise<never>(() => {}) : Promise.reject(fault);
      },
    } satisfies ModelClient,
  };
  return provider;
}

/**
 * A call to a provider answering `fault`, with a minute's deadline, stopped by its caller 20 ms in: it must
 * fail with the caller's reason. Answers whether it ended within 2 s, and how many tries it made.
 */
async function stoppedDuringCall(fault: ModelApiError | "hang") {
  const provider = faultyProvider(fault);
  const caller = new AbortController();
  const call = withRetries(provider.client, { baseDelayMs: 1, timeoutMs: 60_000 }).complete({ ...request, signal: caller.signal });
  const started = Date.now();
  setTimeout(() => caller.abort(new Error("the attempt was stopped")), 20);
  await expect(call).rejects.toThrow("the attempt was stopped");
  return { endedWithin2s: Date.now() - started < 2_000, tries: provider.tries };
}

describe("model call retries", () => {
  it("ends a call whose Retry-After would outlast the call's budget with the provider's own error, without waiting it out", async () => {
    const timeoutMs = 100;
    const provider = faultyProvider(new ModelApiError("provider returned HTTP 429: slow down", 429, { retryAfterMs: 20_000 }));
    const started = Date.now();
    await expect(withRetries(provider.client, { baseDelayMs: 1, timeoutMs }).complete(request)).rejects.toThrow("provider returned HTTP 429: slow down");
    expect(Date.now() - started).toBeLessThan(timeoutMs * CALL_BUDGET_DEADLINES + 1000);
    expect(provider.tries).toBe(1);
  });

  it("gives each silent try the deadline and retries it three times, inside the budget", async () => {
    const provider = faultyProvider("hang");
    const retries: number[] = [];
    const call = withRetries(provider.client, { baseDelayMs: 1, timeoutMs: 100, onRetry: (n) => retries.push(n) }).complete(request);
    await expect(call).rejects.toThrow("provider did not answer within 100 ms");
    expect([provider.tries, retries]).toEqual([4, [1, 2, 3]]);
  });

  it("ends a try at once when its caller stops it, with the caller's reason, even from a client that ignores the abort", async () => {
    expect(await stoppedDuringCall("hang")).toEqual({ endedWithin2s: true, tries: 1 });
  });

  it("ends at once a call whose caller had already stopped it, even with a client that ignores the abort", async () => {
    const provider = faultyProvider("hang");
    const stopped = AbortSignal.abort(new Error("the attempt was stopped"));
    const started = Date.now();
    await expect(withRetries(provider.client, { baseDelayMs: 1, timeoutMs: 60_000 }).complete({ ...request, signal: stopped })).rejects.toThrow("the attempt was stopped");
    expect(Date.now() - started).toBeLessThan(2_000);
    expect(provider.tries).toBe(0);
  });

  it("ends the wait before a retry at once when its caller stops it, with the caller's reason", async () => {
    expect(await stoppedDuringCall(new ModelApiError("provider returned HTTP 503: busy", 503, { retryAfterMs: 20_000 }))).toEqual({ endedWithin2s: true, tries: 1 });
  });

  it("reads a try cut at its deadline as silence, even from a client that fails at once when aborted", async () => {
    let tries = 0;
    const abortsAtOnce: ModelClient = {
      provider: "test",
      complete: ({ signal }) => {
        tries++;
        return new Promise((_resolve, reject) => signal?.addEventListener("abort", () => reject(new Error("aborted by the caller")), { once: true }));
      },
    };
    await expect(withRetries(abortsAtOnce, { baseDelayMs: 1, timeoutMs: 50 }).complete(request)).rejects.toThrow("provider did not answer within 50 ms");
    expect(tries).toBe(4);
  });
});
