import { FINALIZER_CLEANUP } from "../../resources/meta.ts";
import { LOST_EXIT_CODE } from "../../runner/runner.ts";
import type { Attempt } from "../../store/data-store.ts";
import { parseDuration } from "../../util/duration.ts";
import { RETRY_POLICY_DEFAULTS, type Task } from "../../resources/task.ts";
import { nextIteration } from "./autonomy.ts";
import { deliveryFailure, deliveryPending } from "./delivery.ts";
import type { Fact, NextStep, TaskWorld } from "./steps.ts";
import { timedOut } from "./timeout.ts";

const RUNNING_RECHECK_MS = 5_000;
/** Resumes of one run after lost workers; past this the Task fails or retries as usual. */
export const MAX_RESUMES = 5;
const NAMESPACE_LIMIT_WAIT_MS = 10_000;
const SESSION_WAIT_MS = 5_000;
const DEFAULT_RETRY_DELAY_MS = 10_000;
const MAX_RETRY_DELAY_MS = 5 * 60_000;

const read = (fact: Fact): NextStep => ({ kind: "read", fact });
const complete = (phase: "Succeeded" | "Failed", message: string): NextStep => ({ kind: "complete", phase, message });

/** The Task lifecycle as one pure function: from the Task and what its pass read, the next step. */
export function decideTask(task: Task, world: TaskWorld): NextStep {
  if (task.metadata.deletionTimestamp) return { kind: "finalize" };
  if (!task.metadata.finalizers?.includes(FINALIZER_CLEANUP)) return { kind: "guard" };
  switch (task.status?.phase) {
    case undefined:
      return { kind: "accept" };
    case "Pending":
      return decidePending(task, world);
    case "Running":
      return decideRunning(task, world);
    case "Scheduled":
      return { kind: "tick" };
    default:
      return { kind: "settle", deliverWebhook: !!task.spec.webhookURL && task.status?.webhookDelivered === undefined };
  }
}

/** Pending: its outcome or schedule, then its session, retry backoff, namespace limit, admission and a worker slot, in that order. */
function decidePending(task: Task, world: TaskWorld): NextStep {
  const status = task.status!;
  if (status.executionOutcome) return { kind: "complete", phase: status.executionOutcome.phase, message: status.executionOutcome.message ?? "" };
  if (task.spec.schedule) return { kind: "schedule" };
  const session = task.spec.sessionRef;
  // One Task at a time per session, so turns never interleave.
  if (session && task.spec.type !== "agent") {
    if (world.session === undefined) return read("session");
    if (world.session === "missing") return complete("Failed", `session "${session.name}" not found (set sessionRef.create: true to start it)`);
    if (world.session === "busy") return { kind: "wait", delayMs: SESSION_WAIT_MS, message: `waiting for session "${session.name}"` };
  }
  const untilRetry = status.retryAfter ? Date.parse(status.retryAfter) - world.now : 0;
  if (untilRetry > 0) return { kind: "wait", delayMs: untilRetry };
  if (world.maxActivePerNamespace > 0) {
    if (world.runningInNamespace === undefined) return read("runningInNamespace");
    if (world.runningInNamespace >= world.maxActivePerNamespace) return { kind: "wait", delayMs: NAMESPACE_LIMIT_WAIT_MS };
  }
  if (world.admission === undefined) return read("admission");
  const admission = world.admission;
  if (admission.kind === "fail") return complete("Failed", admission.message);
  if (admission.kind === "wait") return { kind: "wait", delayMs: admission.delayMs, message: admission.reason };
  if (world.turn === undefined) return read("turn");
  return world.turn ? { kind: "start", plan: admission.plan } : { kind: "queue" };
}

/** Running: watch the attempt until it ends, then finish, go round again (autonomous), resume, or retry. */
function decideRunning(task: Task, world: TaskWorld): NextStep {
  if (world.attempt === undefined) return read("attempt");
  const attempt = world.attempt;
  if (!attempt) return failOrRetry(task, world, "pod stuck: the worker was never started");
  switch (attempt.state) {
    case "running":
      if (!world.workerAlive) return { kind: "lose", attemptId: attempt.id };
      if (timedOut(task, world.now)) return { kind: "complete", phase: "Failed", message: "task timed out", stopAttempt: "task timed out" };
      return { kind: "watch", delayMs: RUNNING_RECHECK_MS };
    case "succeeded":
      if (world.autonomy === undefined) return read("autonomy");
      if (world.autonomy) return nextIteration(task, world, world.autonomy);
      return finishDelivered(task);
    case "failed":
      if (resumable(task, attempt)) return { kind: "resume", lost: attempt, resumes: (task.status?.resumes ?? 0) + 1 };
      if (task.spec.type === "agent" && attempt.exitCode === LOST_EXIT_CODE) return complete("Failed", sessionLost(attempt));
      return failOrRetry(task, world, attemptFailure(task, attempt));
    case "killed":
      return { kind: "none" };
  }
}

/** A Task with a repository ends once Orka has turned its workspace into a result and delivered it. */
function finishDelivered(task: Task): NextStep {
  if (deliveryPending(task)) return { kind: "deliver" };
  const failure = deliveryFailure(task);
  return failure ? complete("Failed", failure) : complete("Succeeded", "task completed successfully");
}

/**
 * A worker that died (not one that failed) under an ai Task: continue its run from the journal.
 * An empty journal means nothing was acted on yet, so the run simply starts again.
 */
function resumable(task: Task, attempt: Attempt): boolean {
  if (task.spec.type !== "ai" || task.status?.journalRun === undefined || attempt.exitCode !== LOST_EXIT_CODE) return false;
  return (task.status?.resumes ?? 0) < MAX_RESUMES;
}

/**
 * A coding CLI cannot be resumed from a journal, and what it did before its worker died is not known:
 * the Task ends, never run again by itself (not even under a retryPolicy).
 */
function sessionLost(attempt: Attempt): string {
  return `OutcomeUnknown: the coding-agent session was lost while it ran (${attempt.reason ?? "worker lost"}); it is not run again automatically because it may have acted — check its workspace and effects, then create a new Task`;
}

/** A retryPolicy with retries left retries after an exponential backoff (capped at 5 minutes); otherwise the Task fails. */
function failOrRetry(task: Task, world: TaskWorld, failure: string): NextStep {
  const attempts = task.status?.attempts ?? 0;
  const policy = task.spec.retryPolicy;
  if (!policy || attempts > policy.maxRetries) return complete("Failed", failure);
  const initial = policy.initialDelay ? parseDuration(policy.initialDelay) : DEFAULT_RETRY_DELAY_MS;
  const delayMs = Math.min(MAX_RETRY_DELAY_MS, initial * (policy.backoffMultiplier ?? RETRY_POLICY_DEFAULTS.backoffMultiplier) ** (attempts - 1));
  return { kind: "retry", delayMs, retryAfter: new Date(world.now + delayMs).toISOString(), failure };
}

/**
 * A failed attempt in its Task's words: an ai worker or a coding-agent session that ran to its end says
 * what failed (the model call with its provider and answer, a loop limit, the CLI's exit and stderr); a
 * container or a lost worker, how it exited.
 */
function attemptFailure(task: Task, attempt: Attempt): string {
  if (attempt.exitCode === undefined) return "job failed";
  if (task.spec.type !== "container" && attempt.reason && attempt.exitCode !== LOST_EXIT_CODE) return attempt.reason;
  return `job failed: container exited with code ${attempt.exitCode} (reason=${attempt.reason ?? "Error"})`;
}
