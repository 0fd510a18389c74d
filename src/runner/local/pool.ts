import { fork, type ChildProcess } from "node:child_process";
import { existsSync } from "node:fs";
import { rename, rm } from "node:fs/promises";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import type { CheckoutPlan } from "../../workspace/checkout.ts";
import type { GitDirs, GitSettings } from "../../workspace/git.ts";
import { attemptGitDirs, checkOutBeside, prepareAttemptDirs } from "./dirs.ts";
import { LOST_EXIT_CODE, type AttemptDirs, type AttemptExit, type AttemptFiles, type WorkloadRunner } from "../runner.ts";
import { errorMessage } from "../../util/errors.ts";
import { openGate, type OutputGate } from "../../store/output-gate.ts";
import { BatchedSender } from "./batched-sender.ts";
import type { AttemptOrder, ControlPlaneAnswer, ControlPlaneCall, FromWorker, ToWorker } from "./messages.ts";

const WORKER_ENTRY = fileURLToPath(new URL("./worker-process.ts", import.meta.url));
/**
 * A worker allocates fast and keeps little: with V8's default, its young generation grows to 128 MiB of
 * mostly garbage. 8 MiB semi-spaces keep the resident memory near what is live, at no measured cost
 * in speed (bin/orka starts the server the same way, and the benchmark's bare loop both its processes;
 * docs/performance-history.md).
 */
export const WORKER_NODE_FLAGS = ["--max-semi-space-size=8"];
/** How long a worker process may take to remove a directory before the pool does it itself (it may be stuck). */
const DEFAULT_REMOVAL_WAIT_MS = 10_000;
/** How long a closing pool waits for a worker process to end its attempts and exit. */
const CLOSE_GRACE_MS = 3_000;
/** Clearly longer than a coding session's own grace (SIGTERM, then SIGKILL after 5 s), so a CLI slow to stop costs no other attempt. */
const KILL_GRACE_MS = 10_000;

/**
 * What a worker reads from its environment: where programs are (bubblewrap, git, npm), its home, temporary
 * and cache directories (npm's cache, the tools' scratch directories, the compile cache), locale and time
 * zone, Node's and npm's own settings (CA certificates, proxies, the registry, the compile cache), the log
 * level and the tests' fault switch. Everything else of the server's environment (its admin token, GitHub
 * token, marker secrets) stays in the server: an attempt's configuration comes over IPC.
 */
const WORKER_VARIABLES = /^(PATH|HOME|TMPDIR|LANG|LC_[A-Z]+|TZ|NODE_OPTIONS|NODE_COMPILE_CACHE|NODE_DISABLE_COMPILE_CACHE|XDG_CACHE_HOME|NODE_EXTRA_CA_CERTS|NODE_USE_ENV_PROXY|SSL_CERT_FILE|SSL_CERT_DIR|(HTTPS?|NO)_PROXY|(https?|no)_proxy|npm_config_[A-Za-z0-9_]+|NPM_CONFIG_[A-Z0-9_]+|ORKA_LOG_LEVEL|ORKA_FAULT_INJECTION)$/;

export function workerEnvironment(env: NodeJS.ProcessEnv = process.env): Record<string, string> {
  return Object.fromEntries(Object.entries(env).filter((entry): entry is [string, string] => WORKER_VARIABLES.test(entry[0]) && entry[1] !== undefined));
}

interface PooledWorker {
  process: ChildProcess;
  outgoing: BatchedSender<ToWorker>;
  /** Its calls to the control plane still being answered, by call id: cancelled when it gives up on one or exits. */
  calls: Map<number, AbortController>;
  attempts: Set<string>;
  /** Messages held until the process says it is ready: one sent while its modules load is dropped. */
  unsent?: AttemptOrder[];
  /** Directory trees it was asked to remove, by request id: removed here instead if it cannot do it. */
  removals: Map<number, PendingRemoval>;
}

interface PendingRemoval {
  path: string;
  done: (err?: Error) => void;
  timer: NodeJS.Timeout;
}

/** The worker running the fewest attempts, or undefined when there is none. */
function leastBusy(workers: PooledWorker[]): PooledWorker | undefined {
  return workers.reduce<PooledWorker | undefined>((least, w) => (!least || w.attempts.size < least.attempts.size ? w : least), undefined);
}

/**
 * The embedded runner: a fixed pool of worker processes, each running many attempts.
 * A worker process that dies fails only its own attempts, and is replaced.
 */
export class LocalWorkerPool implements WorkloadRunner {
  private readonly workers: PooledWorker[] = [];
  private readonly attemptWorker = new Map<string, PooledWorker>();
  private readonly killTimers = new Map<string, NodeJS.Timeout>();
  private readonly logListeners: ((attemptId: string, chunk: string) => void)[] = [];
  private readonly exitListeners: ((exit: AttemptExit) => void)[] = [];
  /** Removals waiting for a running attempt to end, by attempt id. */
  private readonly endWaiters = new Map<string, (() => void)[]>();
  private readonly attemptsDir: string;
  private readonly git: GitSettings;
  private readonly removalWaitMs: number;
  private readonly gate: OutputGate;
  private controlPlane: (call: ControlPlaneCall, signal: AbortSignal) => Promise<ControlPlaneAnswer> = async () => ({ status: 503, text: "" });
  private closing = false;
  private closed: Promise<void> | undefined;
  private lastRemovalId = 0;

  /** `gate` holds the orders to workers until the writes before them are committed (nothing, by default). */
  constructor(options: { size: number; attemptsDir: string; git: GitSettings; removalWaitMs?: number; gate?: OutputGate }) {
    this.attemptsDir = options.attemptsDir;
    this.git = options.git;
    this.removalWaitMs = options.removalWaitMs ?? DEFAULT_REMOVAL_WAIT_MS;
    this.gate = options.gate ?? openGate;
    for (let i = 0; i < options.size; i++) this.workers.push(this.spawnWorker());
  }

  prepare(attemptId: string, files: AttemptFiles = {}): Promise<AttemptDirs> {
    return prepareAttemptDirs(this.attemptsDir, attemptId, files, this.git);
  }

  async adopt(lostAttemptId: string, attemptId: string, files: AttemptFiles = {}): Promise<AttemptDirs> {
    await rename(join(this.attemptsDir, lostAttemptId), join(this.attemptsDir, attemptId)).catch(() => undefined);
    return prepareAttemptDirs(this.attemptsDir, attemptId, files, this.git);
  }

  checkOutForAttempt(attemptId: string, plan: CheckoutPlan): Promise<string> {
    return checkOutBeside(this.attemptsDir, attemptId, plan, this.git);
  }

  workspaceOf(attemptId: string): GitDirs {
    return attemptGitDirs(this.attemptsDir, attemptId);
  }

  start(attemptId: string, env: Record<string, string>): void {
    // A worker that is going away is skipped while another can take the attempt.
    const candidates = this.workers.filter((w) => w.process.connected);
    const worker = leastBusy(candidates.length > 0 ? candidates : this.workers)!;
    worker.attempts.add(attemptId);
    this.attemptWorker.set(attemptId, worker);
    this.send(worker, { type: "start", attemptId, env });
  }

  kill(attemptId: string, reason: string): void {
    const worker = this.attemptWorker.get(attemptId);
    if (!worker || this.killTimers.has(attemptId)) return;
    this.send(worker, { type: "kill", attemptId, reason });
    // A worker that does not let go in time is replaced, taking its other attempts down with it.
    const timer = setTimeout(() => {
      if (this.attemptWorker.get(attemptId) === worker) worker.process.kill("SIGKILL");
    }, KILL_GRACE_MS);
    timer.unref();
    this.killTimers.set(attemptId, timer);
  }

  isRunning(attemptId: string): boolean {
    return this.attemptWorker.has(attemptId);
  }

  /**
   * Removes an attempt's directories. Removing a tree is a file-system call and a callback per entry: the
   * least busy ready worker process does it, off this thread (the server's); with none ready, or one that
   * has not done it in time (10 s unless the pool was told otherwise), it is done here. An attempt that
   * has ended without making directories (an ai loop that ran no built-in tool) costs one look here and
   * nothing more. One still running (a deleted Task's, being killed) could write into them after they
   * went: it is killed, if it was not already, and they go once it has ended, which the kill bounds.
   */
  async cleanup(attemptId: string): Promise<void> {
    // What was written before the removal (the Task's end, its deletion) is committed before the files go.
    await this.gate.settled();
    this.kill(attemptId, "its directories are being removed");
    await this.ended(attemptId);
    const path = join(this.attemptsDir, attemptId);
    if (!existsSync(path)) return;
    const worker = leastBusy(this.workers.filter((candidate) => candidate.process.connected && !candidate.unsent));
    if (!worker) return rm(path, { recursive: true, force: true });
    const id = ++this.lastRemovalId;
    return new Promise((resolve, reject) => {
      const timer = setTimeout(() => this.removeHere(worker, id), this.removalWaitMs);
      timer.unref();
      worker.removals.set(id, { path, timer, done: (err) => (err ? reject(err) : resolve()) });
      worker.outgoing.push({ type: "remove", id, path });
    });
  }

  /** Who answers the workers' requests to the control plane (the worker API's routes, without a socket). */
  serveControlPlane(answer: (call: ControlPlaneCall, signal: AbortSignal) => Promise<ControlPlaneAnswer>): void {
    this.controlPlane = answer;
  }

  onLog(listener: (attemptId: string, chunk: string) => void): void {
    this.logListeners.push(listener);
  }

  onExit(listener: (exit: AttemptExit) => void): void {
    this.exitListeners.push(listener);
  }

  /**
   * Stops every worker process, once however often it is asked. One running attempts is told first (its
   * channel closes): it ends them, sandboxes included, and exits within a second; one that has not after
   * CLOSE_GRACE_MS is killed. Killed outright, it could leave behind a sandbox it was still setting up. One
   * running none is killed at once.
   */
  close(): Promise<void> {
    this.closed ??= this.stopWorkers();
    return this.closed;
  }

  private async stopWorkers(): Promise<void> {
    this.closing = true;
    await Promise.all(
      this.workers.map(
        (worker) =>
          new Promise<void>((resolve) => {
            if (worker.process.exitCode !== null || worker.process.signalCode !== null) return resolve();
            if (worker.attempts.size === 0) {
              worker.process.once("exit", () => resolve());
              worker.process.kill("SIGKILL");
              return;
            }
            const killAfterGrace = setTimeout(() => worker.process.kill("SIGKILL"), CLOSE_GRACE_MS);
            worker.process.once("exit", () => {
              clearTimeout(killAfterGrace);
              resolve();
            });
            if (worker.process.connected) worker.process.disconnect();
          }),
      ),
    );
  }

  private spawnWorker(): PooledWorker {
    const child = fork(WORKER_ENTRY, [], { execArgv: WORKER_NODE_FLAGS, env: workerEnvironment(), stdio: ["ignore", "inherit", "inherit", "ipc"], serialization: "advanced" });
    const outgoing = new BatchedSender<ToWorker>({
      write: (batch, done) => child.send(batch, done),
      // A batch the worker cannot take (it is dying: EPIPE, closed channel) loses only the attempts it was about.
      failed: (batch, err) => {
        for (const message of batch) {
          if (message.type === "remove") this.removeHere(worker, message.id);
          else if (message.type !== "reply") this.finish(worker, { attemptId: message.attemptId, exitCode: LOST_EXIT_CODE, reason: `worker process unreachable: ${err.message}` });
        }
      },
    });
    const worker: PooledWorker = { process: child, outgoing, calls: new Map(), attempts: new Set(), unsent: [], removals: new Map() };
    child.on("message", (batch: FromWorker[]) => {
      for (const message of batch) this.handle(worker, message);
    });
    child.on("exit", (code, signal) => this.workerExited(worker, code, signal));
    // The process could not be reached or signalled: cut it off. Without its runner it stops its
    // attempts and exits, and its exit loses them and brings a replacement.
    child.on("error", () => {
      if (child.connected) child.disconnect();
    });
    return worker;
  }

  private handle(worker: PooledWorker, message: FromWorker): void {
    if (message.type === "ready") this.flushUnsent(worker);
    if (message.type === "call") this.answerCall(worker, message);
    if (message.type === "cancel") worker.calls.get(message.id)?.abort();
    if (message.type === "log") for (const listener of this.logListeners) listener(message.attemptId, message.chunk);
    if (message.type === "exit") this.finish(worker, { attemptId: message.attemptId, exitCode: message.exitCode, reason: message.reason });
    if (message.type === "removed") this.removed(worker, message.id, message.error);
  }

  private removed(worker: PooledWorker, id: number, error?: string): void {
    const removal = this.takeRemoval(worker, id);
    removal?.done(error === undefined ? undefined : new Error(`could not remove ${removal.path}: ${error}`));
  }

  /** A removal the worker was asked for and cannot do (it is gone, or did not do it in time), done here. */
  private removeHere(worker: PooledWorker, id: number): void {
    const removal = this.takeRemoval(worker, id);
    if (removal) rm(removal.path, { recursive: true, force: true }).then(() => removal.done(), removal.done);
  }

  private takeRemoval(worker: PooledWorker, id: number): PendingRemoval | undefined {
    const removal = worker.removals.get(id);
    worker.removals.delete(id);
    clearTimeout(removal?.timer);
    return removal;
  }

  private answerCall(worker: PooledWorker, { id, type: _, ...call }: Extract<FromWorker, { type: "call" }>): void {
    const cancelled = new AbortController();
    worker.calls.set(id, cancelled);
    void this.controlPlane(call, cancelled.signal)
      .catch((err: unknown) => ({ status: 500, text: JSON.stringify({ error: { message: `the control plane failed the call: ${errorMessage(err)}` } }) }))
      .then((answer) => {
        worker.calls.delete(id);
        // A worker gone meanwhile, or one that gave up on the call, has nobody waiting for the answer.
        if (worker.process.connected && !cancelled.signal.aborted) worker.outgoing.push({ type: "reply", id, ...answer });
      });
  }

  private finish(worker: PooledWorker, exit: AttemptExit): void {
    worker.attempts.delete(exit.attemptId);
    if (this.attemptWorker.get(exit.attemptId) !== worker) return;
    this.attemptWorker.delete(exit.attemptId);
    clearTimeout(this.killTimers.get(exit.attemptId));
    this.killTimers.delete(exit.attemptId);
    for (const listener of this.exitListeners) listener(exit);
    for (const wake of this.endWaiters.get(exit.attemptId) ?? []) wake();
    this.endWaiters.delete(exit.attemptId);
  }

  /** Resolves once the attempt has ended here: at once when it is not running. */
  private ended(attemptId: string): Promise<void> {
    if (!this.attemptWorker.has(attemptId)) return Promise.resolve();
    return new Promise((resolve) => this.endWaiters.set(attemptId, [...(this.endWaiters.get(attemptId) ?? []), resolve]));
  }

  private workerExited(worker: PooledWorker, code: number | null, signal: NodeJS.Signals | null): void {
    const reason = `worker process exited (${signal ?? `code ${code}`})`;
    for (const call of worker.calls.values()) call.abort();
    for (const id of [...worker.removals.keys()]) this.removeHere(worker, id);
    for (const attemptId of [...worker.attempts]) this.finish(worker, { attemptId, exitCode: LOST_EXIT_CODE, reason });
    const index = this.workers.indexOf(worker);
    if (index >= 0 && !this.closing) this.workers[index] = this.spawnWorker();
  }

  /**
   * An order (start, kill) tells of writes (the attempt's record, the Task's end): it leaves once they are
   * committed. Replies to a worker's calls need no such wait: the API held each until its own commit.
   */
  private send(worker: PooledWorker, message: AttemptOrder): void {
    this.gate.release(() => this.sendNow(worker, message));
  }

  private sendNow(worker: PooledWorker, message: AttemptOrder): void {
    if (!worker.process.connected) return this.finish(worker, { attemptId: message.attemptId, exitCode: LOST_EXIT_CODE, reason: "worker process is not running" });
    if (worker.unsent) return void worker.unsent.push(message);
    worker.outgoing.push(message);
  }

  private flushUnsent(worker: PooledWorker): void {
    const unsent = worker.unsent ?? [];
    worker.unsent = undefined;
    for (const message of unsent) this.sendNow(worker, message);
  }
}
