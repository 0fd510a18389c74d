import Fastify from "fastify";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import type { ApiContext } from "../../src/api/context.ts";
import { registerEffectLedger } from "../../src/api/internal/effect-ledger.ts";
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
    const app = Fastify();
    registerEffectLedger(app, { data: store.data, journal, gate } as unknown as ApiContext);
    const acted: string[] = [];
    app.post("/internal/v1/tools/:ns/:task/:name", async () => {
      acted.push("called the service");
      return { result: "done" };
    });
    store.data.createAttempt({ id: "t-1", namespace: "default", task: "t", taskUid: "uid-1", number: 1, allowedTools: [] }, sha256Hex("attempt-token"));

    gate.close(); // the call's start is written; its commit comes at the end of the turn
    const answer = app.inject({
      method: "POST",
      url: "/internal/v1/tools/default/t/echo",
      headers: { authorization: "Bearer attempt-token", "idempotency-key": "a".repeat(64), "content-type": "application/json" },
      payload: {},
    });
    for (let turn = 0; turn < 5; turn++) await new Promise((resolve) => setImmediate(resolve));
    expect(acted).toEqual([]);
    expect(journal.effect(`uid-1:${"a".repeat(64)}`)?.state).toBe("started");

    gate.open();
    expect((await answer).json()).toEqual({ result: "done" });
    expect(acted).toEqual(["called the service"]);
    await app.close();
  });
});
