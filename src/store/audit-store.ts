/** Refused calls, and grant failures that audit mode let through. */
export type AuditOutcome = "refused" | "allowed-in-audit-mode";

/**
 * Refused requests, kept for people to review (who tried what, and why it was refused). Repeats of the
 * same refusal of the same client in one window are one row with a count, so a flood cannot grow the log.
 */
export interface AuditEvent {
  id: number;
  /** The first refusal this row counts. */
  at: string;
  /** The latest one. */
  lastAt: string;
  count: number;
  namespace?: string;
  principal?: string;
  /** The caller's address, as the sign-in limiter counts it (an IPv6 address by its /64 network). */
  client?: string;
  /** Of the latest refusal. */
  method: string;
  path: string;
  status: number;
  reason: string;
  outcome?: AuditOutcome;
}

export interface AuditRecord extends Omit<AuditEvent, "id" | "at" | "lastAt" | "count"> {
  /** The route pattern (`/api/v1/tasks/:name`); refusals of no signed-in caller on one route coalesce whatever the concrete path. */
  route?: string;
}

export interface AuditStore {
  record(event: AuditRecord): void;
  /** The rows with the latest refusals first. */
  recent(limit: number): AuditEvent[];
}
