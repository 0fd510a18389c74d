import type { TaskPhase } from "../../resources/task.ts";
import type { Approval } from "../../store/approval-store.ts";
import type { CoordinationStore } from "../../store/coordination-store.ts";
import type { Attempt } from "../../store/data-store.ts";
import type { Admission, StartPlan } from "../admission.ts";

/** What the Agent says about running a Task as an autonomous loop. */
export interface Autonomy {
  /** 0 = no limit. */
  maxIterations: number;
  /** How long a pending approval may wait before it expires; none = forever. */
  approvalTimeoutMs?: number;
}

export type Plan = NonNullable<ReturnType<CoordinationStore["getPlan"]>>;

/**
 * What a reconcile pass read about a Task besides the Task itself. The facts are read when the
 * decision first asks for one (`read`), in the lifecycle's own order: taking a session or asking
 * admission has effects, so a fact a pass does not need is never read.
 */
export interface TaskWorld {
  now: number;
  /** Running Tasks allowed per namespace; 0 = no limit. */
  maxActivePerNamespace: number;
  /** The attempt the Task's status names, or null when the store has none such. */
  attempt?: Attempt | null;
  /** Whether the runner still runs that attempt. */
  workerAlive?: boolean;
  /** The Task's session, taken for it when it is free (a missing one is created when `create` allows). */
  session?: "held" | "busy" | "missing";
  runningInNamespace?: number;
  admission?: Admission;
  /** Whether an admitted Task's turn for a worker slot has come. */
  turn?: boolean;
  /** null: the Task is not an autonomous loop. */
  autonomy?: Autonomy | null;
  /** The Task's approvals as stored, oldest first (those past their timeout are expired by the pass). */
  approvals?: Approval[];
  plan?: Plan | null;
}

export type Fact = "attempt" | "session" | "runningInNamespace" | "admission" | "turn" | "autonomy" | "approvals" | "plan";

/** What a reconcile pass does next: decided by `decideTask`, applied by the reconciler with one status write. */
export type NextStep =
  /** The decision needs a fact the pass has not read yet. */
  | { kind: "read"; fact: Fact }
  /** Deleted: stop and release everything the Task holds, then drop the finalizer. */
  | { kind: "finalize" }
  /** Put the cleanup finalizer on first, so a deletion always passes through `finalize`. */
  | { kind: "guard" }
  /** New: it becomes Pending and joins the queue. */
  | { kind: "accept" }
  /** A Task with a schedule becomes Scheduled: it runs as children, one per tick. */
  | { kind: "schedule" }
  /** A Scheduled Task: create the due run, prune old ones, wait for the next tick. */
  | { kind: "tick" }
  /** Not yet: leave the run queue and look again after `delayMs`, saying why in `message`. */
  | { kind: "wait"; delayMs: number; message?: string }
  /** Admitted, waiting in the run queue for a worker slot. */
  | { kind: "queue" }
  | { kind: "start"; plan: StartPlan }
  /** Its attempt runs: mirror the children and look again after `delayMs`. */
  | { kind: "watch"; delayMs: number }
  /** The runner no longer runs the attempt the store believes running: record it as lost, look again now. */
  | { kind: "lose"; attemptId: string }
  /** End the Task; `stopAttempt` kills its attempt first, with that reason. */
  | { kind: "complete"; phase: TaskPhase; message: string; stopAttempt?: string }
  /** The attempt succeeded in a repository: commit its change as the result, publish it for write intent, and record the receipt. */
  | { kind: "deliver" }
  /** Back to Pending until `retryAfter`, after the attempt that failed with `failure`. */
  | { kind: "retry"; delayMs: number; retryAfter: string; failure: string }
  /** Back to Pending to continue the lost attempt's journal run. */
  | { kind: "resume"; lost: Attempt; resumes: number }
  /** An autonomous Task waits, still Running, for a person to decide `approval`. */
  | { kind: "park"; approval: Approval; iteration: number; recheckMs: number }
  /** An autonomous Task whose spec says suspend waits before its next iteration. */
  | { kind: "suspend"; iteration: number; recheckMs: number }
  /** An autonomous Task goes round again. */
  | { kind: "iterate"; iteration: number; plan: Plan | null }
  /** Ended: tidy up what is left and deliver its webhook once. */
  | { kind: "settle"; deliverWebhook: boolean }
  /** Nothing to do: a killed attempt's Task is being completed by whoever killed it. */
  | { kind: "none" };
