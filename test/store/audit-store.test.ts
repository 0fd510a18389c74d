import { describe, expect, it } from "vitest";
import { openDatabase } from "../../src/store/sqlite/db.ts";
import { SqliteAuditStore } from "../../src/store/sqlite/audit-store.ts";

const DAY_MS = 86_400_000;
const DEFAULT_MAX_ROWS = 100_000;
const RECORDS = 300;

/** An in-memory log (so what is measured is the statements, not the disk) already holding `rows` distinct refusals. */
function seededDatabase(rows: number) {
  const db = openDatabase(":memory:");
  db.prepare(
    `WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < @rows)
     INSERT INTO audit_events (at, last_at, principal, method, path, status, reason, coalesce_key, seq)
     SELECT @now, @now, 'seed', 'GET', '/api/v1/tasks', 403, 'seeded ' || i, 'seed-' || i, i FROM n`,
  ).run({ rows, now: new Date().toISOString() });
  return db;
}

/** Milliseconds one repeated refusal (one row, counted up) costs to record and prune after, in a log of `rows` rows. */
function msPerRecord(rows: number): number {
  const db = seededDatabase(rows);
  try {
    const audit = new SqliteAuditStore(db, { maxAgeMs: DAY_MS, maxRows: DEFAULT_MAX_ROWS });
    const started = performance.now();
    for (let i = 0; i < RECORDS; i++) audit.record({ method: "GET", path: "/api/v1/tasks/t", status: 403, principal: "alice", reason: "forbidden" });
    return (performance.now() - started) / RECORDS;
  } finally {
    db.close();
  }
}

describe("audit log pruning", () => {
  it("costs about the same per write in a log of 90,000 rows as in one of 900, below the default row limit", () => {
    // The better of two runs each, so one busy moment of a shared machine does not decide.
    const small = Math.min(msPerRecord(900), msPerRecord(900));
    const large = Math.min(msPerRecord(90_000), msPerRecord(90_000));
    expect(large).toBeLessThan(small * 5 + 0.05);
  });
});
