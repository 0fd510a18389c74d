import type { Approval, ApprovalStatus, ApprovalStore } from "../approval-store.ts";
import { inTransaction, prepared, preparedWrite, type Db } from "./db.ts";

type Row = Record<string, unknown>;

function toApproval(row: Row): Approval {
  const approval: Approval = {
    id: row.id as string,
    namespace: row.namespace as string,
    taskName: row.task as string,
    taskUID: row.task_uid as string,
    iteration: row.iteration as number,
    action: row.action as string,
    targetTool: row.target_tool as string,
    targetArgsDigest: row.args_digest as string,
    targetSpecDigest: row.spec_digest as string,
    targetArgsPreview: row.args_preview as string,
    severity: row.severity as Approval["severity"],
    status: row.status as Approval["status"],
    createdAt: row.created_at as string,
  };
  for (const [key, column] of [["riskSummary", "risk_summary"], ["decisionTime", "decision_time"], ["decisionReason", "decision_reason"], ["decisionActor", "decision_actor"], ["executedAttempt", "executed_attempt"]] as const) {
    if (row[column] !== null && row[column] !== undefined) approval[key] = row[column] as string;
  }
  return approval;
}

export class SqliteApprovalStore implements ApprovalStore {
  private readonly db: Db;

  constructor(db: Db) {
    this.db = db;
  }

  request(approval: Omit<Approval, "status" | "createdAt">): Approval {
    preparedWrite(
      this.db,
      `INSERT OR IGNORE INTO approvals (id, namespace, task, task_uid, iteration, action, target_tool, args_digest, spec_digest, args_preview, risk_summary, severity, status, created_at)
       VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, 'pending', ?)`,
    ).run(
      approval.id, approval.namespace, approval.taskName, approval.taskUID, approval.iteration, approval.action, approval.targetTool,
      approval.targetArgsDigest, approval.targetSpecDigest, approval.targetArgsPreview, approval.riskSummary ?? null, approval.severity, new Date().toISOString(),
    );
    return this.get(approval.namespace, approval.id)!;
  }

  get(namespace: string, id: string): Approval | undefined {
    const row = prepared<[string, string], Row>(this.db, "SELECT * FROM approvals WHERE namespace = ? AND id = ?").get(namespace, id);
    return row && toApproval(row);
  }

  askedFor(namespace: string, task: string, tool: string): boolean {
    const sql = "SELECT 1 FROM approvals WHERE namespace = ? AND task = ? AND target_tool = ? LIMIT 1";
    return prepared<[string, string, string], unknown>(this.db, sql).get(namespace, task, tool) !== undefined;
  }

  listForTask(namespace: string, task: string, taskUID?: string): Approval[] {
    return prepared<[string, string], Row>(this.db, "SELECT * FROM approvals WHERE namespace = +? AND task = +? ORDER BY created_at, id")
      .all(namespace, task)
      .map(toApproval)
      .filter((a) => !taskUID || a.taskUID === taskUID);
  }

  list(namespace: string, status?: ApprovalStatus, limit = 200): Approval[] {
    const sql = `SELECT * FROM approvals WHERE namespace = +?${status ? " AND status = +?" : ""} ORDER BY created_at DESC, id LIMIT +?`;
    const params = status ? [namespace, status, limit] : [namespace, limit];
    return prepared<unknown[], Row>(this.db, sql).all(...params).map(toApproval);
  }

  decide(namespace: string, id: string, decision: { status: "approved" | "declined"; reason?: string; actor: string }): Approval {
    preparedWrite(this.db, "UPDATE approvals SET status = ?, decision_reason = ?, decision_actor = ?, decision_time = ? WHERE namespace = ? AND id = ? AND status = 'pending'")
      .run(decision.status, decision.reason ?? null, decision.actor, new Date().toISOString(), namespace, id);
    return this.get(namespace, id)!;
  }

  markExecuted(namespace: string, id: string, attemptId: string): boolean {
    const result = preparedWrite(this.db, "UPDATE approvals SET executed_attempt = ? WHERE namespace = ? AND id = ? AND status = 'approved' AND (executed_attempt IS NULL OR executed_attempt != ?)")
      .run(attemptId, namespace, id, attemptId);
    return result.changes > 0;
  }

  expirePending(namespace: string, task: string, before: string): Approval[] {
    const expired = this.listForTask(namespace, task).filter((a) => a.status === "pending" && a.createdAt < before);
    const statement = prepared(this.db, "UPDATE approvals SET status = 'expired', decision_time = ?, decision_actor = 'orka' WHERE namespace = ? AND id = ? AND status = 'pending'");
    const at = new Date().toISOString();
    inTransaction(this.db, () => {
      for (const approval of expired) statement.run(at, namespace, approval.id);
    });
    return expired.map((a) => this.get(namespace, a.id)!);
  }

  cancelPending(namespace: string, task: string): void {
    preparedWrite(this.db, "UPDATE approvals SET status = 'cancelled', decision_time = ? WHERE namespace = ? AND task = ? AND status = 'pending'").run(new Date().toISOString(), namespace, task);
  }
}
