import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import Database from "better-sqlite3";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { openDatabase } from "../../src/store/sqlite/db.ts";
import { migrations } from "../../src/store/sqlite/migrations.ts";
import { databaseBefore } from "../helpers/store.ts";

/** A row of each table the migration rebuilds, written as a database from before it held them. */
const rows: Record<string, Record<string, unknown>> = {
  resources: { kind: "Task", namespace: "default", name: "t", uid: "uid-t", resource_version: 3, body: JSON.stringify({ status: { phase: "Running" }, pad: "x".repeat(5000) }) },
  results: { namespace: "default", task: "t", body: "r".repeat(9000), created_at: "2026-01-01T00:00:00.000Z" },
  artifacts: { namespace: "default", task: "t", file: "out.bin", content: Buffer.alloc(20_000, 7), created_at: "2026-01-01T00:00:00.000Z" },
  plans: { namespace: "default", task: "t", iteration: 2, summary: "s", progress_pct: 40, goal_complete: 0, plan_document: "p".repeat(6000), created_at: "c", updated_at: "u" },
  approvals: {
    id: "a1", namespace: "default", task: "t", task_uid: "uid-t", iteration: 1, action: "call", target_tool: "x", args_digest: "d", spec_digest: "s",
    args_preview: "{}", risk_summary: null, severity: "high", status: "pending", created_at: "c", decision_time: null, decision_reason: null, decision_actor: null, executed_attempt: null,
  },
  journal_segments: { namespace: "default", task: "t", hash: "h1", body: "m".repeat(7000) },
  journal_steps: { namespace: "default", task: "t", task_uid: "uid-t", run: 1, seq: 1, kind: "model", segments: '["h1"]', detail: "{}", attempt: 1, created_at: "c" },
  effects: { key: "k1", namespace: "default", task: "t", tool: "x", state: "done", result: "e".repeat(8000), created_at: "c", updated_at: "u", payload_digest: "pd" },
};

describe("the migration to rowid tables", () => {
  let dir: string;
  beforeEach(() => {
    dir = mkdtempSync(join(tmpdir(), "orka-rowid-"));
  });
  afterEach(() => rmSync(dir, { recursive: true, force: true }));

  it("keeps every row, key and index of the tables it rebuilds, and reads a Task's approvals and attempts without a sort", () => {
    const path = join(dir, "orka.db");
    const { db: old, version: before } = databaseBefore(path, "CREATE TABLE resources_rowid");
    for (const [table, row] of Object.entries(rows)) {
      const columns = Object.keys(row);
      old.prepare(`INSERT INTO ${table} (${columns.join(", ")}) VALUES (${columns.map(() => "?").join(", ")})`).run(...Object.values(row));
    }
    const indexesBefore = indexes(old);
    const columnsBefore = columns(old);
    old.close();

    const upgrades: number[][] = [];
    const db = openDatabase(path, (from, to) => upgrades.push([from, to]));
    try {
      // The caller hears of the upgrade before it runs (the server says so in its log).
      expect(upgrades).toEqual([[before, migrations.length]]);
      for (const [table, row] of Object.entries(rows)) {
        // Only a rowid table has a rowid to select.
        expect(db.prepare(`SELECT rowid, * FROM ${table}`).all()).toEqual([{ rowid: 1, ...row }]);
      }
      // The same columns, types, NOT NULLs and keys; the same indexes, but for the redundant one dropped and
      // the approvals' index, which now also gives their order.
      expect(columns(db)).toEqual(columnsBefore);
      const { resources_by_name: dropped, approvals_by_task: widened, ...kept } = indexesBefore;
      expect(dropped).toBeDefined();
      expect(indexes(db)).toEqual({ ...kept, approvals_by_task: widened!.replace("created_at)", "created_at, id)") });
      // The keys still refuse a second row.
      expect(() => db.prepare("INSERT INTO resources (kind, namespace, name, uid, resource_version, body) VALUES ('Task', 'default', 't', 'other', 1, '{}')").run()).toThrow(/UNIQUE/);
      expect(() => db.prepare("INSERT INTO effects (key, namespace, task, tool, state, created_at, updated_at) VALUES ('k1', 'n', 't', 'x', 's', 'c', 'u')").run()).toThrow(/UNIQUE/);
      expect(plan(db, "SELECT body FROM resources WHERE kind = ? AND namespace = ? AND name = ?")).toEqual([expect.stringContaining("USING INDEX sqlite_autoindex_resources")]);
      // A Task's approvals and its latest attempt are read in index order, with no sort.
      expect(plan(db, "SELECT * FROM approvals WHERE namespace = ? AND task = ? ORDER BY created_at, id")).toEqual([expect.stringContaining("USING INDEX approvals_by_task")]);
      expect(plan(db, "SELECT * FROM attempts WHERE namespace = ? AND task = ? ORDER BY started_at DESC, number DESC LIMIT 1")).toEqual([
        expect.stringContaining("USING INDEX attempts_by_task"),
      ]);
    } finally {
      db.close();
    }
  });

  it("says nothing of an upgrade when it makes a new database", () => {
    const upgrades: number[][] = [];
    openDatabase(join(dir, "orka.db"), (from, to) => upgrades.push([from, to])).close();
    expect(upgrades).toEqual([]);
  });
});

/** How SQLite would run `sql`, a line per step. */
function plan(db: Database.Database, sql: string): string[] {
  const parameters = (sql.match(/\?/g) ?? []).map(() => "x");
  return (db.prepare(`EXPLAIN QUERY PLAN ${sql}`).all(...parameters) as { detail: string }[]).map((step) => step.detail);
}

const tableList = Object.keys(rows)
  .map((table) => `'${table}'`)
  .join(", ");

/** The named indexes of the rebuilt tables with their definitions (SQLite's own key indexes change names with the table kind). */
function indexes(db: Database.Database): Record<string, string> {
  const found = db.prepare(`SELECT name, sql FROM sqlite_master WHERE type = 'index' AND sql IS NOT NULL AND tbl_name IN (${tableList})`).all() as { name: string; sql: string }[];
  return Object.fromEntries(found.map(({ name, sql }) => [name, sql]));
}

/** Each rebuilt table's columns as SQLite reports them: name, type, NOT NULL, default, place in the key. */
function columns(db: Database.Database): Record<string, unknown> {
  return Object.fromEntries(Object.keys(rows).map((table) => [table, db.pragma(`table_info(${table})`)]));
}
