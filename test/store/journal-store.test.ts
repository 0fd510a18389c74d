import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { SqliteJournalStore } from "../../src/store/sqlite/journal-store.ts";
import { tempStore } from "../helpers/store.ts";

describe("attempt journal and effect ledger", () => {
  let store: ReturnType<typeof tempStore>;
  let journal: SqliteJournalStore;
  const owner = { namespace: "default", task: "t", taskUid: "uid-1", attempt: 1 };
  const big = { role: "user", content: "x".repeat(10_000) };

  beforeEach(() => {
    store = tempStore();
    journal = new SqliteJournalStore(store.db);
  });
  afterEach(() => store.close());

  it("commits a step and the events sent with it together: a refused step leaves none of its events, and listeners hear only what was committed", () => {
    const heard: string[] = [];
    store.data.onEvent("default", "t", (event) => heard.push(event.summary));
    const step = (seq: number, content: string) => ({ run: 1, seq, kind: "response" as const, messages: [{ role: "assistant", content }], detail: {} });
    store.data.appendEventsWith("default", "t", [{ type: "ModelRequestCompleted", summary: "turn 1" }], () => journal.append(owner, step(1, "first")));
    expect(() => store.data.appendEventsWith("default", "t", [{ type: "ModelRequestCompleted", summary: "a different turn 1" }], () => journal.append(owner, step(1, "other")))).toThrow(/already written/);
    expect(store.data.listEvents("default", "t").map((event) => event.summary)).toEqual(["turn 1"]);
    expect(heard).toEqual(["turn 1"]);
    expect(journal.steps("uid-1", 1).map((s) => s.messages)).toEqual([[{ role: "assistant", content: "first" }]]);
  });

  it("stores each message once per Task, so a step costs only what is new in it", () => {
    const first = journal.append(owner, { run: 1, seq: 1, kind: "request", messages: [big], detail: { system: "s" } });
    expect(first.storedBytes).toBeGreaterThan(10_000);
    const answer = { role: "assistant", content: "ok" };
    const second = journal.append(owner, { run: 1, seq: 2, kind: "response", messages: [answer], detail: {} });
    expect(second.storedBytes).toBeLessThan(100);
    // The same message in another run of the same Task is not stored again.
    expect(journal.append(owner, { run: 2, seq: 1, kind: "request", messages: [big], detail: {} }).storedBytes).toBeLessThan(100);
    expect(journal.steps("uid-1", 1).map((s) => [s.seq, s.kind, s.messages])).toEqual([
      [1, "request", [big]],
      [2, "response", [answer]],
    ]);
    expect(journal.steps("uid-1", 1)[0].detail).toEqual({ system: "s" });
  });

  it("takes a repeated step as a no-op, and refuses a different step at a taken position, a gap or no position", () => {
    const step = { run: 1, seq: 1, kind: "request" as const, messages: [big], detail: {} };
    journal.append(owner, step);
    expect(journal.append(owner, step).storedBytes).toBe(0);
    expect(() => journal.append(owner, { ...step, messages: [{ role: "user", content: "other" }] })).toThrow("journal step 1 of run 1 is already written");
    expect(() => journal.append(owner, { ...step, seq: 3 })).toThrow("journal step 3 does not follow step 1");
    expect(() => journal.append(owner, { ...step, run: 2, seq: 0 })).toThrow("journal step 0 is not a step number: steps are numbered from 1");
    expect(() => journal.checkNextStep("uid-1", 1, 1)).toThrow("journal step 1 of run 1 is already written");
    expect(() => journal.checkNextStep("uid-1", 1, 3)).toThrow("journal step 3 does not follow step 1");
    expect(() => journal.checkNextStep("uid-1", 1, 2)).not.toThrow();
    expect(journal.steps("uid-1", 1)).toHaveLength(1);
    expect(journal.steps("uid-1", 2)).toHaveLength(0);
    // A refused step leaves none of its messages stored: the next step that carries one pays for it.
    const other = { role: "user", content: "o".repeat(5_000) };
    expect(() => journal.append(owner, { ...step, seq: 3, messages: [other] })).toThrow("journal step 3 does not follow step 1");
    expect(journal.append(owner, { ...step, seq: 2, messages: [other] }).storedBytes).toBeGreaterThan(5_000);
  });

  it("keeps effects by key: begun once, finished with a reply, removed with the Task", () => {
    expect(journal.beginEffect({ namespace: "default", task: "t" }, "k1", "delegate_task")).toBe(true);
    expect(journal.beginEffect({ namespace: "default", task: "t" }, "k1", "delegate_task")).toBe(false);
    expect(journal.effect("k1")).toEqual({ key: "k1", tool: "delegate_task", state: "started", result: undefined });
    journal.finishEffect("k1", '{"status":201}');
    expect(journal.effect("k1")).toMatchObject({ state: "done", result: '{"status":201}' });
    journal.append(owner, { run: 1, seq: 1, kind: "request", messages: [big], detail: {} });
    journal.deleteTask("default", "t");
    expect(journal.effect("k1")).toBeUndefined();
    expect(journal.steps("uid-1", 1)).toEqual([]);
  });

  it("removes a Task's steps, messages and effects beyond a delete batch, and no other Task's", () => {
    const many = 1_234; // more than two batches
    for (let seq = 1; seq <= many; seq++) {
      journal.append(owner, { run: 1, seq, kind: "response", messages: [{ role: "assistant", content: `step ${seq}` }], detail: {} });
      journal.beginEffect({ namespace: "default", task: "t" }, `t-${seq}`, "lookup");
    }
    journal.beginEffect({ namespace: "default", task: "other" }, "other-1", "lookup");
    journal.deleteTask("default", "t");
    const rows = (table: string) => store.db.prepare(`SELECT count(*) FROM ${table} WHERE task = 't'`).pluck().get();
    expect(["journal_steps", "journal_segments", "effects"].map(rows)).toEqual([0, 0, 0]);
    expect(journal.effect("other-1")).toMatchObject({ state: "started" });
  });

  it("keeps the digest of what a call began with, through its finish", () => {
    journal.beginEffect({ namespace: "default", task: "t" }, "k2", "lookup", "sha256:args");
    journal.finishEffect("k2", '{"text":"ok","isError":false}');
    expect(journal.effect("k2")).toEqual({ key: "k2", tool: "lookup", state: "done", result: '{"text":"ok","isError":false}', payloadDigest: "sha256:args" });
  });
});
