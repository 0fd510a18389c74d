import type { AuditEvent, AuditOutcome, AuditStore } from "../audit-store.ts";
import type { Db } from "./db.ts";

export class SqliteAuditStore implements AuditStore {
  private readonly db: Db;

  constructor(db: Db) {
    this.db = db;
  }

  record(event: Omit<AuditEvent, "id" | "at">): void {
    this.db
      .prepare("INSERT INTO audit_events (at, namespace, principal, method, path, status, reason, outcome) VALUES (?, ?, ?, ?, ?, ?, ?, ?)")
      .run(new Date().toISOString(), event.namespace ?? null, event.principal ?? null, event.method, event.path, event.status, event.reason, event.outcome ?? "refused");
  }

  recent(limit: number): AuditEvent[] {
    return this.db
      .prepare<[number], Record<string, unknown>>("SELECT * FROM audit_events ORDER BY id DESC LIMIT ?")
      .all(limit)
      .map((row) => ({
        id: row.id as number,
        at: row.at as string,
        ...(row.namespace ? { namespace: row.namespace as string } : {}),
        ...(row.principal ? { principal: row.principal as string } : {}),
        method: row.method as string,
        path: row.path as string,
        status: row.status as number,
        reason: row.reason as string,
        outcome: row.outcome as AuditOutcome,
      }));
  }

}
