/** The shapes the dashboard reads from the API (a subset of the server's resources). */

export type Phase = "Pending" | "Running" | "Finalizing" | "Succeeded" | "Failed" | "Scheduled" | "Cancelled";
export const TERMINAL: readonly string[] = ["Succeeded", "Failed", "Cancelled"];

export interface Metadata {
  name: string;
  namespace: string;
  uid?: string;
  creationTimestamp?: string;
  labels?: Record<string, string>;
  annotations?: Record<string, string>;
}

export interface Resource<Spec = Record<string, unknown>, Status = Record<string, unknown>> {
  apiVersion: string;
  kind: string;
  metadata: Metadata;
  spec: Spec;
  status?: Status;
}

export interface TaskSpec {
  type: "ai" | "agent" | "container";
  agentRef?: { name: string };
  prompt?: string;
  ai?: { prompt?: string; model?: string; providerRef?: { name: string }; tools?: string[] };
  command?: string[];
  priority?: number;
  schedule?: string;
  requestedBy?: { username: string };
  workspace?: { gitRepo?: string; branch?: string; ref?: string; intent?: string; pushBranch?: string; publicationGitRepo?: string };
}

/** The checkout a Task's attempts share, frozen when its ref was resolved. */
export interface WorkspaceStatus {
  repository: string;
  branch?: string;
  ref?: string;
  baseSHA: string;
  resolvedAt?: string;
}

/** What Orka's publisher observed of the Task's change on the remote (not what a model claimed). */
export interface Delivery {
  state: string;
  outcome?: string;
  branch?: string;
  publicationRepository?: string;
  expectedCommitSHA?: string;
  verifiedRemoteSHA?: string;
  verifiedAt?: string;
  message?: string;
  prReceipt?: { number: number; url: string; state: string; headSHA: string };
}

export interface TaskStatus {
  phase?: Phase;
  message?: string;
  startTime?: string;
  completionTime?: string;
  attempts?: number;
  iteration?: number;
  resultRef?: { available: boolean };
  childTasks?: { name: string; agent?: string; phase: string }[];
  conditions?: { type: string; status: string; reason?: string; message?: string; lastTransitionTime?: string }[];
  workspace?: WorkspaceStatus;
  delivery?: Delivery;
}

export type Task = Resource<TaskSpec, TaskStatus>;

export interface ExecutionEvent {
  seq: number;
  type: string;
  severity: "info" | "warning" | "error";
  toolName?: string;
  toolCallID?: string;
  summary: string;
  content?: string;
  /** Where an ai run's journal stood when this happened (what `orka task fork --run --at` takes). */
  journalRun?: number;
  journalStep?: number;
  createdAt: string;
}

export interface Approval {
  id: string;
  taskName: string;
  action: string;
  targetTool: string;
  targetArgsPreview: string;
  riskSummary?: string;
  severity: "warning" | "critical";
  status: string;
  createdAt: string;
  decisionActor?: string;
  decisionReason?: string;
}

export interface Memory {
  id: string;
  content: string;
  tags?: string[];
  disabled: boolean;
  source: string;
  taskName?: string;
  updatedAt?: string;
}

export interface Proposal {
  id: string;
  type: string;
  title: string;
  content?: string;
  status: string;
  taskName?: string;
  tags?: string[];
  reviewer?: string;
  createdAt?: string;
}

export interface List<T> {
  items: T[];
  metadata?: { continue?: string; remainingItemCount?: number };
}

/** `GET /api/v1/task-summary`: counts by phase, the newest Tasks, and the watch position they were read at. */
export interface TaskSummary {
  total: number;
  phases: Record<string, number>;
  recent: Task[];
  resourceVersion: number;
}
