/** Refused calls, and grant failures that audit mode let through. */
export type AuditOutcome = "refused" | "allowed-in-audit-mode";

/** Refused requests, kept for people to review (who tried what, and why it was refused). */
export interface AuditEvent {
  id: number;
  at: string;
  namespace?: string;
  principal?: string;
  method: string;
  path: string;
  status: number;
  reason: string;
  outcome?: AuditOutcome;
}

export interface AuditStore {
  record(event: Omit<AuditEvent, "id" | "at">): void;
  recent(limit: number): AuditEvent[];
}
