import Database from "better-sqlite3";
import { describe, expect, it } from "vitest";
import { READINESS_TTL_MS, storeWriteFailure, StoreWritability } from "../../src/store/sqlite/db.ts";

describe("store write failures", () => {
  it("turns a read-only, full or failing disk into a 503 that says what to fix, and leaves other errors alone", () => {
    const fix = "make the data directory writable and give it free space; reads still work";
    for (const [code, reason] of [
      ["SQLITE_READONLY", "the database is read-only"],
      ["SQLITE_READONLY_DBMOVED", "the database is read-only"],
      ["SQLITE_FULL", "the disk is full"],
      ["SQLITE_IOERR_WRITE", "a disk I/O error"],
    ]) {
      const failure = storeWriteFailure(new Database.SqliteError("attempt to write a readonly database", code));
      expect(failure?.httpStatus, code).toBe(503);
      expect(failure?.message, code).toBe(`the data store cannot be written (${reason}): ${fix}`);
    }
    expect(storeWriteFailure(new Database.SqliteError("UNIQUE constraint failed", "SQLITE_CONSTRAINT_UNIQUE"))).toBeUndefined();
    expect(storeWriteFailure(new Error("SQLITE_FULL"))).toBeUndefined();
  });
});

describe("store writability as /readyz reports it", () => {
  it("keeps a verdict for the interval, and takes a failed write's reason at once", () => {
    const db = new Database(":memory:");
    let now = 0;
    const writability = new StoreWritability(db, () => now);
    expect(writability.problem()).toBeUndefined();
    writability.noteFailure(new Database.SqliteError("UNIQUE constraint failed", "SQLITE_CONSTRAINT_UNIQUE"));
    expect(writability.problem()).toBeUndefined();
    writability.noteFailure(new Database.SqliteError("database or disk is full", "SQLITE_FULL"));
    expect(writability.problem()).toBe("the data store cannot be written (the disk is full): make the data directory writable and give it free space; reads still work");
    now += READINESS_TTL_MS;
    expect(writability.problem()).toBeUndefined();
    db.close();
  });
});
