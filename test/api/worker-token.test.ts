import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { authorizeWorker, authorizeWorkerInNamespace, runningAttemptOf } from "../../src/api/auth.ts";
import { hashToken } from "../../src/store/data-store.ts";
import { tempStore } from "../helpers/store.ts";

const attemptOf = (task: string) => ({ id: `attempt-${task}`, namespace: "default", task, taskUid: `uid-${task}`, number: 1, allowedTools: [] });
const calling = (token: string) => ({ headers: { authorization: `Bearer ${token}` } });

// A request's token is looked up at several steps of its way in (the scrub, the effect ledger, the route):
// each step must find the attempt that token names, as it stands at that step.
describe("the attempt a worker's token names", () => {
  let store: ReturnType<typeof tempStore>;
  beforeEach(() => {
    store = tempStore();
    store.data.createAttempt(attemptOf("first"), hashToken("token-first"));
    store.data.createAttempt(attemptOf("second"), hashToken("token-second"));
  });
  afterEach(() => store.close());

  it("is each request's own, however often and in whatever order they are asked", () => {
    const first = calling("token-first");
    const second = calling("token-second");
    expect(authorizeWorker(store.data, first, "default", "first").id).toBe("attempt-first");
    expect(authorizeWorker(store.data, second, "default", "second").id).toBe("attempt-second");
    expect(runningAttemptOf(store.data, first)?.id).toBe("attempt-first");
    expect(authorizeWorkerInNamespace(store.data, second, "default").id).toBe("attempt-second");
    expect(() => authorizeWorker(store.data, second, "default", "first")).toThrow("token is not valid for task first");
    expect(() => authorizeWorker(store.data, calling("token-nobody"), "default", "first")).toThrow("invalid token");
  });

  it("is read afresh at each step: an attempt that ends while its request is on its way is refused at the next", () => {
    const request = calling("token-first");
    expect(runningAttemptOf(store.data, request)?.state).toBe("running");
    store.data.finishAttempt("attempt-first", { state: "failed", exitCode: 1, reason: "killed" });
    expect(runningAttemptOf(store.data, request)).toBeUndefined();
    expect(() => authorizeWorker(store.data, request, "default", "first")).toThrow("attempt is no longer running");
  });

  it("is none for a malformed header: the route refuses it as unauthenticated", () => {
    const malformed = { headers: { authorization: "Basic token-first" } };
    expect(runningAttemptOf(store.data, malformed)).toBeUndefined();
    expect(() => authorizeWorker(store.data, malformed, "default", "first")).toThrow("invalid authorization header format");
    expect(() => authorizeWorker(store.data, { headers: {} }, "default", "first")).toThrow("missing authorization header");
  });
});
