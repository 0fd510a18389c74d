import type { Task, TaskSpec, TaskStatus } from "../../resources/task.ts";
import { OrkaError } from "../../util/errors.ts";
import { admit } from "../admission.ts";
import { scheduleTick } from "../schedules.ts";
import { deliverWebhook } from "../webhooks.ts";
import { lose, resume, retry } from "./attempt-exits.ts";
import { autonomyOf, expireApprovals, iterate, park, suspend } from "./autonomy.ts";
import { childSummary } from "./child-summary.ts";
import { completion } from "./completion.ts";
import { recordEvent, type TaskContext } from "./context.ts";
import { decideTask } from "./decide.ts";
import { deliver } from "./delivery.ts";
import { addFinalizer, finalizeDeletion } from "./deletion.ts";
import { keyOf, taskKey } from "./keys.ts";
import { startAttempt } from "./start-attempt.ts";
import { commit, type Transition } from "./status.ts";
import type { Fact, NextStep, TaskWorld } from "./steps.ts";
import { acceptedStatus, createdEvent } from "./acceptance.ts";

const CONFLICT_RETRY_MS = 50;

/**
 * Reconciles a Task level-triggered: read what the decision asks for, decide (`decideTask`), and
 * apply the step with one compare-and-swap status write. A pass that lost its write to another
 * writer runs again shortly, from what is there then.
 */
export class TaskReconciler {
  private readonly ctx: TaskContext;

  constructor(ctx: TaskContext) {
    this.ctx = ctx;
  }

  async reconcile(namespace: string, name: string): Promise<void> {
    const key = taskKey(namespace, name);
    const task = await this.ctx.store.get<TaskSpec, TaskStatus>("Task", namespace, name);
    if (!task) return this.ctx.attempts.dequeue(key);
    try {
      await this.pass(task);
    } catch (err) {
      if (err instanceof OrkaError && (err.code === "conflict" || err.code === "not_found")) return this.ctx.wake(key, CONFLICT_RETRY_MS);
      throw err;
    }
  }

  /** Ends a Task now, through the normal completion (its attempt is killed first). */
  async cancel(task: Task, message: string): Promise<void> {
    await commit(this.ctx.store, task, stoppingAttempt(this.ctx, task, message, await completion(this.ctx, task, "Cancelled", message)));
  }

  private async pass(task: Task): Promise<void> {
    const world: TaskWorld = { now: Date.now(), maxActivePerNamespace: this.ctx.maxActivePerNamespace };
    const read = new Set<Fact>();
    let step = decideTask(task, world);
    while (step.kind === "read") {
      // A fact asked for twice was not recorded by its reader: stop rather than loop.
      if (read.has(step.fact)) throw new OrkaError("internal", `the Task decision asked again for "${step.fact}", which the reconciler read already`);
      read.add(step.fact);
      await this.read(task, world, step.fact);
      step = decideTask(task, world);
    }
    expireApprovals(this.ctx, task, world);
    if (step.kind === "start") {
      const { plan } = step;
      return this.ctx.attempts.withSlot(task, async () => commit(this.ctx.store, task, await startAttempt(this.ctx, task, plan)));
    }
    if (step.kind === "deliver") {
      const { written, transition } = await deliver(this.ctx, task);
      return commit(this.ctx.store, written, transition);
    }
    await commit(this.ctx.store, task, await this.transition(task, step));
  }

  private async read(task: Task, world: TaskWorld, fact: Fact): Promise<void> {
    const { namespace, name, uid } = task.metadata;
    switch (fact) {
      case "attempt": {
        const latest = this.ctx.data.latestAttempt(namespace, name);
        world.attempt = latest && latest.id === task.status?.jobName ? latest : null;
        world.workerAlive = !!world.attempt && this.ctx.attempts.isRunning(world.attempt.id);
        if (world.attempt && world.attempt.state !== "running") this.ctx.attempts.ended(world.attempt.id);
        return;
      }
      case "session":
        world.session = this.takeSession(task);
        return;
      case "runningInNamespace":
        world.runningInNamespace = await this.ctx.store.countInPhase("Task", namespace, "Running");
        return;
      case "admission":
        world.admission = await admit(this.ctx.store, task, this.ctx);
        return;
      case "turn":
        world.turn = this.ctx.attempts.takeTurn(task);
        return;
      case "autonomy":
        world.autonomy = await autonomyOf(this.ctx.store, task);
        return;
      case "approvals":
        world.approvals = this.ctx.approvals.listForTask(namespace, name, uid);
        return;
      case "plan":
        world.plan = this.ctx.coordination.getPlan(namespace, name) ?? null;
    }
  }

  /** Takes the Task's session when it is free, creating it first when the Task may. */
  private takeSession(task: Task): TaskWorld["session"] {
    const { memory } = this.ctx;
    const namespace = task.metadata.namespace;
    const session = task.spec.sessionRef!;
    if (!memory.sessionExists(namespace, session.name)) {
      if (!session.create) return "missing";
      memory.ensureSession(namespace, session.name);
    }
    return memory.lockSession(namespace, session.name, task.metadata.name) ? "held" : "busy";
  }

  private async transition(task: Task, step: Exclude<NextStep, { kind: "read" | "start" | "deliver" }>): Promise<Transition> {
    const { ctx } = this;
    const key = keyOf(task);
    switch (step.kind) {
      case "finalize":
        await finalizeDeletion(ctx, task);
        return {};
      case "guard":
        await addFinalizer(ctx, task);
        return {};
      case "accept":
        return { status: acceptedStatus(), after: (written) => recordEvent(ctx, written, createdEvent(written)) };
      case "schedule":
        ctx.attempts.dequeue(key);
        return { status: { phase: "Scheduled" } };
      case "tick":
        return scheduleTick(ctx, task);
      case "wait":
        // It leaves the run queue meanwhile: its place goes to the next.
        return { status: step.message === undefined ? undefined : { message: step.message }, after: () => this.lookAgainLater(key, step.delayMs) };
      case "queue":
      case "none":
        return {};
      case "watch":
        return { status: await childSummary(ctx.store, ctx.data, task), after: () => ctx.wake(key, step.delayMs) };
      case "lose":
        return lose(ctx, task, step);
      case "complete": {
        const completed = await completion(ctx, task, step.phase, step.message);
        return step.stopAttempt ? stoppingAttempt(ctx, task, step.stopAttempt, completed) : completed;
      }
      case "retry":
        return retry(ctx, task, step);
      case "resume":
        return resume(ctx, task, step);
      case "park":
        return park(ctx, task, step);
      case "suspend":
        return suspend(ctx, task, step);
      case "iterate":
        return iterate(ctx, task, step);
      case "settle":
        ctx.attempts.dequeue(key);
        // A cancelled or timed-out attempt exits after its Task completed: its directories go now.
        await ctx.attempts.releaseExited(task);
        return step.deliverWebhook ? deliverWebhook(ctx, task) : {};
    }
  }

  private lookAgainLater(key: string, delayMs: number): void {
    this.ctx.attempts.dequeue(key);
    this.ctx.wake(key, delayMs);
  }
}

/**
 * The completion of a Task whose attempt is still running: the attempt is killed once the completion
 * is written, not before — a pass whose write lost a conflict then finds the attempt still running
 * and decides again, where a killed one would leave the Task Running for ever.
 */
function stoppingAttempt(ctx: TaskContext, task: Task, reason: string, completed: Transition): Transition {
  return {
    ...completed,
    after: async (written) => {
      ctx.attempts.stop(task, reason);
      await completed.after?.(written);
    },
  };
}
