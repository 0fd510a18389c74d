import type { ProviderSpec, ProviderStatus } from "../resources/provider.ts";
import { randomBytes, randomUUID } from "node:crypto";
import { sha256Hex } from "../util/hash.ts";
import type { Logger } from "../util/logger.ts";
import { ANNOTATION, API_VERSION, childrenOf, FINALIZER_CLEANUP, LABEL, labelValue, type Resource } from "../resources/meta.ts";
import { isTerminal, type Task, type TaskPhase, type TaskSpec, type TaskStatus } from "../resources/task.ts";
import type { Attempt, TaskDataStore, ExecutionEventInput } from "../store/data-store.ts";
import type { MemoryStore } from "../store/memory-store.ts";
import type { AgentSpec } from "../resources/agent.ts";
import type { CoordinationStore } from "../store/coordination-store.ts";
import type { JournalStore } from "../store/journal-store.ts";
import { LOST_EXIT_CODE } from "../runner/runner.ts";
import type { ApprovalStore } from "../store/approval-store.ts";
import type { ResourceStore, WatchEvent } from "../store/resource-store.ts";
import type { AttemptDirs, WorkloadRunner, AttemptExit } from "../runner/runner.ts";
import { chown, rm, writeFile } from "node:fs/promises";
import { dirname, join } from "node:path";
import { SANDBOX_UID } from "../sandbox/bwrap.ts";
import { attemptEnv, carriedSecretValues, type AttemptConfig } from "../runner/attempt-config.ts";
import type { ModelCallSettings } from "../providers/model.ts";
import { OrkaError, errorMessage } from "../util/errors.ts";
import { parseDuration } from "../util/duration.ts";
import { admit, type StartPlan } from "./admission.ts";
import { parentNamespaceOf, parentTaskName } from "./parent-link.ts";
import { resultWithoutDiff } from "./children.ts";
import { setCondition } from "./conditions.ts";
import { RunQueue, type QueuedTask } from "./queue.ts";
import { providerReadiness, type ProviderSettings } from "./resolve.ts";
import { DEFAULT_STARTING_DEADLINE_SECONDS, latestDueTick, parseSchedule, scheduledChildName, scheduledChildSpec } from "./schedules.ts";
import { WorkQueue } from "./work-queue.ts";
import type { ToolSettings } from "../tools/define.ts";
import type { GrantGate } from "../auth/grant-gate.ts";
import type { SecretSpec } from "../resources/secret.ts";
import { probeTool, TOOL_PROBE_INTERVAL_MS } from "./tool-probe.ts";
import type { ToolSpec, ToolStatus } from "../resources/tool.ts";
import { checkEgressUrl, EgressRefused, postJsonGuarded, type EgressPolicy } from "../policy/ssrf.ts";
import type { TaskSecrets } from "../policy/redact.ts";

export interface ControllerOptions {
  store: ResourceStore;
  data: TaskDataStore;
  memory: MemoryStore;
  coordination: CoordinationStore;
  approvals: ApprovalStore;
  /** Attempt journals: a lost attempt of an ai Task resumes from its journal. */
  journal: JournalStore;
  runner: WorkloadRunner;
  logger: Logger;
  /** Where workers reach /internal/v1. */
  controllerURL: string;
  /** Attempts that may run at once (worker slots). */
  slots: number;
  /** Running Tasks allowed per namespace; 0 = no limit. */
  maxActivePerNamespace: number;
  modelCalls: ModelCallSettings;
  /** Where webhooks, HTTP Tool calls and Tool probes may go. */
  egress: EgressPolicy;
  /** What the built-in tools get; the search key is added per Task from `searchSecret`. */
  toolSettings: ToolSettings;
  /** A Secret (key `api-key`) in each Task's namespace holding the search API key. */
  searchSecret?: string;
  /** Transaction grants, checked again when an attempt starts. */
  grants: GrantGate;
  /** Learns, per attempt, the Secret values that must never show in what the Task stores. */
  secrets: TaskSecrets;
  /** Where scripted Providers may read files. */
  providers: ProviderSettings;
}

const RUNNING_RECHECK_MS = 5_000;
/** Resumes of one run after lost workers; past this the Task fails or retries as usual. */
const MAX_RESUMES = 5;
const NAMESPACE_LIMIT_WAIT_MS = 10_000;
const SESSION_WAIT_MS = 5_000;
const AUTONOMOUS_RECHECK_MS = 30_000;
const DEFAULT_RETRY_DELAY_MS = 10_000;
const MAX_RETRY_DELAY_MS = 5 * 60_000;
const CHILD_RESULT_LIMIT = 4096;
const WEBHOOK_TIMEOUT_MS = 30_000;
const WEBHOOK_RETRY_MS = 30_000;

export function hashToken(token: string): string {
  return sha256Hex(token);
}

const taskKey = (namespace: string, name: string) => `Task/${namespace}/${name}`;

/** The control loop: reconciles Tasks and Providers level-triggered, from the store. */
export class Controller {
  private readonly store: ResourceStore;
  private readonly data: TaskDataStore;
  private readonly runner: WorkloadRunner;
  private readonly options: ControllerOptions;
  private readonly log: Logger;
  private readonly work: WorkQueue;
  private readonly runQueue = new RunQueue();
  private readonly activeAttempts = new Set<string>();
  /** Tasks taken from the run queue whose attempt is being set up: each holds a worker slot already. */
  private readonly startingTasks = new Set<string>();
  /** Set by stop(): nothing starts after it. */
  private stopping = false;
  private readonly attemptOwners = new Map<string, { namespace: string; task: string; number: number }>();
  private unwatch?: () => void;

  constructor(options: ControllerOptions) {
    this.options = options;
    this.store = options.store;
    this.data = options.data;
    this.runner = options.runner;
    this.log = options.logger;
    this.work = new WorkQueue(
      (key) => this.reconcile(key),
      (key, message) => {
        this.log.warn({ key, err: message }, "reconcile failed; retrying");
        this.work.add(key, 1000);
      },
    );
    this.runner.onExit((exit) => this.attemptExited(exit));
    this.runner.onLog((attemptId, chunk) => this.attemptLogged(attemptId, chunk));
  }

  async start(): Promise<void> {
    // Attempts the store believes are running belong to a previous server: their processes are gone.
    // Their directories stay until the Task resumes in them or finishes.
    for (const attempt of this.data.runningAttempts()) {
      this.data.finishAttempt(attempt.id, { state: "failed", exitCode: LOST_EXIT_CODE, reason: "worker lost: the server restarted" });
    }
    this.unwatch = this.store.watch((event) => this.onWatch(event));
    const tasks = (await this.store.list<TaskSpec, TaskStatus>("Task")).items;
    // The whole backlog is queued before the first reconcile can start anything, so a restart
    // starts the highest priorities first, not whichever Task the listing happens to reach first.
    for (const task of tasks) if (!task.status?.phase || task.status.phase === "Pending") this.runQueue.offer(queuedTaskOf(task));
    for (const task of tasks) this.work.add(taskKey(task.metadata.namespace, task.metadata.name));
    for (const kind of ["Provider", "Tool"] as const) {
      for (const object of (await this.store.list(kind)).items) this.work.add(`${kind}/${object.metadata.namespace}/${object.metadata.name}`);
    }
  }

  /** Starts nothing more; reconciles already running finish. Running attempts are the runner's to stop. */
  async stop(): Promise<void> {
    this.stopping = true;
    this.unwatch?.();
    this.work.stop();
    await this.work.idle();
  }

  /** Cancels a Task through the normal completion path (kills its worker first). */
  async cancel(namespace: string, name: string, message: string): Promise<TaskPhase> {
    const task = await this.store.get<TaskSpec, TaskStatus>("Task", namespace, name);
    if (!task) throw new OrkaError("not_found", "task not found");
    if (isTerminal(task)) return task.status!.phase!;
    this.stopAttempt(task, "killed", message);
    await this.complete(task, "Cancelled", message);
    return "Cancelled";
  }

  /** Looks at a Task again now (after a human decision, say). */
  poke(namespace: string, name: string): void {
    this.work.add(taskKey(namespace, name));
  }

  private onWatch(event: WatchEvent): void {
    const { kind, metadata } = event.object;
    if (kind === "Task") {
      this.work.add(taskKey(metadata.namespace, metadata.name));
      const parent = parentTaskName(event.object as Task);
      if (parent) this.work.add(taskKey(parentNamespaceOf(event.object as Task), parent), 200);
    } else if (kind === "Provider" || kind === "Tool") {
      if (event.type !== "DELETED") this.work.add(`${kind}/${metadata.namespace}/${metadata.name}`);
    }
    else if (kind === "Secret") {
      void this.store.list("Provider", { namespace: metadata.namespace }).then((list) => {
        for (const p of list.items) this.work.add(`Provider/${p.metadata.namespace}/${p.metadata.name}`);
      });
    }
  }

  private async reconcile(key: string): Promise<void> {
    const [kind, namespace, name] = key.split("/");
    if (kind === "Provider") return this.reconcileProvider(namespace, name);
    if (kind === "Tool") return this.reconcileTool(namespace, name);
    const task = await this.store.get<TaskSpec, TaskStatus>("Task", namespace, name);
    if (!task) return this.dequeue(key);
    try {
      await this.reconcileTask(task);
    } catch (err) {
      if (err instanceof OrkaError && (err.code === "conflict" || err.code === "not_found")) return this.work.add(key, 50);
      throw err;
    }
  }

  private async reconcileTask(task: Task): Promise<void> {
    const key = taskKey(task.metadata.namespace, task.metadata.name);
    if (task.metadata.deletionTimestamp) return this.finalizeDeletion(task);
    if (!task.metadata.finalizers?.includes(FINALIZER_CLEANUP)) {
      await this.store.update({ ...task, metadata: { ...task.metadata, finalizers: [...(task.metadata.finalizers ?? []), FINALIZER_CLEANUP] } });
      return;
    }
    if (!task.status?.phase) {
      await this.writeStatus(task, { phase: "Pending", queuedAt: new Date().toISOString(), attempts: 0 });
      this.event(task, { type: "TaskCreated", summary: `${task.spec.type} task created` });
      return;
    }
    switch (task.status.phase) {
      case "Pending":
        return this.reconcilePending(task, key);
      case "Running":
        return this.reconcileRunning(task, key);
      case "Scheduled":
        return this.reconcileScheduled(task, key);
      default:
        this.dequeue(key);
        // A cancelled or timed-out attempt exits after its Task completed: its directories go now.
        await this.releaseExitedAttempt(task);
        return this.deliverWebhook(task, key);
    }
  }

  // ---- Pending ----

  private async reconcilePending(task: Task, key: string): Promise<void> {
    const status = task.status!;
    if (status.executionOutcome) return this.complete(task, status.executionOutcome.phase, status.executionOutcome.message ?? "");
    if (task.spec.schedule) {
      this.dequeue(key);
      await this.writeStatus(task, { phase: "Scheduled" });
      return;
    }
    const session = task.spec.sessionRef;
    if (session && task.spec.type !== "agent") {
      if (!this.options.memory.sessionExists(task.metadata.namespace, session.name)) {
        if (!session.create) return this.complete(task, "Failed", `session "${session.name}" not found (set sessionRef.create: true to start it)`);
        this.options.memory.ensureSession(task.metadata.namespace, session.name);
      }
      // One Task at a time per session, so turns never interleave.
      if (!this.options.memory.lockSession(task.metadata.namespace, session.name, task.metadata.name)) {
        const waiting = `waiting for session "${session.name}"`;
        if (status.message !== waiting) await this.writeStatus(task, { message: waiting });
        return this.lookAgainLater(key, SESSION_WAIT_MS);
      }
    }
    const retryAt = status.retryAfter ? Date.parse(status.retryAfter) - Date.now() : 0;
    if (retryAt > 0) return this.lookAgainLater(key, retryAt);
    if (this.options.maxActivePerNamespace > 0) {
      const running = (await this.store.list<TaskSpec, TaskStatus>("Task", { namespace: task.metadata.namespace })).items.filter(
        (t) => t.status?.phase === "Running",
      ).length;
      if (running >= this.options.maxActivePerNamespace) return this.lookAgainLater(key, NAMESPACE_LIMIT_WAIT_MS);
    }
    const admission = await admit(this.store, task, this.options);
    if (admission.kind === "fail") return this.complete(task, "Failed", admission.message);
    if (admission.kind === "wait") {
      if (status.message !== admission.reason) await this.writeStatus(task, { message: admission.reason });
      return this.lookAgainLater(key, admission.delayMs);
    }
    this.runQueue.offer(queuedTaskOf(task));
    if (this.stopping || !this.runQueue.head(this.freeSlots()).includes(key)) return;
    // The slot is taken now: other reconciles running while this attempt is set up must not count it free.
    this.runQueue.remove(key);
    this.startingTasks.add(key);
    try {
      await this.startAttempt(task, admission.plan);
    } finally {
      this.startingTasks.delete(key);
      this.pokeQueue();
    }
  }

  /** A Pending Task that cannot start yet leaves the run queue (its place goes to the next) until it is looked at again. */
  private lookAgainLater(key: string, delayMs: number): void {
    this.dequeue(key);
    this.work.add(key, delayMs);
  }

  private dequeue(key: string): void {
    if (this.runQueue.remove(key)) this.pokeQueue();
  }

  private freeSlots(): number {
    return this.options.slots - this.activeAttempts.size - this.startingTasks.size;
  }

  private async startAttempt(task: Task, plan: StartPlan): Promise<void> {
    const number = (task.status?.attempts ?? 0) + 1;
    const attemptId = `${task.metadata.name}-${number}-${randomUUID().slice(0, 8)}`;
    const token = randomBytes(32).toString("base64url");
    // A resumed run continues in the lost attempt's directories (its workspace files are part of the run).
    const resumeRun = task.status?.resuming ? task.status.journalRun : undefined;
    const lostAttempt = resumeRun !== undefined ? task.status?.jobName : undefined;
    const dirs = lostAttempt ? await this.runner.adopt(lostAttempt, attemptId) : await this.runner.prepare(attemptId);
    if (lostAttempt) this.attemptOwners.delete(lostAttempt);
    // A fork's first attempt starts from a copy of the source run up to the chosen step.
    const fork = number === 1 ? forkSourceOf(task) : undefined;
    if (fork) {
      this.options.journal.copyRun(fork, { namespace: task.metadata.namespace, task: task.metadata.name, taskUid: task.metadata.uid!, attempt: number }, number);
    }
    const config: AttemptConfig = {
      attemptId,
      attempt: number,
      journal: { run: resumeRun ?? number, resume: resumeRun !== undefined || fork !== undefined },
      task: { name: task.metadata.name, namespace: task.metadata.namespace, uid: task.metadata.uid!, type: task.spec.type },
      agentName: plan.agent?.metadata.name,
      parentTask: plan.parentTask,
      controllerURL: this.options.controllerURL,
      token,
      ...dirs,
      transactionTokenFile: await this.writeTransactionToken(task, dirs),
      toolSettings: await this.toolSettingsFor(task, plan),
      session: task.spec.sessionRef && {
        name: task.spec.sessionRef.name,
        append: task.spec.sessionRef.append ?? true,
        maxMessages: task.spec.sessionRef.maxMessages ?? 50,
      },
      ai: plan.ai && { ...plan.ai, modelCalls: this.options.modelCalls },
      coordination: {
        enabled: plan.agent?.spec.coordination?.enabled ?? false,
        maxDepth: plan.agent?.spec.coordination?.maxDepth ?? 3,
        maxChildren: plan.agent?.spec.coordination?.maxConcurrentChildren ?? 5,
        allowedAgents: (plan.agent?.spec.coordination?.allowedAgents ?? []).map((a) => a.name),
        depth: plan.depth,
      },
      autonomous: {
        mode: plan.agent?.spec.coordination?.autonomous ?? false,
        iteration: task.status?.iteration ?? 0,
        maxIterations: plan.agent?.spec.coordination?.maxIterations ?? 0,
      },
      approvalRequiredTools: plan.agent?.spec.coordination?.approvalRequiredTools ?? [],
      resolvedApprovals: this.options.approvals
        .listForTask(task.metadata.namespace, task.metadata.name, task.metadata.uid)
        .filter((a) => a.status !== "pending")
        .reverse()
        .slice(0, 32),
      container: plan.container,
    };
    this.options.secrets.remember(task.metadata.namespace, task.metadata.name, attemptId, await this.secretValuesOf(task, config));
    // The store learns of the attempt before it exists, so a crash in between is seen as a lost attempt.
    this.data.createAttempt(
      { id: attemptId, namespace: task.metadata.namespace, task: task.metadata.name, taskUid: task.metadata.uid!, number, allowedTools: plan.ai?.tools ?? [] },
      hashToken(token),
    );
    const now = new Date().toISOString();
    const running = await this.writeStatus(task, {
      phase: "Running",
      startTime: now,
      attempts: number,
      jobName: attemptId,
      message: resumeRun !== undefined ? `attempt ${number} resuming run ${resumeRun}` : `attempt ${number} running`,
      retryAfter: undefined,
      journalRun: resumeRun ?? number,
      resuming: undefined,
      conditions: setCondition(task.status?.conditions, { type: "JobCreated", status: "True", reason: "WorkerStarted", message: attemptId }),
    });
    // Notices describe the Task's configuration, not this attempt: each is said once per Task, not on every run and iteration.
    const said = new Set(this.data.listEvents(running.metadata.namespace, running.metadata.name, { type: "Warning" }).map((e) => e.summary));
    for (const notice of plan.notices) if (!said.has(notice)) this.event(running, { type: "Warning", severity: "warning", summary: notice });
    this.activeAttempts.add(attemptId);
    this.attemptOwners.set(attemptId, { namespace: task.metadata.namespace, task: task.metadata.name, number });
    this.runner.start(attemptId, attemptEnv(config));
    this.event(running, { type: "AttemptStarted", summary: `attempt ${number} started` });
    this.scheduleTimeoutCheck(running);
  }

  /** A delegated child's exchanged transaction token, as a file in its attempt directory, readable by it alone. */
  private async writeTransactionToken(task: Task, dirs: AttemptDirs): Promise<string | undefined> {
    const secretName = task.metadata.annotations?.[ANNOTATION.transactionTokenSecret];
    if (!secretName) return undefined;
    const token = (await this.store.get<SecretSpec, unknown>("Secret", task.metadata.namespace, secretName))?.spec.data.token;
    if (!token) return undefined;
    const file = join(dirname(dirs.workspaceDir), "transaction-token");
    await rm(file, { force: true }); // a resumed attempt's directories may hold a read-only copy
    await writeFile(file, token, { mode: 0o400 });
    // Sandboxed commands run as nobody when Orka runs as root.
    if (process.getuid?.() === 0) await chown(file, SANDBOX_UID, SANDBOX_UID);
    return file;
  }

  /** Every Secret value the attempt uses: its model keys, the search key, and its HTTP Tools' credentials. */
  private async secretValuesOf(task: Task, config: AttemptConfig): Promise<(string | undefined)[]> {
    const values: (string | undefined)[] = carriedSecretValues(config);
    for (const { name } of config.ai?.customTools ?? []) {
      const ref = (await this.store.get<ToolSpec, ToolStatus>("Tool", task.metadata.namespace, name))?.spec.http?.authSecretRef;
      if (ref) values.push((await this.store.get<SecretSpec, unknown>("Secret", task.metadata.namespace, ref.name))?.spec.data[ref.key]);
    }
    return values;
  }

  /** The search key goes only to attempts that may search, from a Secret in their own namespace. */
  private async toolSettingsFor(task: Task, plan: StartPlan): Promise<ToolSettings> {
    const settings = this.options.toolSettings;
    if (!this.options.searchSecret || !plan.ai?.tools.includes("web_search")) return settings;
    const secret = await this.store.get<SecretSpec, unknown>("Secret", task.metadata.namespace, this.options.searchSecret);
    return { ...settings, search: { ...settings.search, apiKey: secret?.spec.data["api-key"] } };
  }

  // ---- Running ----

  private async reconcileRunning(task: Task, key: string): Promise<void> {
    const attempt = this.data.latestAttempt(task.metadata.namespace, task.metadata.name);
    if (!attempt || attempt.id !== task.status?.jobName) return this.failOrRetry(task, "pod stuck: the worker was never started");
    if (attempt.state === "running" && !this.runner.isRunning(attempt.id)) {
      this.data.finishAttempt(attempt.id, { state: "failed", exitCode: LOST_EXIT_CODE, reason: "worker lost" });
      return this.work.add(key);
    }
    if (attempt.state === "running") {
      if (this.timedOut(task)) {
        this.stopAttempt(task, "killed", "task timed out");
        return this.complete(task, "Failed", "task timed out");
      }
      await this.refreshChildren(task);
      return this.work.add(key, RUNNING_RECHECK_MS);
    }
    this.activeAttempts.delete(attempt.id);
    if (attempt.state === "succeeded") {
      const autonomy = await this.autonomyOf(task);
      if (autonomy) return this.nextIteration(task, autonomy, key);
      return this.complete(task, "Succeeded", "task completed successfully");
    }
    if (attempt.state === "failed") {
      if (this.resumable(task, attempt)) return this.resume(task, attempt);
      return this.failOrRetry(task, attemptFailure(task, attempt));
    }
  }

  /**
   * A worker that died (not one that failed) under an ai Task: continue its run from the journal.
   * An empty journal means nothing was acted on yet, so the run simply starts again.
   */
  private resumable(task: Task, attempt: Attempt): boolean {
    if (task.spec.type !== "ai" || task.status?.journalRun === undefined || attempt.exitCode !== LOST_EXIT_CODE) return false;
    return (task.status?.resumes ?? 0) < MAX_RESUMES;
  }

  private async resume(task: Task, lost: Attempt): Promise<void> {
    const resumes = (task.status?.resumes ?? 0) + 1;
    await this.writeStatus(task, { phase: "Pending", resuming: true, resumes, message: `resuming run ${task.status!.journalRun} after: ${lost.reason ?? "worker lost"}` });
    this.event(task, { type: "AttemptLost", severity: "warning", summary: `attempt ${lost.number} lost (${lost.reason ?? "worker lost"}); resuming from the journal (resume ${resumes} of at most ${MAX_RESUMES})` });
  }

  private async autonomyOf(task: Task): Promise<{ maxIterations: number; approvalTimeoutMs?: number } | undefined> {
    const ref = task.spec.agentRef;
    if (!ref || task.spec.type !== "ai") return undefined;
    const agent = await this.store.get<AgentSpec, unknown>("Agent", ref.namespace ?? task.metadata.namespace, ref.name);
    const coordination = agent?.spec.coordination;
    if (!coordination?.enabled || !coordination.autonomous) return undefined;
    return {
      maxIterations: coordination.maxIterations ?? 0,
      approvalTimeoutMs: coordination.approvalTimeout ? parseDuration(coordination.approvalTimeout) : undefined,
    };
  }

  /** The autonomous loop: after an iteration, finish on goal or budget, wait while suspended, else go again. */
  private async nextIteration(task: Task, autonomy: { maxIterations: number; approvalTimeoutMs?: number }, key: string): Promise<void> {
    const iteration = task.status?.iteration ?? 0;
    if (autonomy.approvalTimeoutMs !== undefined) {
      const before = new Date(Date.now() - autonomy.approvalTimeoutMs).toISOString();
      for (const expired of this.options.approvals.expirePending(task.metadata.namespace, task.metadata.name, before)) {
        this.event(task, { type: "ApprovalExpired", severity: "warning", toolName: expired.targetTool, summary: `approval ${expired.id} for ${expired.targetTool} expired` });
      }
    }
    const approvals = this.options.approvals.listForTask(task.metadata.namespace, task.metadata.name, task.metadata.uid);
    const pending = approvals.find((a) => a.status === "pending");
    if (pending) {
      // Parked: the attempt is over, the Task stays Running until a person decides (re-checked every 30 s).
      await this.writeStatus(task, {
        message: `waiting for approval ${pending.id} for ${pending.targetTool} at iteration ${iteration}`,
        conditions: setCondition(task.status?.conditions, { type: "WaitingForApproval", status: "True", reason: "ApprovalRequested", message: pending.id }),
      });
      const untilExpiry = autonomy.approvalTimeoutMs === undefined ? AUTONOMOUS_RECHECK_MS : Date.parse(pending.createdAt) + autonomy.approvalTimeoutMs - Date.now() + 50;
      return this.work.add(key, Math.max(50, Math.min(AUTONOMOUS_RECHECK_MS, untilExpiry)));
    }
    const resumingAfterApproval = approvals.some((a) => a.iteration === iteration && a.status !== "pending");
    const plan = this.options.coordination.getPlan(task.metadata.namespace, task.metadata.name);
    if (plan?.goalComplete && !resumingAfterApproval) return this.complete(task, "Succeeded", `goal complete after ${iteration + 1} iterations: ${plan.summary}`);
    if (autonomy.maxIterations > 0 && iteration + 1 >= autonomy.maxIterations) {
      return this.complete(task, "Succeeded", `reached max iterations (${autonomy.maxIterations})`);
    }
    if (task.spec.suspend) {
      await this.writeStatus(task, { message: `autonomous task suspended at iteration ${iteration}` });
      return this.work.add(key, AUTONOMOUS_RECHECK_MS);
    }
    const attemptId = task.status?.jobName;
    if (attemptId) await this.releaseAttempt(attemptId);
    await this.writeStatus(task, {
      phase: "Pending",
      iteration: iteration + 1,
      jobName: undefined,
      message: `autonomous iteration ${iteration + 1}`,
      queuedAt: new Date().toISOString(),
      conditions: setCondition(task.status?.conditions, { type: "WaitingForApproval", status: "False", reason: "NoPendingApproval" }),
    });
    this.event(task, { type: "IterationCompleted", summary: `iteration ${iteration} done${plan ? `: ${plan.summary} (${plan.progressPct}%)` : ""}` });
  }

  private timedOut(task: Task): boolean {
    const timeout = this.timeoutMs(task);
    if (timeout === undefined) return false;
    const since = task.spec.type === "agent" ? task.metadata.creationTimestamp : task.status?.startTime;
    return Date.now() - Date.parse(since ?? new Date().toISOString()) >= timeout;
  }

  private timeoutMs(task: Task): number | undefined {
    if (task.spec.timeout) return parseDuration(task.spec.timeout);
    return task.spec.type === "agent" ? 30 * 60_000 : undefined;
  }

  private scheduleTimeoutCheck(task: Task): void {
    const timeout = this.timeoutMs(task);
    if (timeout !== undefined) this.work.add(taskKey(task.metadata.namespace, task.metadata.name), timeout + 10);
  }

  private async failOrRetry(task: Task, message: string): Promise<void> {
    const attempts = task.status?.attempts ?? 0;
    const policy = task.spec.retryPolicy;
    if (policy && attempts <= policy.maxRetries) {
      await this.releaseExitedAttempt(task);
      const initial = policy.initialDelay ? parseDuration(policy.initialDelay) : DEFAULT_RETRY_DELAY_MS;
      const delay = Math.min(MAX_RETRY_DELAY_MS, initial * (policy.backoffMultiplier ?? 2) ** (attempts - 1));
      const retryAfter = new Date(Date.now() + delay);
      await this.writeStatus(task, {
        phase: "Pending",
        jobName: undefined,
        message: undefined,
        resultRef: undefined,
        retryAfter: retryAfter.toISOString(),
        queuedAt: retryAfter.toISOString(),
      });
      this.event(task, { type: "TaskRetrying", severity: "warning", summary: `attempt ${attempts} failed (${message}); retry in ${delay} ms` });
      return;
    }
    return this.complete(task, "Failed", message);
  }

  private stopAttempt(task: Task, state: "killed", reason: string): void {
    const attemptId = task.status?.jobName;
    if (!attemptId) return;
    this.data.finishAttempt(attemptId, { state, reason });
    this.activeAttempts.delete(attemptId);
    this.runner.kill(attemptId, reason);
    this.pokeQueue();
  }

  private attemptExited(exit: AttemptExit): void {
    this.data.finishAttempt(exit.attemptId, {
      state: exit.exitCode === 0 ? "succeeded" : "failed",
      exitCode: exit.exitCode,
      reason: exit.reason,
    });
    this.activeAttempts.delete(exit.attemptId);
    const owner = this.attemptOwners.get(exit.attemptId);
    if (owner) this.work.add(taskKey(owner.namespace, owner.task));
    this.pokeQueue();
  }

  private attemptLogged(attemptId: string, chunk: string): void {
    const owner = this.attemptOwners.get(attemptId);
    if (owner) this.data.appendLog(owner.namespace, owner.task, owner.number, chunk);
  }

  /** Wakes the Tasks at the head of the run queue when a slot may have come free. */
  private pokeQueue(): void {
    for (const key of this.runQueue.head(this.freeSlots())) this.work.add(key);
  }

  // ---- Completion and deletion ----

  private async complete(task: Task, phase: TaskPhase, message: string): Promise<void> {
    const reason = { Succeeded: "TaskSucceeded", Failed: "TaskFailed", Cancelled: "TaskCancelled" }[phase as string] ?? "TaskCompleted";
    const hasResult = this.data.getResult(task.metadata.namespace, task.metadata.name) !== undefined;
    const completed = await this.writeStatus(task, {
      phase,
      completionTime: new Date().toISOString(),
      message,
      resultRef: { available: hasResult },
      retryAfter: undefined,
      executionOutcome: task.status?.executionOutcome ?? { phase, message },
      conditions: setCondition(task.status?.conditions, { type: "Complete", status: "True", reason, message }),
    });
    this.dequeue(taskKey(task.metadata.namespace, task.metadata.name));
    // Nothing the Task's attempts send is stored any more, so its Secret values need not be kept.
    this.options.secrets.forget(completed.metadata.namespace, completed.metadata.name);
    this.releaseSession(completed);
    this.options.approvals.cancelPending(completed.metadata.namespace, completed.metadata.name);
    this.options.coordination.deletePlan(completed.metadata.namespace, completed.metadata.name);
    this.event(completed, { type: reason, severity: phase === "Failed" ? "error" : "info", summary: message });
    await this.touchAgent(completed);
    await this.releaseExitedAttempt(completed);
    await this.refreshChildren(completed);
    const parent = parentTaskName(completed);
    if (parent) await this.wakeFamily(completed, parent);
  }

  /** A child ended: its parent's summary changes, and a sibling waiting for a child slot may start. */
  private async wakeFamily(child: Task, parent: string): Promise<void> {
    this.work.add(taskKey(parentNamespaceOf(child), parent));
    const namespace = child.metadata.namespace;
    const siblings = await this.store.list<TaskSpec, TaskStatus>("Task", { namespace, labelSelector: childrenOf(parent) });
    for (const sibling of siblings.items) if (sibling.status?.phase === "Pending") this.work.add(taskKey(namespace, sibling.metadata.name));
  }

  private releaseSession(task: Task): void {
    const session = task.spec.sessionRef;
    if (session) this.options.memory.unlockSession(task.metadata.namespace, session.name, task.metadata.name);
  }

  private async touchAgent(task: Task): Promise<void> {
    const ref = task.spec.agentRef;
    if (!ref) return;
    const agent = await this.store.get("Agent", ref.namespace ?? task.metadata.namespace, ref.name);
    if (!agent) return;
    await this.store
      .updateStatus({ ...agent, status: { ...(agent.status as object), lastUsed: new Date().toISOString() } })
      .catch((err) => this.log.debug({ err: errorMessage(err) }, "agent lastUsed not updated"));
  }

  /** Removes the Task's last attempt's directories once its process is gone; repeating it is harmless. */
  private async releaseExitedAttempt(task: Task): Promise<void> {
    const attemptId = task.status?.jobName;
    if (attemptId && !this.runner.isRunning(attemptId)) await this.releaseAttempt(attemptId);
  }

  private async releaseAttempt(attemptId: string): Promise<void> {
    this.attemptOwners.delete(attemptId);
    await this.runner.cleanup(attemptId);
  }

  private async finalizeDeletion(task: Task): Promise<void> {
    const { namespace, name } = task.metadata;
    this.dequeue(taskKey(namespace, name));
    const attemptId = task.status?.jobName;
    if (attemptId && this.runner.isRunning(attemptId)) this.stopAttempt(task, "killed", "task deleted");
    if (attemptId) await this.releaseAttempt(attemptId);
    this.data.deleteTaskData(namespace, name);
    this.options.journal.deleteTask(namespace, name);
    this.options.coordination.deleteMessagesOf(namespace, name);
    this.options.coordination.deletePlan(namespace, name);
    this.releaseSession(task);
    await this.store.update({
      ...task,
      metadata: { ...task.metadata, finalizers: (task.metadata.finalizers ?? []).filter((f) => f !== FINALIZER_CLEANUP) },
    });
  }

  /** Mirrors the children's phases and results into a top-level Task's status. */
  private async refreshChildren(task: Task): Promise<void> {
    if (parentTaskName(task)) return;
    // Children delegated to other namespaces are its children too.
    const children = (await this.store.list<TaskSpec, TaskStatus>("Task", { labelSelector: childrenOf(task.metadata.name) })).items.filter(
      (child) => parentNamespaceOf(child) === task.metadata.namespace,
    );
    if (children.length === 0 && !task.status?.childTasks) return;
    const childTasks = children
      .sort((a, b) => a.metadata.name.localeCompare(b.metadata.name))
      .map((child) => {
        const stored = this.data.getResult(child.metadata.namespace, child.metadata.name);
        const result = stored === undefined ? undefined : resultWithoutDiff(stored).text;
        return {
          name: child.metadata.name,
          agent: child.spec.agentRef?.name,
          phase: child.status?.phase ?? "Pending",
          ...(result !== undefined
            ? { result: result.length > CHILD_RESULT_LIMIT ? `${result.slice(0, CHILD_RESULT_LIMIT)}\n[truncated]` : result }
            : {}),
        };
      });
    if (JSON.stringify(childTasks) === JSON.stringify(task.status?.childTasks)) return;
    const fresh = await this.store.get<TaskSpec, TaskStatus>("Task", task.metadata.namespace, task.metadata.name);
    if (fresh) await this.writeStatus(fresh, { childTasks });
  }

  /** Webhooks: POST the outcome until a 2xx, every 30 s; a refused target (SSRF) is not retried. */
  private async deliverWebhook(task: Task, key: string): Promise<void> {
    const target = task.spec.webhookURL;
    if (!target || task.status?.webhookDelivered !== undefined) return;
    const { metadata, status } = task;
    const payload = {
      taskName: metadata.name,
      taskNamespace: metadata.namespace,
      phase: status?.phase,
      message: status?.message,
      startTime: status?.startTime,
      completionTime: status?.completionTime,
      attempts: status?.attempts,
      resultRef: status?.resultRef,
    };
    try {
      const url = checkEgressUrl(target, this.options.egress);
      const code = await postJsonGuarded(url, payload, { "X-Orka-Task": metadata.name, "X-Orka-Namespace": metadata.namespace }, this.options.egress, WEBHOOK_TIMEOUT_MS);
      if (code < 200 || code >= 300) throw new Error(`webhook answered HTTP ${code}`);
      await this.writeStatus(task, { webhookDelivered: true });
      this.event(task, { type: "WebhookDelivered", summary: `webhook answered HTTP ${code}` });
    } catch (err) {
      const refusal = err instanceof EgressRefused || (err as { cause?: unknown }).cause instanceof EgressRefused;
      this.event(task, { type: refusal ? "WebhookRefused" : "WebhookFailed", severity: "warning", summary: errorMessage(err) });
      if (refusal) await this.writeStatus(task, { webhookDelivered: false });
      else this.work.add(key, WEBHOOK_RETRY_MS);
    }
  }

  // ---- Schedules ----

  private async reconcileScheduled(task: Task, key: string): Promise<void> {
    let cron;
    try {
      cron = parseSchedule(task.spec);
    } catch (err) {
      return this.complete(task, "Failed", errorMessage(err));
    }
    const now = new Date();
    const since = new Date(task.status?.lastScheduleTime ?? task.metadata.creationTimestamp ?? now.toISOString());
    const tick = task.spec.suspend ? undefined : latestDueTick(cron, since, now);
    if (tick) await this.runScheduledTick(task, tick, now);
    await this.pruneScheduledChildren(task);
    await this.refreshChildren(task);
    const next = cron.nextRun(now);
    const fresh = await this.store.get<TaskSpec, TaskStatus>("Task", task.metadata.namespace, task.metadata.name);
    if (fresh) {
      await this.writeStatus(fresh, {
        lastScheduleTime: tick?.toISOString() ?? fresh.status?.lastScheduleTime,
        nextScheduleTime: next?.toISOString(),
      });
    }
    // A suspended schedule sleeps until its spec changes (the watch wakes it).
    if (next && !task.spec.suspend) this.work.add(key, Math.max(50, next.getTime() - Date.now() + 5));
  }

  private async runScheduledTick(task: Task, tick: Date, now: Date): Promise<void> {
    const deadline = (task.spec.startingDeadlineSeconds ?? DEFAULT_STARTING_DEADLINE_SECONDS) * 1000;
    if (now.getTime() - tick.getTime() > deadline) {
      this.event(task, { type: "ScheduleSkipped", severity: "warning", summary: `missed the run of ${tick.toISOString()} by more than the starting deadline` });
      return;
    }
    const children = await this.scheduledChildren(task);
    if ((task.spec.concurrencyPolicy ?? "Forbid") === "Forbid" && children.some((c) => !isTerminal(c))) {
      this.event(task, { type: "ScheduleSkipped", summary: `run of ${tick.toISOString()} skipped: the previous run is still active (Forbid)` });
      return;
    }
    const name = scheduledChildName(task.metadata.name, tick);
    const disable = task.metadata.annotations?.[ANNOTATION.disableCoordinationToolInjection];
    const child: Resource<TaskSpec, TaskStatus> = {
      apiVersion: API_VERSION,
      kind: "Task",
      metadata: {
        name,
        namespace: task.metadata.namespace,
        labels: { [LABEL.parentTask]: labelValue(task.metadata.name), [LABEL.scheduledRun]: "true" },
        annotations: { [ANNOTATION.parentTaskName]: task.metadata.name, ...(disable ? { [ANNOTATION.disableCoordinationToolInjection]: disable } : {}) },
        ownerReferences: [{ apiVersion: API_VERSION, kind: "Task", name: task.metadata.name, uid: task.metadata.uid!, controller: true }],
      },
      spec: scheduledChildSpec(task.spec),
    };
    try {
      await this.store.create(child);
      this.event(task, { type: "ScheduledRunCreated", summary: `created ${name}` });
    } catch (err) {
      if (!(err instanceof OrkaError && err.code === "already_exists")) throw err;
    }
  }

  private async scheduledChildren(task: Task): Promise<Task[]> {
    const list = await this.store.list<TaskSpec, TaskStatus>("Task", {
      namespace: task.metadata.namespace,
      labelSelector: `${childrenOf(task.metadata.name)},${LABEL.scheduledRun}=true`,
    });
    return list.items.sort((a, b) => (a.metadata.creationTimestamp ?? "").localeCompare(b.metadata.creationTimestamp ?? "") || a.metadata.name.localeCompare(b.metadata.name));
  }

  private async pruneScheduledChildren(task: Task): Promise<void> {
    const children = await this.scheduledChildren(task);
    const keep = { Succeeded: task.spec.successfulJobsHistoryLimit ?? 3, Failed: task.spec.failedJobsHistoryLimit ?? 1 };
    for (const phase of ["Succeeded", "Failed"] as const) {
      const finished = children.filter((c) => c.status?.phase === phase);
      for (const old of finished.slice(0, Math.max(0, finished.length - keep[phase]))) {
        await this.store.delete("Task", old.metadata.namespace, old.metadata.name).catch(() => undefined);
      }
    }
  }

  // ---- Providers ----

  private async reconcileProvider(namespace: string, name: string): Promise<void> {
    const provider = await this.store.get<ProviderSpec, ProviderStatus>("Provider", namespace, name);
    if (!provider) return;
    const { ready, message } = await providerReadiness(this.store, provider);
    if (provider.status?.ready === ready && provider.status?.message === message) return;
    await this.store.updateStatus({ ...provider, status: { ready, message, lastValidated: new Date().toISOString() } });
  }

  // ---- Tools ----

  private async reconcileTool(namespace: string, name: string): Promise<void> {
    const tool = await this.store.get<ToolSpec, ToolStatus>("Tool", namespace, name);
    if (!tool) return;
    const status = await probeTool(tool.spec, this.options.egress);
    const fresh = await this.store.get<ToolSpec, ToolStatus>("Tool", namespace, name);
    if (fresh && JSON.stringify(status) !== JSON.stringify(fresh.status ?? {})) await this.store.updateStatus({ ...fresh, status });
    this.work.add(`Tool/${namespace}/${name}`, TOOL_PROBE_INTERVAL_MS);
  }

  // ---- helpers ----

  /** Writes only a changed status: a write wakes this Task's reconcile again, so a no-op must not write. */
  private async writeStatus(task: Task, patch: Partial<TaskStatus>): Promise<Task> {
    const status = { ...task.status, ...patch };
    for (const field of Object.keys(status) as (keyof TaskStatus)[]) if (status[field] === undefined) delete status[field];
    if (JSON.stringify(status) === JSON.stringify(task.status ?? {})) return task;
    return this.store.updateStatus({ ...task, status });
  }

  private event(task: Task, event: ExecutionEventInput): void {
    this.data.appendEvent(task.metadata.namespace, task.metadata.name, event);
  }
}

/** A Pending Task's place in the run queue: its priority, aged from when it was (re)queued. */
function queuedTaskOf(task: Task): QueuedTask {
  const created = task.metadata.creationTimestamp ?? new Date().toISOString();
  return {
    key: taskKey(task.metadata.namespace, task.metadata.name),
    priority: task.spec.priority ?? 500,
    queuedAt: Date.parse(task.status?.queuedAt ?? created),
    createdAt: Date.parse(created),
  };
}

/** The run and step a forked Task continues from (`orka.ai/forked-from: <task>/<uid>/<run>/<step>`). */
function forkSourceOf(task: Task): { taskUid: string; run: number; upTo: number } | undefined {
  const match = /^[^/]+\/([^/]+)\/(\d+)\/(\d+)$/.exec(task.metadata.annotations?.[ANNOTATION.forkedFrom] ?? "");
  return match ? { taskUid: match[1], run: Number(match[2]), upTo: Number(match[3]) } : undefined;
}

/**
 * A failed attempt in its Task's words: an ai worker that ran to its end says what failed (the
 * model call with its provider and answer, a loop limit); a container or a lost worker, how it exited.
 */
function attemptFailure(task: Task, attempt: Attempt): string {
  if (attempt.exitCode === undefined) return "job failed";
  if (task.spec.type === "ai" && attempt.reason && attempt.exitCode !== LOST_EXIT_CODE) return attempt.reason;
  return `job failed: container exited with code ${attempt.exitCode} (reason=${attempt.reason ?? "Error"})`;
}
