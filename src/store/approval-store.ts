/** Human approvals of exact custom-tool calls. */

export const APPROVAL_STATUSES = ["pending", "approved", "declined", "expired", "cancelled"] as const;
export type ApprovalStatus = (typeof APPROVAL_STATUSES)[number];

export interface Approval {
  id: string;
  namespace: string;
  taskName: string;
  taskUID: string;
  iteration: number;
  action: string;
  targetTool: string;
  targetArgsDigest: string;
  targetSpecDigest: string;
  targetArgsPreview: string;
  riskSummary?: string;
  severity: "warning" | "critical";
  status: ApprovalStatus;
  createdAt: string;
  decisionTime?: string;
  decisionReason?: string;
  decisionActor?: string;
  executedAttempt?: string;
}

export interface ApprovalStore {
  /** Records a request; the same call (same id) returns the existing approval. */
  request(approval: Omit<Approval, "status" | "createdAt">): Approval;
  get(namespace: string, id: string): Approval | undefined;
  /** Whether anyone was asked to approve a call of this Tool by a Task of this name (any of its uids). */
  askedFor(namespace: string, task: string, tool: string): boolean;
  listForTask(namespace: string, task: string, taskUID?: string): Approval[];
  /** A namespace's approvals, newest first, optionally of one status. */
  list(namespace: string, status?: ApprovalStatus, limit?: number): Approval[];
  decide(namespace: string, id: string, decision: { status: "approved" | "declined"; reason?: string; actor: string }): Approval;
  /** Marks an approved call as used by an attempt; false when that attempt already used it. */
  markExecuted(namespace: string, id: string, attemptId: string): boolean;
  cancelPending(namespace: string, task: string): void;
  /** Expires this Task's pending approvals requested before `before`; returns those it expired. */
  expirePending(namespace: string, task: string, before: string): Approval[];
}
