import type { TaskSecrets } from "../../policy/redact.ts";
import type { Attempt, AttemptState } from "../data-store.ts";
import type { Db } from "./db.ts";
import { SqliteTaskDataStore } from "./data-store.ts";

/** Where a log stream's held-back tail belongs. */
interface LogStream {
  attemptId: string;
  namespace: string;
  task: string;
  attempt: number;
  tail: string;
}

/**
 * What reaches storage from the worker process itself rather than through /internal/v1 — its log
 * output and its failure reason, which becomes the Task's status message — is scrubbed of the Task's
 * Secret values here. (Results, events, journal steps and the rest are scrubbed as they enter the
 * control plane, by the internal API's hook.)
 */
export class RedactingTaskDataStore extends SqliteTaskDataStore {
  private readonly secrets: TaskSecrets;
  /**
   * Logs arrive in chunks that may split a value, so each running attempt's stream holds back the
   * last characters that could start one until the next chunk, or the attempt's end, completes them.
   */
  private readonly openLogStreams = new Map<string, LogStream>();
  /** The same streams by attempt id: an attempt's end finds its stream without looking through every running one. */
  private readonly logStreamKeys = new Map<string, string>();

  constructor(db: Db, secrets: TaskSecrets) {
    super(db);
    this.secrets = secrets;
  }

  override createAttempt(attempt: Omit<Attempt, "state" | "startedAt" | "sessionTools">, tokenHash: string): Attempt {
    const created = super.createAttempt(attempt, tokenHash);
    const key = streamKey(created.namespace, created.task, created.number);
    const replaced = this.openLogStreams.get(key);
    if (replaced) this.closeLogStream(replaced.attemptId);
    this.openLogStreams.set(key, { attemptId: created.id, namespace: created.namespace, task: created.task, attempt: created.number, tail: "" });
    this.logStreamKeys.set(created.id, key);
    return created;
  }

  override appendLog(namespace: string, task: string, attempt: number, chunk: string): void {
    const stream = this.openLogStreams.get(streamKey(namespace, task, attempt));
    if (!stream) return super.appendLog(namespace, task, attempt, this.secrets.redact(namespace, task, chunk));
    const text = this.secrets.redact(namespace, task, stream.tail + chunk);
    let cut = Math.max(text.length - Math.max(this.secrets.longestForm(namespace, task) - 1, 0), 0);
    // A character outside the BMP is two code units; splitting them would store two broken halves.
    if (cut > 0 && isLowSurrogate(text.charCodeAt(cut))) cut--;
    stream.tail = text.slice(cut);
    if (cut > 0) super.appendLog(namespace, task, attempt, text.slice(0, cut));
  }

  override finishAttempt(id: string, outcome: { state: Exclude<AttemptState, "running">; exitCode?: number; reason?: string }): void {
    this.closeLogStream(id);
    super.finishAttempt(id, outcome.reason === undefined ? outcome : { ...outcome, reason: this.secrets.redactForAttempt(id, outcome.reason) });
  }

  override deleteTaskData(namespace: string, task: string): void {
    for (const [key, stream] of this.openLogStreams) {
      if (stream.namespace !== namespace || stream.task !== task) continue;
      this.openLogStreams.delete(key);
      this.logStreamKeys.delete(stream.attemptId);
    }
    super.deleteTaskData(namespace, task);
    this.secrets.forget(namespace, task);
  }

  /** Writes what the stream held back: nothing more can complete it. */
  private closeLogStream(attemptId: string): void {
    const key = this.logStreamKeys.get(attemptId);
    if (key === undefined) return;
    this.logStreamKeys.delete(attemptId);
    const stream = this.openLogStreams.get(key);
    if (!stream) return;
    this.openLogStreams.delete(key);
    if (stream.tail) super.appendLog(stream.namespace, stream.task, stream.attempt, stream.tail);
  }
}

const isLowSurrogate = (code: number) => code >= 0xdc00 && code <= 0xdfff;
const streamKey = (namespace: string, task: string, attempt: number) => `${namespace}/${task}#${attempt}`;
