import Database from "better-sqlite3";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { inTransaction } from "../../src/store/sqlite/db.ts";

describe("inTransaction", () => {
  let db: Database.Database;
  const rows = () => db.prepare("SELECT v FROM t ORDER BY v").pluck().all();
  const insert = (v: number) => db.prepare("INSERT INTO t (v) VALUES (?)").run(v);

  beforeEach(() => {
    db = new Database(":memory:");
    db.exec("CREATE TABLE t (v INTEGER)");
  });
  afterEach(() => db.close());

  it("commits what its body wrote and returns what the body returns", () => {
    expect(inTransaction(db, () => (insert(1), insert(2), "done"))).toBe("done");
    expect(db.inTransaction).toBe(false);
    expect(rows()).toEqual([1, 2]);
  });

  it("undoes the whole body when it throws, and the error reaches the caller", () => {
    expect(() => inTransaction(db, () => (insert(1), insert(2), JSON.parse("{")))).toThrow(SyntaxError);
    expect(db.inTransaction).toBe(false);
    expect(rows()).toEqual([]);
  });

  it("inside another transaction, undoes only its own writes when it throws", () => {
    inTransaction(db, () => {
      insert(1);
      expect(() => inTransaction(db, () => (insert(2), JSON.parse("{")))).toThrow(SyntaxError);
      insert(3);
    });
    expect(rows()).toEqual([1, 3]);
  });

  it("refuses a body that returns a promise, writing nothing", () => {
    expect(() => inTransaction(db, async () => insert(1))).toThrow(/promise/);
    expect(rows()).toEqual([]);
  });
});
