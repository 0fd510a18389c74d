import type { AuditEvent, AuditOutcome, AuditRecord, AuditStore } from "../audit-store.ts";
import { sha256Hex } from "../../util/hash.ts";
import type { Db } from "./db.ts";

export interface AuditLimits {
  /** Rows whose latest refusal is older than this are deleted. */
  maxAgeMs: number;
  /** At most this many rows are kept, the newest. */
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
  private readonly recordAndPrune: (event: AuditRecord) => void;

  constructor(db: Db, limits: AuditLimits) {
    this.limits = { coalesceWindowMs: DEFAULT_COALESCE_WINDOW_MS, ...limits };
    this.upsert = db.prepare(`
      INSERT INTO audit_events (at, last_at, namespace, principal, client, method, path, status, reason, outcome, coalesce_key, seq)
      VALUES (@at, @at, @namespace, @principal, @client, @method, @path, @status, @reason, @outcome, @key, (SELECT COALESCE(MAX(seq), 0) + 1 FROM audit_events))
      ON CONFLICT (coalesce_key) DO UPDATE SET count = count + 1, last_at = excluded.last_at, method = excluded.method, path = excluded.path, seq = excluded.seq`);
    this.pruneByAge = db.prepare("DELETE FROM audit_events WHERE last_at < ?");
    this.pruneByCount = db.prepare("DELETE FROM audit_events WHERE seq <= (SELECT seq FROM audit_events ORDER BY seq DESC LIMIT 1 OFFSET ?)");
    this.newest = db.prepare("SELECT * FROM audit_events ORDER BY seq DESC LIMIT ?");
    this.recordAndPrune = db.transaction((event: AuditRecord) => {
      const now = Date.now();
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
      });
      this.pruneByAge.run(new Date(now - this.limits.maxAgeMs).toISOString());
      this.pruneByCount.run(this.limits.maxRows);
    });
  }

  record(event: AuditRecord): void {
    this.recordAndPrune(event);
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

  /** The same client refused the same way on the same route in the same window. */
  private coalesceKey(event: AuditRecord, now: number): string {
    const window = Math.floor(now / this.limits.coalesceWindowMs);
    const { client, method, route, path, status, reason, outcome, principal, namespace } = event;
    return sha256Hex(JSON.stringify([window, client, method, route ?? path, status, reason, outcome ?? "refused", principal, namespace]));
  }
}
