import { describe, expect, it } from "vitest";
import { decideTask } from "../../src/controller/task/decide.ts";
import type { NextStep, Plan, TaskWorld } from "../../src/controller/task/steps.ts";
import { FINALIZER_CLEANUP } from "../../src/resources/meta.ts";
import type { Task, TaskSpec, TaskStatus } from "../../src/resources/task.ts";
import type { Approval } from "../../src/store/approval-store.ts";
import type { Attempt, AttemptState } from "../../src/store/data-store.ts";

const REPO = "https://github.com/o/r";
const CHECKOUT = { repository: REPO, branch: "main", baseSHA: "a".repeat(40) };
const NOW = Date.parse("2025-06-01T12:00:00.000Z");
const ago = (ms: number) => new Date(NOW - ms).toISOString();

function task(spec: Partial<TaskSpec> = {}, status?: TaskStatus, metadata: Partial<Task["metadata"]> = {}): Task {
  return {
    apiVersion: "core.orka.ai/v1alpha1",
    kind: "Task",
    metadata: { name: "t", namespace: "default", uid: "uid-1", creationTimestamp: ago(60_000), finalizers: [FINALIZER_CLEANUP], ...metadata },
    spec: { type: "ai", priority: 500, prompt: "go", ...spec },
    status,
  };
}
const pending = (status: TaskStatus = {}) => ({ phase: "Pending" as const, attempts: 0, ...status });
const running = (status: TaskStatus = {}) => ({ phase: "Running" as const, attempts: 1, jobName: "t-1-abc", startTime: ago(1_000), journalRun: 1, ...status });
const attempt = (state: AttemptState, outcome: Partial<Attempt> = {}): Attempt => ({
  id: "t-1-abc",
  namespace: "default",
  task: "t",
  taskUid: "uid-1",
  number: 1,
  allowedTools: [],
  state,
  startedAt: ago(1_000),
  ...outcome,
});
const approval = (status: Approval["status"], extra: Partial<Approval> = {}): Approval => ({
  id: "ap-1",
  namespace: "default",
  taskName: "t",
  taskUID: "uid-1",
  iteration: 0,
  action: "deploy",
  targetTool: "deploy",
  targetArgsDigest: "a",
  targetSpecDigest: "s",
  targetArgsPreview: "{}",
  severity: "warning",
  status,
  createdAt: ago(1_000),
  ...extra,
});
const plan = (extra: Partial<Plan> = {}): Plan => ({
  namespace: "default",
  task: "t",
  iteration: 0,
  summary: "two of three services deployed",
  progressPct: 66,
  goalComplete: false,
  planDocument: "",
  createdAt: ago(1_000),
  updatedAt: ago(1_000),
  ...extra,
});
const admitted = { kind: "admit" as const, plan: { depth: 0, notices: [] } };
/** A succeeded iteration of an autonomous Task, with its approvals and plan read. */
const autonomous = (facts: Partial<TaskWorld> = {}): Partial<TaskWorld> => ({
  attempt: attempt("succeeded", { exitCode: 0 }),
  workerAlive: false,
  autonomy: { maxIterations: 0 },
  approvals: [],
  plan: null,
  ...facts,
});

interface Rule {
  rule: string;
  task: Task;
  world?: Partial<TaskWorld>;
  /** The step, or the part of it the rule is about. */
  step: { kind: NextStep["kind"] } & Record<string, unknown>;
}

const rules: Rule[] = [
  // Every Task
  { rule: "a deleted Task is finalized", task: task({}, running(), { deletionTimestamp: ago(0) }), step: { kind: "finalize" } },
  { rule: "a Task without the cleanup finalizer gets it before anything else", task: task({}, undefined, { finalizers: [] }), step: { kind: "guard" } },
  { rule: "a new Task is accepted as Pending", task: task(), step: { kind: "accept" } },

  // Pending
  {
    rule: "a Pending Task with an executionOutcome completes with it",
    task: task({}, pending({ executionOutcome: { phase: "Succeeded", message: "done elsewhere" } })),
    step: { kind: "complete", phase: "Succeeded", message: "done elsewhere" },
  },
  { rule: "a Pending Task with a schedule becomes Scheduled", task: task({ schedule: "0 9 * * *" }, pending()), step: { kind: "schedule" } },
  { rule: "a Scheduled Task runs its due tick", task: task({ schedule: "0 9 * * *" }, { phase: "Scheduled" }), step: { kind: "tick" } },
  { rule: "a Pending Task with a session takes it first", task: task({ sessionRef: { name: "chat", create: false, append: true, maxMessages: 50 } }, pending()), step: { kind: "read", fact: "session" } },
  {
    rule: "a session that does not exist and may not be created fails the Task",
    task: task({ sessionRef: { name: "chat", create: false, append: true, maxMessages: 50 } }, pending()),
    world: { session: "missing" },
    step: { kind: "complete", phase: "Failed", message: 'session "chat" not found (set sessionRef.create: true to start it)' },
  },
  {
    rule: "a session another Task holds makes the Task wait 5 s, saying so",
    task: task({ sessionRef: { name: "chat", create: true, append: true, maxMessages: 50 } }, pending()),
    world: { session: "busy" },
    step: { kind: "wait", delayMs: 5_000, message: 'waiting for session "chat"' },
  },
  { rule: "a coding-agent Task takes no session", task: task({ type: "agent", sessionRef: { name: "chat", create: true, append: true, maxMessages: 50 } }, pending()), step: { kind: "read", fact: "admission" } },
  { rule: "a retry backoff not over yet makes the Task wait the rest", task: task({}, pending({ retryAfter: new Date(NOW + 4_000).toISOString() })), step: { kind: "wait", delayMs: 4_000 } },
  { rule: "a namespace limit counts the namespace's running Tasks", task: task({}, pending()), world: { maxActivePerNamespace: 2 }, step: { kind: "read", fact: "runningInNamespace" } },
  { rule: "a namespace at its limit makes the Task wait 10 s", task: task({}, pending()), world: { maxActivePerNamespace: 2, runningInNamespace: 2 }, step: { kind: "wait", delayMs: 10_000 } },
  { rule: "a namespace under its limit lets the Task on to admission", task: task({}, pending()), world: { maxActivePerNamespace: 2, runningInNamespace: 1 }, step: { kind: "read", fact: "admission" } },
  { rule: "a refused admission fails the Task with its reason", task: task({}, pending()), world: { admission: { kind: "fail", message: "no provider configured" } }, step: { kind: "complete", phase: "Failed", message: "no provider configured" } },
  {
    rule: "an admission that says wait makes the Task wait, saying why",
    task: task({}, pending()),
    world: { admission: { kind: "wait", delayMs: 10_000, reason: "waiting: parent has 5 running children (max 5)" } },
    step: { kind: "wait", delayMs: 10_000, message: "waiting: parent has 5 running children (max 5)" },
  },
  { rule: "an admitted Task asks for its turn in the run queue", task: task({}, pending()), world: { admission: admitted }, step: { kind: "read", fact: "turn" } },
  { rule: "an admitted Task whose turn came starts with its plan", task: task({}, pending()), world: { admission: admitted, turn: true }, step: { kind: "start", plan: admitted.plan } },
  { rule: "an admitted Task without a free worker slot stays queued", task: task({}, pending()), world: { admission: admitted, turn: false }, step: { kind: "queue" } },

  // Running
  { rule: "a Running Task looks at its attempt", task: task({}, running()), step: { kind: "read", fact: "attempt" } },
  { rule: "a Running Task whose attempt was never started fails", task: task({}, running()), world: { attempt: null, workerAlive: false }, step: { kind: "complete", phase: "Failed", message: "pod stuck: the worker was never started" } },
  { rule: "a running attempt whose worker is gone is recorded as lost", task: task({}, running()), world: { attempt: attempt("running"), workerAlive: false }, step: { kind: "lose", attemptId: "t-1-abc" } },
  { rule: "a running attempt is looked at again every 5 s", task: task({}, running()), world: { attempt: attempt("running"), workerAlive: true }, step: { kind: "watch", delayMs: 5_000 } },
  {
    rule: "a timed-out Running Task fails, killing its attempt",
    task: task({ timeout: "1m" }, running({ startTime: ago(60_000) })),
    world: { attempt: attempt("running"), workerAlive: true },
    step: { kind: "complete", phase: "Failed", message: "task timed out", stopAttempt: "task timed out" },
  },
  {
    rule: "a coding-agent Task times out 30 minutes after its creation",
    task: task({ type: "agent" }, running({ startTime: ago(1_000) }), { creationTimestamp: ago(30 * 60_000) }),
    world: { attempt: attempt("running"), workerAlive: true },
    step: { kind: "complete", phase: "Failed", message: "task timed out" },
  },
  { rule: "a succeeded attempt asks whether its Task is an autonomous loop", task: task({}, running()), world: { attempt: attempt("succeeded", { exitCode: 0 }) }, step: { kind: "read", fact: "autonomy" } },
  {
    rule: "a succeeded attempt completes the Task",
    task: task({}, running()),
    world: { attempt: attempt("succeeded", { exitCode: 0 }), autonomy: null },
    step: { kind: "complete", phase: "Succeeded", message: "task completed successfully" },
  },
  {
    rule: "a succeeded attempt in a repository is delivered before its Task completes",
    task: task({ workspace: { gitRepo: REPO } }, running({ workspace: CHECKOUT })),
    world: { attempt: attempt("succeeded", { exitCode: 0 }), autonomy: null },
    step: { kind: "deliver" },
  },
  {
    rule: "a publication interrupted after its intent was recorded is delivered again (the remote decides)",
    task: task({ workspace: { gitRepo: REPO, intent: "write" } }, running({ workspace: CHECKOUT, delivery: { state: "Publishing", expectedCommitSHA: "b".repeat(40) } })),
    world: { attempt: attempt("succeeded", { exitCode: 0 }), autonomy: null },
    step: { kind: "deliver" },
  },
  {
    rule: "a delivered Task completes",
    task: task({ workspace: { gitRepo: REPO, intent: "write" } }, running({ workspace: CHECKOUT, delivery: { state: "VerifiedExact", outcome: "VerifiedExact" } })),
    world: { attempt: attempt("succeeded", { exitCode: 0 }), autonomy: null },
    step: { kind: "complete", phase: "Succeeded", message: "task completed successfully" },
  },
  {
    rule: "a verified publication whose workspace asks for a pull request opens it before the Task completes",
    task: task({ workspace: { gitRepo: REPO, intent: "write", createPR: true } }, running({ workspace: CHECKOUT, delivery: { state: "VerifiedExact", outcome: "VerifiedExact" } })),
    world: { attempt: attempt("succeeded", { exitCode: 0 }), autonomy: null },
    step: { kind: "deliver" },
  },
  {
    rule: "a verified publication with its pull request recorded completes",
    task: task({ workspace: { gitRepo: REPO, intent: "write", createPR: true } }, running({ workspace: CHECKOUT, delivery: { state: "VerifiedExact", outcome: "VerifiedExact", prReceipt: { number: 7, url: "https://github.com/o/r/pull/7", state: "open", headSHA: "b".repeat(40) } } })),
    world: { attempt: attempt("succeeded", { exitCode: 0 }), autonomy: null },
    step: { kind: "complete", phase: "Succeeded", message: "task completed successfully" },
  },
  {
    rule: "a pull request that could not be opened fails the Task, though its branch was published",
    task: task({ workspace: { gitRepo: REPO, intent: "write", createPR: true } }, running({ workspace: CHECKOUT, delivery: { state: "VerifiedExact", outcome: "VerifiedExact", reason: "PullRequestFailed", message: "no forge access" } })),
    world: { attempt: attempt("succeeded", { exitCode: 0 }), autonomy: null },
    step: { kind: "complete", phase: "Failed", message: "delivery PullRequestFailed: no forge access" },
  },
  {
    rule: "a delivery that did not land fails the Task with its reason",
    task: task({ workspace: { gitRepo: REPO, intent: "write" } }, running({ workspace: CHECKOUT, delivery: { state: "DeliveryConflict", outcome: "DeliveryConflict", message: "branch b moved" } })),
    world: { attempt: attempt("succeeded", { exitCode: 0 }), autonomy: null },
    step: { kind: "complete", phase: "Failed", message: "delivery DeliveryConflict: branch b moved" },
  },
  {
    rule: "a coding-agent Task's workspace is delivered by Orka like an ai Task's",
    task: task({ type: "agent", workspace: { gitRepo: REPO } }, running({ workspace: CHECKOUT })),
    world: { attempt: attempt("succeeded", { exitCode: 0 }), autonomy: null },
    step: { kind: "deliver" },
  },
  {
    rule: "a lost coding-agent session ends the Task with an unknown outcome, never run again",
    task: task({ type: "agent", retryPolicy: { maxRetries: 3, backoffMultiplier: 2 } }, running()),
    world: { attempt: attempt("failed", { exitCode: 137, reason: "worker lost" }) },
    step: {
      kind: "complete",
      phase: "Failed",
      message:
        "OutcomeUnknown: the coding-agent session was lost while it ran (worker lost); it is not run again automatically because it may have acted — check its workspace and effects, then create a new Task",
    },
  },
  {
    rule: "a failed coding-agent session fails the Task with what its CLI said",
    task: task({ type: "agent" }, running()),
    world: { attempt: attempt("failed", { exitCode: 1, reason: "claude exited with code 2: bad flag" }) },
    step: { kind: "complete", phase: "Failed", message: "claude exited with code 2: bad flag" },
  },
  {
    rule: "a lost worker of an ai Task with a journal resumes",
    task: task({}, running({ resumes: 4 })),
    world: { attempt: attempt("failed", { exitCode: 137, reason: "worker lost" }) },
    step: { kind: "resume", resumes: 5, lost: { number: 1, reason: "worker lost" } },
  },
  {
    rule: "a lost worker resumes at most 5 times, then the Task fails",
    task: task({}, running({ resumes: 5 })),
    world: { attempt: attempt("failed", { exitCode: 137, reason: "worker lost" }) },
    step: { kind: "complete", phase: "Failed", message: "job failed: container exited with code 137 (reason=worker lost)" },
  },
  {
    rule: "a lost worker of a container Task does not resume",
    task: task({ type: "container", command: ["true"] }, running()),
    world: { attempt: attempt("failed", { exitCode: 137, reason: "worker lost" }) },
    step: { kind: "complete", phase: "Failed", message: "job failed: container exited with code 137 (reason=worker lost)" },
  },
  {
    rule: "a failed ai attempt fails the Task with what failed",
    task: task({}, running()),
    world: { attempt: attempt("failed", { exitCode: 1, reason: "model call failed: provider mock answered HTTP 500" }) },
    step: { kind: "complete", phase: "Failed", message: "model call failed: provider mock answered HTTP 500" },
  },
  {
    rule: "a retryPolicy retries with backoff",
    task: task({ retryPolicy: { maxRetries: 3, backoffMultiplier: 2, initialDelay: "1s" } }, running({ attempts: 3 })),
    world: { attempt: attempt("failed", { exitCode: 1, reason: "boom" }) },
    step: { kind: "retry", delayMs: 4_000, retryAfter: new Date(NOW + 4_000).toISOString(), failure: "boom" },
  },
  {
    rule: "a retry backoff is capped at 5 minutes",
    task: task({ retryPolicy: { maxRetries: 20, backoffMultiplier: 10 } }, running({ attempts: 4 })),
    world: { attempt: attempt("failed", { exitCode: 1, reason: "boom" }) },
    step: { kind: "retry", delayMs: 300_000 },
  },
  {
    rule: "a retryPolicy whose retries are used up fails the Task",
    task: task({ retryPolicy: { maxRetries: 2, backoffMultiplier: 2 } }, running({ attempts: 3 })),
    world: { attempt: attempt("failed", { exitCode: 1, reason: "boom" }) },
    step: { kind: "complete", phase: "Failed", message: "boom" },
  },
  { rule: "a killed attempt leaves its Task to whoever killed it", task: task({}, running()), world: { attempt: attempt("killed") }, step: { kind: "none" } },

  // The autonomous loop, after an iteration succeeded
  { rule: "an autonomous Task reads its approvals", task: task({}, running()), world: autonomous({ approvals: undefined }), step: { kind: "read", fact: "approvals" } },
  {
    rule: "an autonomous Task with a pending approval parks, looking again every 30 s",
    task: task({}, running({ iteration: 2 })),
    world: autonomous({ approvals: [approval("pending")] }),
    step: { kind: "park", approval: { id: "ap-1" }, iteration: 2, recheckMs: 30_000 },
  },
  {
    rule: "a parked Task looks again when its approval expires",
    task: task({}, running()),
    world: autonomous({ autonomy: { maxIterations: 0, approvalTimeoutMs: 60_000 }, approvals: [approval("pending", { createdAt: ago(50_000) })] }),
    step: { kind: "park", recheckMs: 10_050 },
  },
  {
    rule: "an approval past its timeout expires and parks the Task no longer",
    task: task({}, running()),
    world: autonomous({ autonomy: { maxIterations: 0, approvalTimeoutMs: 60_000 }, approvals: [approval("pending", { createdAt: ago(61_000) })], plan: plan({ goalComplete: true }) }),
    step: { kind: "iterate", iteration: 1 },
  },
  {
    rule: "goal complete finishes",
    task: task({}, running({ iteration: 2 })),
    world: autonomous({ plan: plan({ goalComplete: true, summary: "all deployed" }) }),
    step: { kind: "complete", phase: "Succeeded", message: "goal complete after 3 iterations: all deployed" },
  },
  {
    rule: "goal complete does not finish the iteration that goes again after an approval",
    task: task({}, running({ iteration: 2 })),
    world: autonomous({ approvals: [approval("approved", { iteration: 2 })], plan: plan({ goalComplete: true }) }),
    step: { kind: "iterate", iteration: 3 },
  },
  {
    rule: "the iteration budget finishes",
    task: task({}, running({ iteration: 2 })),
    world: autonomous({ autonomy: { maxIterations: 3 } }),
    step: { kind: "complete", phase: "Succeeded", message: "reached max iterations (3)" },
  },
  { rule: "a suspended autonomous Task waits, looking again every 30 s", task: task({ suspend: true }, running({ iteration: 1 })), world: autonomous(), step: { kind: "suspend", iteration: 1, recheckMs: 30_000 } },
  { rule: "otherwise an autonomous Task goes round again", task: task({}, running({ iteration: 1 })), world: autonomous({ plan: plan() }), step: { kind: "iterate", iteration: 2, plan: { summary: "two of three services deployed" } } },

  // Ended
  { rule: "an ended Task delivers its webhook", task: task({ webhookURL: "https://hooks.example/done" }, { phase: "Succeeded" }), step: { kind: "settle", deliverWebhook: true } },
  { rule: "an ended Task whose webhook was settled only tidies up", task: task({ webhookURL: "https://hooks.example/done" }, { phase: "Failed", webhookDelivered: false }), step: { kind: "settle", deliverWebhook: false } },
  { rule: "an ended Task without a webhook only tidies up", task: task({}, { phase: "Cancelled" }), step: { kind: "settle", deliverWebhook: false } },
];

describe("decideTask: the Task lifecycle", () => {
  it.each(rules)("$rule", ({ task, world, step }) => {
    expect(decideTask(task, { now: NOW, maxActivePerNamespace: 0, ...world })).toMatchObject(step);
  });
});
