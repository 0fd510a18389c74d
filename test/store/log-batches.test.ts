import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type Database from "better-sqlite3";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { openDatabase } from "../../src/store/sqlite/db.ts";
import { SqliteTaskDataStore } from "../../src/store/sqlite/data-store.ts";

describe("a batch of log chunks", () => {
  let dir: string;
  let db: Database.Database;
  let data: SqliteTaskDataStore;
  beforeEach(() => {
    dir = mkdtempSync(join(tmpdir(), "orka-log-batches-"));
    db = openDatabase(join(dir, "orka.db"));
    data = new SqliteTaskDataStore(db);
  });
  afterEach(() => {
    db.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it("stores what each attempt wrote in it as one chunk, in order, however the attempts' chunks interleave", () => {
    const heard: string[] = [];
    data.onLog("default", "t", (chunk) => heard.push(chunk));
    const chunk = (task: string, attempt: number, text: string) => ({ namespace: "default", task, attempt, chunk: text });
    data.appendLogs([chunk("t", 1, "one "), chunk("other", 1, "x"), chunk("t", 1, "two "), chunk("t", 2, "again "), chunk("other", 1, "y"), chunk("t", 2, "done")]);

    expect(heard).toEqual(["one two ", "again done"]);
    expect(data.readLogs("default", "t").text).toBe("one two again done");
    expect(data.readLogs("default", "other").text).toBe("xy");
    expect(db.prepare("SELECT count(*) AS rows FROM logs").get()).toEqual({ rows: 3 });
    // A reader that resumes after what it saw reads the next batch only.
    const { lastId } = data.readLogs("default", "t");
    data.appendLogs([chunk("t", 2, " more")]);
    expect(data.readLogs("default", "t", lastId).text).toBe(" more");
  });
});
