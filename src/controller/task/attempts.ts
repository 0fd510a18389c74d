import { LOST_EXIT_CODE, type AttemptExit, type WorkloadRunner } from "../../runner/runner.ts";
import type { LogChunk, TaskDataStore } from "../../store/data-store.ts";
import { DEFAULT_PRIORITY, type Task } from "../../resources/task.ts";
import type { Wake } from "../options.ts";
import { keyOf, taskKey } from "./keys.ts";
import { RunQueue, type QueuedTask } from "./run-queue.ts";

/** How long attempts' output may wait to be stored: under load, many attempts' chunks share one commit. */
const LOG_WRITE_DELAY_MS = 20;

interface AttemptOwner {
  namespace: string;
  task: string;
  number: number;
}

/**
 * The worker slots and the attempts that hold them: the run queue of admitted Tasks, the attempts
 * running and whose they are. An attempt's exit frees its slot and wakes its Task and the queue.
 */
export class Attempts {
  private readonly runner: WorkloadRunner;
  private readonly data: TaskDataStore;
  private readonly slots: number;
  private readonly wake: Wake;
  private readonly queue = new RunQueue();
  private readonly active = new Set<string>();
  /** Tasks taken from the run queue whose attempt is being set up: each holds a worker slot already. */
  private readonly starting = new Set<string>();
  private readonly owners = new Map<string, AttemptOwner>();
  private unwrittenLogs: LogChunk[] = [];
  /** Set by halt(): nothing starts after it. */
  private halted = false;

  constructor(options: { runner: WorkloadRunner; data: TaskDataStore; slots: number; wake: Wake }) {
    this.runner = options.runner;
    this.data = options.data;
    this.slots = options.slots;
    this.wake = options.wake;
    this.runner.onExit((exit) => this.exited(exit));
    this.runner.onLog((attemptId, chunk) => this.logged(attemptId, chunk));
  }

  /**
   * Attempts the store believes are running belong to a previous server: their processes are gone.
   * Their directories stay until the Task resumes in them or finishes.
   */
  recoverLost(): void {
    for (const attempt of this.data.runningAttempts()) {
      this.data.finishAttempt(attempt.id, { state: "failed", exitCode: LOST_EXIT_CODE, reason: "worker lost: the server restarted" });
    }
  }

  halt(): void {
    this.halted = true;
  }

  /** Puts a Task that may start in the run queue (again). */
  enqueue(task: Task): void {
    this.queue.offer(queuedTaskOf(task));
  }

  /** Queues an admitted Task; whether its turn for a worker slot has come. */
  takeTurn(task: Task): boolean {
    this.enqueue(task);
    return !this.halted && this.queue.head(this.freeSlots()).includes(keyOf(task));
  }

  /** Takes the Task out of the run queue: its place goes to the next. */
  dequeue(key: string): void {
    if (this.queue.remove(key)) this.pokeQueue();
  }

  /** Holds a worker slot for the Task while `start` sets up its attempt. */
  async withSlot(task: Task, start: () => Promise<void>): Promise<void> {
    const key = keyOf(task);
    // Its turn was read before an await: passes that ran meanwhile may have taken the free slots, so
    // the turn is checked again and the slot taken in one synchronous step. A Task that lost its
    // turn stays queued and is woken when a slot comes free.
    if (this.halted || !this.queue.head(this.freeSlots()).includes(key)) return;
    // The slot is taken now: other reconciles running while this attempt is set up must not count it free.
    this.queue.remove(key);
    this.starting.add(key);
    try {
      await start();
    } finally {
      this.starting.delete(key);
      this.pokeQueue();
    }
  }

  /** Runs the attempt with its `ORKA_*` environment: it holds a slot until it exits, and its logs and exit go to its Task. */
  start(attemptId: string, owner: AttemptOwner, env: Record<string, string>): void {
    this.active.add(attemptId);
    this.owners.set(attemptId, owner);
    this.runner.start(attemptId, env);
  }

  /** An attempt the store records as ended holds no slot (its exit usually said so already). */
  ended(attemptId: string): void {
    this.active.delete(attemptId);
  }

  /** Kills the Task's attempt, recording why; its slot is free at once. */
  stop(task: Task, reason: string): void {
    const attemptId = task.status?.jobName;
    if (!attemptId) return;
    this.writeLogs(); // what it wrote before is stored before its end is
    this.data.finishAttempt(attemptId, { state: "killed", reason });
    this.active.delete(attemptId);
    this.runner.kill(attemptId, reason);
    this.pokeQueue();
  }

  isRunning(attemptId: string): boolean {
    return this.runner.isRunning(attemptId);
  }

  /** The attempt resuming a lost one took over its directories: the lost one's logs are no longer wanted. */
  disown(attemptId: string): void {
    this.writeLogs();
    this.owners.delete(attemptId);
  }

  /** Removes an attempt's directories; repeating it is harmless. */
  async release(attemptId: string): Promise<void> {
    this.writeLogs();
    this.owners.delete(attemptId);
    await this.runner.cleanup(attemptId);
  }

  /** Removes the Task's last attempt's directories once its process is gone. */
  async releaseExited(task: Task): Promise<void> {
    const attemptId = task.status?.jobName;
    if (attemptId && !this.runner.isRunning(attemptId)) await this.release(attemptId);
  }

  private freeSlots(): number {
    return this.slots - this.active.size - this.starting.size;
  }

  private exited(exit: AttemptExit): void {
    // The runner also runs attempts that are not Tasks' (compat requests): those are not ours to record.
    if (!this.owners.has(exit.attemptId) && !this.active.has(exit.attemptId)) return;
    this.writeLogs(); // an attempt's output is all stored before its end is
    this.data.finishAttempt(exit.attemptId, { state: exit.exitCode === 0 ? "succeeded" : "failed", exitCode: exit.exitCode, reason: exit.reason });
    this.active.delete(exit.attemptId);
    const owner = this.owners.get(exit.attemptId);
    if (owner) this.wake(taskKey(owner.namespace, owner.task));
    this.pokeQueue();
  }

  /**
   * Output is written at most LOG_WRITE_DELAY_MS after it arrives, all attempts' chunks of that time in one
   * commit (an attempt's end, stop or release writes what waits first).
   */
  private logged(attemptId: string, chunk: string): void {
    const owner = this.owners.get(attemptId);
    if (!owner) return;
    if (this.unwrittenLogs.length === 0) setTimeout(() => this.writeLogs(), LOG_WRITE_DELAY_MS).unref();
    this.unwrittenLogs.push({ namespace: owner.namespace, task: owner.task, attempt: owner.number, chunk });
  }

  private writeLogs(): void {
    const chunks = this.unwrittenLogs;
    this.unwrittenLogs = [];
    if (chunks.length > 0) this.data.appendLogs(chunks);
  }

  /** Wakes the Tasks at the head of the run queue when a slot may have come free. */
  private pokeQueue(): void {
    for (const key of this.queue.head(this.freeSlots())) this.wake(key);
  }
}

/** A Pending Task's place in the run queue: its priority, aged from when it was (re)queued. */
function queuedTaskOf(task: Task): QueuedTask {
  const created = task.metadata.creationTimestamp ?? new Date().toISOString();
  return {
    key: keyOf(task),
    priority: task.spec.priority ?? DEFAULT_PRIORITY,
    queuedAt: Date.parse(task.status?.queuedAt ?? created),
    createdAt: Date.parse(created),
  };
}
