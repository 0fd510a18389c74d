import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { prepared } from "../../src/store/sqlite/db.ts";
import { tempStore } from "../helpers/store.ts";

describe("prepared statements", () => {
  let store: ReturnType<typeof tempStore>;
  beforeEach(() => (store = tempStore()));
  afterEach(() => store.close());

  it("compiles a SQL text once per connection and runs it with each call's parameters", () => {
    const sql = "SELECT ? + ? AS sum";
    const first = prepared<[number, number], { sum: number }>(store.db, sql);
    expect(prepared(store.db, sql)).toBe(first);
    expect(first.get(1, 2)).toEqual({ sum: 3 });
    expect(prepared<[number, number], { sum: number }>(store.db, sql).get(5, 5)).toEqual({ sum: 10 });
    const other = tempStore();
    try {
      expect(prepared(other.db, sql)).not.toBe(first);
    } finally {
      other.close();
    }
  });

  it("keeps a bounded number of texts, dropping the oldest", () => {
    const oldest = prepared(store.db, "SELECT 0");
    for (let i = 1; i <= 500; i++) prepared(store.db, `SELECT ${i}`);
    expect(prepared(store.db, "SELECT 0")).not.toBe(oldest);
    expect(prepared<[], { n: number }>(store.db, "SELECT 1 AS n").get()).toEqual({ n: 1 });
  });
});
