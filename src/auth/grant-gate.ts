import { redact } from "../policy/redact.ts";
import type { AuditStore } from "../store/audit-store.ts";
import type { Logger } from "../util/logger.ts";
import { credentialFailures, GrantRefused, operationFailures, taskGrantFailures, toolCallFailures, type GrantFailure, type TaskFacts } from "./grants.ts";
import type { GrantMode, TransactionClaims } from "./transaction-token.ts";

/** Where a grant check happened, for the audit log. */
export interface GrantSite {
  method: string;
  path: string;
  principal?: string;
  namespace?: string;
}

/**
 * Applies the configured mode to transaction-token grant checks: off does nothing, audit records
 * and lets the call through, enforce refuses with 403. Only Tasks and callers with a transaction are checked.
 */
export class GrantGate {
  readonly mode: GrantMode;
  private readonly overrides: Record<string, string[]>;
  private readonly audit: AuditStore;
  private readonly logger: Logger;

  constructor(settings: { mode: GrantMode; scopeOverrides: Record<string, string[]> } | undefined, audit: AuditStore, logger: Logger) {
    this.mode = settings?.mode ?? "off";
    this.overrides = settings?.scopeOverrides ?? {};
    this.audit = audit;
    this.logger = logger;
  }

  operation(claims: TransactionClaims, action: string, scope: string | undefined, namespace: string | undefined, site: GrantSite): void {
    this.apply(action, () => operationFailures(claims, scope, namespace, this.overrides), site);
  }

  /** A Task about to be created (by the API, a chat tool or delegation) against the creator's transaction. */
  task(claims: TransactionClaims, action: string, facts: TaskFacts, site: GrantSite, message?: (failures: GrantFailure[]) => string): void {
    this.apply(action, () => taskGrantFailures(claims, facts, this.overrides), site, message);
  }

  /**
   * A Task's own stamped grant, checked again when an attempt starts, since its Agent, Tools or Providers may
   * have changed since creation. Enforce mode refuses it, for the Task's owner to read in its status (with what
   * is no longer covered) and in the audit log; audit mode records it and lets the attempt start (the log's
   * coalescing keeps a retried Task's repeats to one row a minute).
   */
  attemptStart(claims: TransactionClaims, facts: TaskFacts, site: GrantSite): void {
    try {
      this.task(claims, "startTask", facts, site, (failures) => `context token is not authorized for startTask: ${failures.map((f) => f.detail).join("; ")}`);
    } catch (err) {
      if (err instanceof GrantRefused) this.audit.record({ ...site, status: 403, reason: redact(err.auditReason) });
      throw err;
    }
  }

  /** One tool call of a Task with a stamped transaction. */
  toolCall(claims: TransactionClaims, tool: string, site: GrantSite): void {
    this.apply("useTool", () => toolCallFailures(claims, tool), site, (failures) => failures[0].detail);
  }

  /** A credential about to be used for a Task with a stamped transaction. */
  credentials(claims: TransactionClaims, action: string, namespace: string, secrets: string[], site: GrantSite): void {
    this.apply(action, () => credentialFailures(claims, namespace, secrets, this.overrides), site);
  }

  /** Compatible endpoints that run tools server-side need `orka:tools:use`, and every offered tool in the grant. */
  offeredTools(claims: TransactionClaims, action: string, tools: readonly string[], site: GrantSite): void {
    this.apply(action, () => [...operationFailures(claims, "orka:tools:use", undefined, this.overrides), ...tools.flatMap((t) => toolCallFailures(claims, t))], site);
  }

  /** Whether a listing shows a tool to this caller: outside the grant it is hidden (except in off mode). */
  showsTool(claims: TransactionClaims | undefined, tool: string): boolean {
    return !claims || this.mode === "off" || toolCallFailures(claims, tool).length === 0;
  }

  private apply(action: string, check: () => GrantFailure[], site: GrantSite, message?: (failures: GrantFailure[]) => string): void {
    if (this.mode === "off") return;
    const failures = check();
    if (failures.length === 0) return;
    const reason = redact(failures.map((f) => `${f.reason}: ${f.detail}`).join("; "));
    if (this.mode === "enforce") throw new GrantRefused(action, failures, message?.(failures));
    this.logger.warn({ action, reasons: failures.map((f) => f.reason), path: site.path }, "transaction grant failure allowed in audit mode");
    this.audit.record({ ...site, status: 200, reason: `${action}: ${reason}`, outcome: "allowed-in-audit-mode" });
  }
}
