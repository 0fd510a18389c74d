import { type TaskPhase, type TaskSpec, type TaskStatus, isTerminal, type Task } from "../resources/task.ts";
import type { WatchEvent } from "../store/resource-store.ts";
import { OrkaError } from "../util/errors.ts";
import type { Logger } from "../util/logger.ts";
import { parentNamespaceOf, parentTaskName } from "../resources/parent-link.ts";
import type { ControllerOptions } from "./options.ts";
import { ProviderReconciler } from "./providers.ts";
import { Attempts } from "./task/attempts.ts";
import type { TaskContext } from "./task/context.ts";
import { taskKey } from "./task/keys.ts";
import { TaskReconciler } from "./task/reconciler.ts";
import { ToolReconciler } from "./tools.ts";
import { WorkQueue } from "./work-queue.ts";

export type { ControllerOptions } from "./options.ts";

/** A failed reconcile is tried again after this long. */
const RECONCILE_RETRY_MS = 1000;
/** A child's change reaches its parent a little later, so a burst of changes wakes it once. */
const PARENT_WAKE_MS = 200;

type ReconciledKind = "Task" | "Provider" | "Tool";

/**
 * The control loop: watches the store and reconciles each changed object level-triggered, one
 * reconcile per key at a time, through the reconciler of its kind.
 */
export class Controller {
  private readonly options: ControllerOptions;
  private readonly log: Logger;
  private readonly work: WorkQueue;
  private readonly attempts: Attempts;
  private readonly tasks: TaskReconciler;
  private readonly reconcilers: Record<ReconciledKind, { reconcile(namespace: string, name: string): Promise<void> }>;
  private unwatch?: () => void;

  constructor(options: ControllerOptions) {
    this.options = options;
    this.log = options.logger;
    this.work = new WorkQueue(
      (key) => this.reconcile(key),
      (key, message) => {
        this.log.warn({ key, err: message }, "reconcile failed; retrying");
        this.work.add(key, RECONCILE_RETRY_MS);
      },
    );
    const wake = (key: string, delayMs?: number) => this.work.add(key, delayMs);
    this.attempts = new Attempts({ runner: options.runner, data: options.data, slots: options.slots, wake });
    const context: TaskContext = {
      ...options,
      attempts: this.attempts,
      wake,
      // The server learns its own URL only after the controller is built.
      get controllerURL() {
        return options.controllerURL;
      },
    };
    this.tasks = new TaskReconciler(context);
    this.reconcilers = {
      Task: this.tasks,
      Provider: new ProviderReconciler(options.store),
      Tool: new ToolReconciler({ store: options.store, reach: { egress: options.egress, stdio: options.mcpStdio }, wake }),
    };
  }

  async start(): Promise<void> {
    const { store } = this.options;
    this.attempts.recoverLost();
    this.unwatch = store.watch((event) => this.onWatch(event));
    const tasks = (await store.list<TaskSpec, TaskStatus>("Task")).items;
    // The whole backlog is queued before the first reconcile can start anything, so a restart
    // starts the highest priorities first, not whichever Task the listing happens to reach first.
    for (const task of tasks) if (!task.status?.phase || task.status.phase === "Pending") this.attempts.enqueue(task);
    for (const task of tasks) this.work.add(taskKey(task.metadata.namespace, task.metadata.name));
    for (const kind of ["Provider", "Tool"] as const) {
      for (const object of (await store.list(kind)).items) this.work.add(`${kind}/${object.metadata.namespace}/${object.metadata.name}`);
    }
  }

  /** Starts nothing more; reconciles already running finish. Running attempts are the runner's to stop. */
  async stop(): Promise<void> {
    this.attempts.halt();
    this.unwatch?.();
    this.work.stop();
    await this.work.idle();
  }

  /** Cancels a Task through the normal completion path (kills its worker first). */
  async cancel(namespace: string, name: string, message: string): Promise<TaskPhase> {
    const task = await this.options.store.get<TaskSpec, TaskStatus>("Task", namespace, name);
    if (!task) throw new OrkaError("not_found", "task not found");
    if (isTerminal(task)) return task.status!.phase!;
    await this.tasks.cancel(task, message);
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
      if (parent) this.work.add(taskKey(parentNamespaceOf(event.object as Task), parent), PARENT_WAKE_MS);
    } else if (kind === "Provider" || kind === "Tool") {
      if (event.type !== "DELETED") this.work.add(`${kind}/${metadata.namespace}/${metadata.name}`);
    } else if (kind === "Secret") {
      // A Provider's readiness depends on the Secrets of its namespace.
      void this.options.store.list("Provider", { namespace: metadata.namespace }).then((list) => {
        for (const p of list.items) this.work.add(`Provider/${p.metadata.namespace}/${p.metadata.name}`);
      });
    }
  }

  private reconcile(key: string): Promise<void> {
    const [kind, namespace, name] = key.split("/");
    return this.reconcilers[kind as ReconciledKind].reconcile(namespace, name);
  }
}
