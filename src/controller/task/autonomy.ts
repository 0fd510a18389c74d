import { coordinationOf, type AgentSpec } from "../../resources/agent.ts";
import type { Approval } from "../../store/approval-store.ts";
import type { ResourceStore } from "../../store/resource-store.ts";
import { parseDuration } from "../../util/duration.ts";
import type { Task } from "../../resources/task.ts";
import { setCondition } from "./conditions.ts";
import { recordEvent, type TaskContext } from "./context.ts";
import { keyOf } from "./keys.ts";
import type { Transition } from "./status.ts";
import type { Autonomy, NextStep, TaskWorld } from "./steps.ts";

/** How often a parked or suspended autonomous Task is looked at again. */
const AUTONOMOUS_RECHECK_MS = 30_000;

/** An ai Task whose Agent has coordination enabled and autonomous runs as a loop of attempts. */
export async function autonomyOf(store: ResourceStore, task: Task): Promise<Autonomy | null> {
  const ref = task.spec.agentRef;
  if (!ref || task.spec.type !== "ai") return null;
  const agent = await store.get<AgentSpec, unknown>("Agent", ref.namespace ?? task.metadata.namespace, ref.name);
  const coordination = coordinationOf(agent?.spec);
  if (!coordination.enabled || !coordination.autonomous) return null;
  return {
    maxIterations: coordination.maxIterations,
    approvalTimeoutMs: coordination.approvalTimeout ? parseDuration(coordination.approvalTimeout) : undefined,
  };
}

/** Approvals requested before this instant have expired; none expire without a timeout. */
export function approvalExpiry(autonomy: Autonomy, now: number): string | undefined {
  return autonomy.approvalTimeoutMs === undefined ? undefined : new Date(now - autonomy.approvalTimeoutMs).toISOString();
}

/**
 * The autonomous loop after an iteration succeeded: a pending approval parks the Task (still Running)
 * until a person decides; then the goal or the iteration budget finishes it; a suspended Task waits;
 * otherwise it goes round again.
 */
export function nextIteration(task: Task, world: TaskWorld, autonomy: Autonomy): NextStep {
  const iteration = task.status?.iteration ?? 0;
  if (world.approvals === undefined) return { kind: "read", fact: "approvals" };
  const expiry = approvalExpiry(autonomy, world.now);
  const expired = (a: Approval) => a.status === "pending" && expiry !== undefined && a.createdAt < expiry;
  const approvals = world.approvals.map((a) => (expired(a) ? { ...a, status: "expired" as const } : a));
  const pending = approvals.find((a) => a.status === "pending");
  if (pending) {
    const untilExpiry = autonomy.approvalTimeoutMs === undefined ? AUTONOMOUS_RECHECK_MS : Date.parse(pending.createdAt) + autonomy.approvalTimeoutMs - world.now + 50;
    return { kind: "park", approval: pending, iteration, recheckMs: Math.max(50, Math.min(AUTONOMOUS_RECHECK_MS, untilExpiry)) };
  }
  // The iteration that asked goes once more with the decision, whatever its plan said.
  const resumingAfterApproval = approvals.some((a) => a.iteration === iteration && a.status !== "pending");
  if (world.plan === undefined) return { kind: "read", fact: "plan" };
  const plan = world.plan;
  if (plan?.goalComplete && !resumingAfterApproval) {
    return { kind: "complete", phase: "Succeeded", message: `goal complete after ${iteration + 1} iterations: ${plan.summary}` };
  }
  if (autonomy.maxIterations > 0 && iteration + 1 >= autonomy.maxIterations) {
    return { kind: "complete", phase: "Succeeded", message: `reached max iterations (${autonomy.maxIterations})` };
  }
  if (task.spec.suspend) return { kind: "suspend", iteration, recheckMs: AUTONOMOUS_RECHECK_MS };
  return { kind: "iterate", iteration: iteration + 1, plan };
}

/** Expires, in the store, the pending approvals the decision treated as expired, and says so. */
export function expireApprovals(ctx: TaskContext, task: Task, world: TaskWorld): void {
  const before = world.autonomy && world.approvals ? approvalExpiry(world.autonomy, world.now) : undefined;
  if (before === undefined) return;
  for (const expired of ctx.approvals.expirePending(task.metadata.namespace, task.metadata.name, before)) {
    recordEvent(ctx, task, { type: "ApprovalExpired", severity: "warning", toolName: expired.targetTool, summary: `approval ${expired.id} for ${expired.targetTool} expired` });
  }
}

export function park(ctx: TaskContext, task: Task, step: Extract<NextStep, { kind: "park" }>): Transition {
  const { approval, iteration } = step;
  return {
    status: {
      message: `waiting for approval ${approval.id} for ${approval.targetTool} at iteration ${iteration}`,
      conditions: setCondition(task.status?.conditions, { type: "WaitingForApproval", status: "True", reason: "ApprovalRequested", message: approval.id }),
    },
    after: () => ctx.wake(keyOf(task), step.recheckMs),
  };
}

export function suspend(ctx: TaskContext, task: Task, step: Extract<NextStep, { kind: "suspend" }>): Transition {
  return { status: { message: `autonomous task suspended at iteration ${step.iteration}` }, after: () => ctx.wake(keyOf(task), step.recheckMs) };
}

/** The next iteration is a new attempt: the last one's directories go, the Task queues again. */
export async function iterate(ctx: TaskContext, task: Task, step: Extract<NextStep, { kind: "iterate" }>): Promise<Transition> {
  const attemptId = task.status?.jobName;
  if (attemptId) await ctx.attempts.release(attemptId);
  const { plan } = step;
  return {
    status: {
      phase: "Pending",
      iteration: step.iteration,
      jobName: undefined,
      message: `autonomous iteration ${step.iteration}`,
      queuedAt: new Date().toISOString(),
      conditions: setCondition(task.status?.conditions, { type: "WaitingForApproval", status: "False", reason: "NoPendingApproval" }),
    },
    after: (written) =>
      recordEvent(ctx, written, { type: "IterationCompleted", summary: `iteration ${step.iteration - 1} done${plan ? `: ${plan.summary} (${plan.progressPct}%)` : ""}` }),
  };
}
