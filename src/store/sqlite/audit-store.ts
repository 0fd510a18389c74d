import type { AuditEvent, AuditOutcome, AuditRecord, AuditStore } from "../audit-store.ts";
import { sha256Hex } from "../../util/hash.ts";
import { inTransaction, type Db } from "./db.ts";

export interface AuditLimits {
  /** Rows whose latest refusal is older than this are deleted. */
  maxAgeMs: number;
  /** At most this many rows of refusals without a signed-in caller are kept, the newest, and as many of all others. */
  maxRows: number;
  /** Repeats within one window of this length coalesce into one row. */
  coalesceWindowMs?: number;
}

const DEFAULT_COALESCE_WINDOW_MS = 60_000;

export class SqliteAuditStore implements AuditStore {
  private readonly limits: Required<AuditLimits>;
  private readonly upsert: ReturnType<Db["prepare"]>;
  private readonly pruneByAge: ReturnType<Db["prepare"]>;
  private readonly pruneByCount: ReturnType<Db["prepare"]>;
  private readonly newest: ReturnType<Db["prepare"]>;
  private readonly db: Db;

  constructor(db: Db, limits: AuditLimits) {
    this.db = db;
    this.limits = { coalesceWindowMs: DEFAULT_COALESCE_WINDOW_MS, ...limits };
    // Each pool (anonymous or not) numbers its rows in insert order; a repeat keeps its row's number, so the newest
    // `maxRows` of a pool are exactly those numbered above its highest number minus `maxRows`.
    this.upsert = db.prepare(`
      INSERT INTO audit_events (at, last_at, namespace, principal, client, method, path, status, reason, outcome, coalesce_key, anonymous, seq)
      VALUES (@at, @at, @namespace, @principal, @client, @method, @path, @status, @reason, @outcome, @key, @anonymous,
        (SELECT COALESCE(MAX(seq), 0) + 1 FROM audit_events WHERE anonymous = @anonymous))
      ON CONFLICT (coalesce_key) DO UPDATE SET count = count + 1, last_at = excluded.last_at, method = excluded.method, path = excluded.path`);
    this.pruneByAge = db.prepare("DELETE FROM audit_events WHERE last_at < ?");
    this.pruneByCount = db.prepare(
      "DELETE FROM audit_events WHERE anonymous = @anonymous AND seq <= (SELECT MAX(seq) FROM audit_events WHERE anonymous = @anonymous) - @maxRows",
    );
    this.newest = db.prepare("SELECT * FROM audit_events ORDER BY last_at DESC, id DESC LIMIT +?");
  }

  record(event: AuditRecord): void {
    inTransaction(this.db, () => {
      const now = Date.now();
      const anonymous = event.principal === undefined ? 1 : 0;
      this.upsert.run({
        at: new Date(now).toISOString(),
        namespace: event.namespace ?? null,
        principal: event.principal ?? null,
        client: event.client ?? null,
        method: event.method,
        path: event.path,
        status: event.status,
        reason: event.reason,
        outcome: event.outcome ?? "refused",
        key: this.coalesceKey(event, now),
        anonymous,
      });
      this.pruneByAge.run(new Date(now - this.limits.maxAgeMs).toISOString());
      this.pruneByCount.run({ anonymous, maxRows: this.limits.maxRows });
    });
  }

  recent(limit: number): AuditEvent[] {
    return (this.newest.all(limit) as Record<string, unknown>[]).map((row) => ({
      id: row.id as number,
      at: row.at as string,
      lastAt: row.last_at as string,
      count: row.count as number,
      ...(row.namespace ? { namespace: row.namespace as string } : {}),
      ...(row.principal ? { principal: row.principal as string } : {}),
      ...(row.client ? { client: row.client as string } : {}),
      method: row.method as string,
      path: row.path as string,
      status: row.status as number,
      reason: row.reason as string,
      outcome: row.outcome as AuditOutcome,
    }));
  }

  /**
   * The same client refused the same way in the same window. A signed-in caller's refusals are told apart by
   * the concrete path and namespace; refusals of no caller coalesce per route whatever path or namespace they
   * name, or made-up values would be a row each.
   */
  private coalesceKey(event: AuditRecord, now: number): string {
    const window = Math.floor(now / this.limits.coalesceWindowMs);
    const { client, method, route, path, status, reason, outcome, principal, namespace } = event;
    const target = principal === undefined ? [route ?? path] : [path, namespace];
    return sha256Hex(JSON.stringify([window, client, method, status, reason, outcome ?? "refused", principal, ...target]));
  }
}
