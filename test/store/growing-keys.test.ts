import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import Database from "better-sqlite3";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { openDatabase } from "../../src/store/sqlite/db.ts";
import { SqliteTaskDataStore } from "../../src/store/sqlite/data-store.ts";
import { databaseBefore } from "../helpers/store.ts";

const event = (summary: string) => ({ type: "Note", summary });

describe("event and log numbers", () => {
  let dir: string;
  let db: Database.Database;
  let data: SqliteTaskDataStore;
  beforeEach(() => {
    dir = mkdtempSync(join(tmpdir(), "orka-keys-"));
    db = openDatabase(join(dir, "orka.db"));
    data = new SqliteTaskDataStore(db);
  });
  afterEach(() => {
    db.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it("never go back when the Task holding the highest ones is deleted and made again", () => {
    data.appendEvents("default", "other", [event("1")]);
    data.appendLog("default", "other", 1, "a");
    const [, newest] = data.appendEvents("default", "t", [event("2"), event("3")]);
    data.appendLogs([{ namespace: "default", task: "t", attempt: 1, chunk: "b" }, { namespace: "default", task: "t", attempt: 1, chunk: "c" }]);
    const { lastId } = data.readLogs("default", "t");

    data.deleteTaskData("default", "t");
    // A reader of the old Task that resumes after the numbers it saw still sees everything of the new one.
    const [again] = data.appendEvents("default", "t", [event("again")]);
    data.appendLog("default", "t", 1, "d");
    expect(again.seq).toBeGreaterThan(newest.seq);
    expect(data.listEvents("default", "t", { after: newest.seq }).map((e) => e.summary)).toEqual(["again"]);
    expect(data.readLogs("default", "t", lastId).text).toBe("d");

    // Twice over: the floor rises with each deletion.
    data.deleteTaskData("default", "t");
    expect(data.appendEvent("default", "t", event("third")).seq).toBeGreaterThan(again.seq);
  });

  it("go with a Task that has more than a delete batch of them, and the other Tasks' stay", () => {
    const many = 1_234; // more than two batches
    for (let i = 0; i < many; i++) {
      data.appendEvent("default", "long", event(`long ${i}`));
      data.appendEvent("default", "short", event(`short ${i}`));
    }
    for (let i = 0; i < many; i++) data.appendLog("default", "long", 1, `${i} `);
    const newest = data.appendEvent("default", "long", event("last"));
    const rows = (table: string, task: string) => db.prepare(`SELECT count(*) FROM ${table} WHERE task = ?`).pluck().get(task);
    expect([rows("events", "long"), rows("logs", "long")]).toEqual([many + 1, many]);
    data.deleteTaskData("default", "long");
    expect([rows("events", "long"), rows("logs", "long"), rows("events", "short")]).toEqual([0, 0, many]);
    expect(data.appendEvent("default", "long", event("again")).seq).toBeGreaterThan(newest.seq);
  });

  it("write no counter when added", () => {
    const counters = () => db.prepare("SELECT * FROM counters ORDER BY name").all();
    const before = counters();
    data.appendEvents("default", "t", [event("1"), event("2")]);
    data.appendLog("default", "t", 1, "a");
    expect(counters()).toEqual(before);
    expect(db.prepare("SELECT name FROM sqlite_sequence WHERE name IN ('events', 'logs')").all()).toEqual([]);
    expect(data.listEvents("default", "t").map((e) => e.seq)).toEqual([1, 2]);
  });

  it("carry on past the highest ever given when a database numbered by AUTOINCREMENT is upgraded", () => {
    db.close();
    const path = join(dir, "old.db");
    const { db: old } = databaseBefore(path, "events_seq_floor");
    const insertEvent = old.prepare("INSERT INTO events (namespace, task, type, severity, summary, created_at) VALUES ('default', ?, 'Note', 'info', ?, 'c')");
    insertEvent.run("kept", "kept");
    for (let i = 0; i < 4; i++) insertEvent.run("gone", `gone ${i}`);
    const insertLog = old.prepare("INSERT INTO logs (namespace, task, attempt, chunk) VALUES ('default', ?, 1, ?)");
    insertLog.run("kept", "kept");
    insertLog.run("gone", "gone");
    old.exec("DELETE FROM events WHERE task = 'gone'; DELETE FROM logs WHERE task = 'gone'");
    const shapeBefore = shape(old);
    old.close();

    db = openDatabase(path);
    data = new SqliteTaskDataStore(db);
    expect(data.listEvents("default", "kept")).toEqual([expect.objectContaining({ seq: 1, summary: "kept" })]);
    expect(data.appendEvent("default", "gone", event("new")).seq).toBe(6);
    data.appendLog("default", "gone", 1, "new");
    expect(data.readLogs("default", "gone", 2)).toEqual({ text: "new", lastId: 3 });
    // The same columns in the same order, the same indexes; only AUTOINCREMENT is gone.
    expect(shape(db)).toEqual(shapeBefore);
    expect(db.prepare("SELECT sql FROM sqlite_schema WHERE name IN ('events', 'logs')").all()).toEqual([
      { sql: expect.not.stringContaining("AUTOINCREMENT") },
      { sql: expect.not.stringContaining("AUTOINCREMENT") },
    ]);
  });
});

/** The columns (name, type, NOT NULL, default, place in the key) and the indexes of the events and logs tables. */
function shape(db: Database.Database) {
  return {
    columns: ["events", "logs"].map((table) => db.pragma(`table_info(${table})`)),
    indexes: db.prepare("SELECT name, sql FROM sqlite_schema WHERE type = 'index' AND tbl_name IN ('events', 'logs') ORDER BY name").all(),
  };
}
