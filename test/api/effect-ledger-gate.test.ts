import { afterEach, beforeEach, describe, expect, it } from "vitest";
import type { ApiContext } from "../../src/api/context.ts";
import { answerWorkerRequest } from "../../src/api/internal/worker-pipeline.ts";
import type { WorkerRoute } from "../../src/api/internal/worker-route.ts";
import { SqliteJournalStore } from "../../src/store/sqlite/journal-store.ts";
import { sha256Hex } from "../../src/util/hash.ts";
import { HeldGate } from "../helpers/held-gate.ts";
import { tempStore } from "../helpers/store.ts";

describe("a ledgered call's effect", () => {
  let store: ReturnType<typeof tempStore>;
  beforeEach(() => (store = tempStore()));
  afterEach(() => store.close());

  it("happens only once the commit that records its start has been made", async () => {
    const gate = new HeldGate();
    const journal = new SqliteJournalStore(store.db);
    const ctx = { data: store.data, journal, gate, secrets: { redactBody: (_ns: string, _task: string, body: unknown) => body } } as unknown as ApiContext;
    const acted: string[] = [];
    const route: WorkerRoute = {
      method: "POST",
      url: "/tools/:ns/:task/:name",
      handle: () => {
        acted.push("called the service");
        return { result: "done" };
      },
    };
    store.data.createAttempt({ id: "t-1", namespace: "default", task: "t", taskUid: "uid-1", number: 1, allowedTools: [] }, sha256Hex("attempt-token"));

    gate.close(); // the call's start is written; its commit comes at the end of the turn
    const answer = answerWorkerRequest(ctx, route, {
      method: "POST",
      route: "/internal/v1/tools/:ns/:task/:name",
      params: { ns: "default", task: "t", name: "echo" },
      query: {},
      headers: { authorization: "Bearer attempt-token", "idempotency-key": "a".repeat(64), "content-type": "application/json" },
      body: {},
      gone: () => new AbortController().signal,
      log: console as never,
    });
    for (let turn = 0; turn < 5; turn++) await new Promise((resolve) => setImmediate(resolve));
    expect(acted).toEqual([]);
    expect(journal.effect(`uid-1:${"a".repeat(64)}`)?.state).toBe("started");

    gate.open();
    expect(JSON.parse((await answer).text)).toEqual({ result: "done" });
    expect(acted).toEqual(["called the service"]);
  });
});
