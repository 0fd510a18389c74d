import { EventEmitter } from "node:events";
import type {
  ArtifactInfo,
  Attempt,
  AttemptState,
  ExecutionEvent,
  ExecutionEventInput,
  LogChunk,
  SessionTool,
  TaskDataStore,
} from "../data-store.ts";
import { deleteTaskRows, inTransaction, prepared, preparedWrite, type Db } from "./db.ts";
import { growingTables, nextKey, raiseFloor } from "./growing-keys.ts";
import { RunningAttemptCache } from "./running-attempts.ts";

interface EventRow {
  seq: number;
  type: string;
  severity: ExecutionEvent["severity"];
  tool_name: string | null;
  tool_call_id: string | null;
  summary: string;
  content: string | null;
  journal_run: number | null;
  journal_step: number | null;
  created_at: string;
}

interface AttemptRow {
  id: string;
  namespace: string;
  task: string;
  task_uid: string;
  number: number;
  allowed_tools: string;
  session_tools: string | null;
  state: AttemptState;
  exit_code: number | null;
  reason: string | null;
  started_at: string;
  ended_at: string | null;
}

const now = () => new Date().toISOString();
const topic = (kind: string, namespace: string, task: string) => `${kind}\u0000${namespace}\u0000${task}`;

export class SqliteTaskDataStore implements TaskDataStore {
  private readonly db: Db;
  private readonly notifications = new EventEmitter();
  private readonly attemptsByToken = new RunningAttemptCache();
  /** The newest seq of each Task whose events someone listens to, as this store appended it. */
  private readonly heardSeq = new Map<string, number>();
  private readonly statements;

  constructor(db: Db) {
    this.db = db;
    this.notifications.setMaxListeners(0);
    this.statements = {
      putResult: preparedWrite(db, "INSERT OR REPLACE INTO results (namespace, task, body, created_at) VALUES (?, ?, ?, ?)"),
      getResult: db.prepare<[string, string], { body: string }>("SELECT body FROM results WHERE namespace = ? AND task = ?"),
      insertEvent: db.prepare<unknown[], { seq: number }>(
        `INSERT INTO events (seq, namespace, task, type, severity, tool_name, tool_call_id, summary, content, journal_run, journal_step, created_at)
         VALUES (${nextKey("events")}, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?) RETURNING seq`,
      ),
      latestSeq: db.prepare<[string, string], { seq: number | null }>("SELECT max(seq) AS seq FROM events WHERE namespace = +? AND task = +?"),
      appendLog: preparedWrite(db, `INSERT INTO logs (id, namespace, task, attempt, chunk) VALUES (${nextKey("logs")}, ?, ?, ?, ?)`),
      readLogs: db.prepare<[string, string, number], { id: number; chunk: string }>(
        "SELECT id, chunk FROM logs WHERE namespace = +? AND task = +? AND id > ? ORDER BY id",
      ),
      putArtifact: preparedWrite(db, "INSERT OR REPLACE INTO artifacts (namespace, task, file, content, created_at) VALUES (?, ?, ?, ?, ?)"),
      listArtifacts: db.prepare<[string, string], { file: string; size: number; created_at: string }>(
        "SELECT file, length(content) AS size, created_at FROM artifacts WHERE namespace = +? AND task = +? ORDER BY file",
      ),
      getArtifact: db.prepare<[string, string, string], { content: Buffer }>(
        "SELECT content FROM artifacts WHERE namespace = ? AND task = ? AND file = ?",
      ),
      insertAttempt: preparedWrite(
        db,
        `INSERT INTO attempts (id, namespace, task, task_uid, number, token_hash, allowed_tools, state, started_at)
         VALUES (?, ?, ?, ?, ?, ?, ?, 'running', ?)`,
      ),
      attemptByToken: db.prepare<[string], AttemptRow>("SELECT * FROM attempts WHERE token_hash = ?"),
      latestAttempt: db.prepare<[string, string], AttemptRow>(
        "SELECT * FROM attempts WHERE namespace = +? AND task = +? ORDER BY started_at DESC, number DESC LIMIT 1",
      ),
      runningAttempts: db.prepare<[], AttemptRow>("SELECT * FROM attempts WHERE state = 'running'"),
      recordSessionTools: preparedWrite(db, "UPDATE attempts SET session_tools = ? WHERE id = ?"),
      finishAttempt: preparedWrite(
        db,
        "UPDATE attempts SET state = ?, exit_code = ?, reason = ?, ended_at = ? WHERE id = ? AND state = 'running'",
      ),
    };
  }

  putResult(namespace: string, task: string, body: string): void {
    this.statements.putResult.run(namespace, task, body, now());
  }

  getResult(namespace: string, task: string): string | undefined {
    return this.statements.getResult.get(namespace, task)?.body;
  }

  appendEvent(namespace: string, task: string, input: ExecutionEventInput): ExecutionEvent {
    return this.appendEvents(namespace, task, [input])[0];
  }

  appendEvents(namespace: string, task: string, inputs: ExecutionEventInput[]): ExecutionEvent[] {
    return this.appendEventsWith(namespace, task, inputs, () => undefined).events;
  }

  appendEventsWith<T>(namespace: string, task: string, inputs: ExecutionEventInput[], write: () => T): { events: ExecutionEvent[]; written: T } {
    const name = topic("event", namespace, task);
    // Nobody can subscribe between here and the notifications below (no await), so without a
    // listener the seq before the batch is not needed.
    const heard = this.notifications.listenerCount(name) > 0;
    const { appended, written } = inTransaction(this.db, () => {
      const written = write();
      let previousSeq = heard && inputs.length > 0 ? (this.heardSeq.get(name) ?? this.latestEventSeq(namespace, task)) : 0;
      const appended = inputs.map((input) => {
        const event = this.insertEvent(namespace, task, input);
        const link = { event, previousSeq };
        previousSeq = event.seq;
        return link;
      });
      return { appended, written };
    });
    // Listeners hear of the events once their transaction has ended, in order, each with the one before it; what
    // they send out of the process waits for the commit (see OutputGate).
    if (heard && appended.length > 0) this.heardSeq.set(name, appended.at(-1)!.event.seq);
    if (heard) for (const { event, previousSeq } of appended) this.notifications.emit(name, event, previousSeq);
    return { events: appended.map(({ event }) => event), written };
  }

  listEvents(namespace: string, task: string, options: { after?: number; limit?: number; type?: string } = {}): ExecutionEvent[] {
    const where = ["namespace = +?", "task = +?", "seq > ?"];
    const params: unknown[] = [namespace, task, options.after ?? 0];
    if (options.type) {
      where.push("type = +?");
      params.push(options.type);
    }
    // A negative LIMIT is none.
    const limit = options.limit && options.limit > 0 ? Math.floor(options.limit) : -1;
    return prepared<unknown[], EventRow>(this.db, `SELECT * FROM events WHERE ${where.join(" AND ")} ORDER BY seq LIMIT +?`)
      .all(...params, limit)
      .map(toEvent);
  }

  latestEventSeq(namespace: string, task: string): number {
    return this.statements.latestSeq.get(namespace, task)?.seq ?? 0;
  }

  onEvent(namespace: string, task: string, listener: (event: ExecutionEvent, previousSeq: number) => void): () => void {
    return this.subscribe(topic("event", namespace, task), listener);
  }

  appendLog(namespace: string, task: string, attempt: number, chunk: string): void {
    this.statements.appendLog.run(namespace, task, attempt, chunk);
    this.notifications.emit(topic("log", namespace, task), chunk);
  }

  appendLogs(chunks: readonly LogChunk[]): void {
    inTransaction(this.db, () => {
      for (const { namespace, task, attempt, chunk } of joinedByAttempt(chunks)) this.appendLog(namespace, task, attempt, chunk);
    });
  }

  readLogs(namespace: string, task: string, afterId = 0): { text: string; lastId: number } {
    const rows = this.statements.readLogs.all(namespace, task, afterId);
    return { text: rows.map((r) => r.chunk).join(""), lastId: rows.at(-1)?.id ?? afterId };
  }

  onLog(namespace: string, task: string, listener: (chunk: string) => void): () => void {
    return this.subscribe(topic("log", namespace, task), listener);
  }

  putArtifact(namespace: string, task: string, file: string, content: Buffer): void {
    this.statements.putArtifact.run(namespace, task, file, content, now());
  }

  listArtifacts(namespace: string, task: string): ArtifactInfo[] {
    return this.statements.listArtifacts.all(namespace, task).map((r) => ({ file: r.file, size: r.size, createdAt: r.created_at }));
  }

  getArtifact(namespace: string, task: string, file: string): Buffer | undefined {
    return this.statements.getArtifact.get(namespace, task, file)?.content;
  }

  createAttempt(attempt: Omit<Attempt, "state" | "startedAt" | "sessionTools">, tokenHash: string): Attempt {
    const startedAt = now();
    this.statements.insertAttempt.run(
      attempt.id, attempt.namespace, attempt.task, attempt.taskUid, attempt.number, tokenHash, JSON.stringify(attempt.allowedTools), startedAt,
    );
    return { ...attempt, state: "running", startedAt };
  }

  recordSessionTools(attemptId: string, tools: readonly SessionTool[]): void {
    const frozen = tools.map(({ name, effect, digest }) => ({ name, effect, ...(digest ? { digest } : {}) }));
    this.statements.recordSessionTools.run(JSON.stringify(frozen), attemptId);
    this.attemptsByToken.forget(attemptId);
  }

  attemptByTokenHash(tokenHash: string): Attempt | undefined {
    const cached = this.attemptsByToken.get(tokenHash);
    if (cached) return cached;
    const row = this.statements.attemptByToken.get(tokenHash);
    return row && this.attemptsByToken.remember(tokenHash, toAttempt(row));
  }

  latestAttempt(namespace: string, task: string): Attempt | undefined {
    const row = this.statements.latestAttempt.get(namespace, task);
    return row && toAttempt(row);
  }

  runningAttempts(): Attempt[] {
    return this.statements.runningAttempts.all().map(toAttempt);
  }

  finishAttempt(id: string, outcome: { state: Exclude<AttemptState, "running">; exitCode?: number; reason?: string }): void {
    this.statements.finishAttempt.run(outcome.state, outcome.exitCode ?? null, outcome.reason ?? null, now(), id);
    this.attemptsByToken.forget(id);
  }

  deleteTaskData(namespace: string, task: string): void {
    inTransaction(this.db, () => {
      for (const table of growingTables) prepared(this.db, raiseFloor(table)).run();
      for (const table of ["results", "artifacts", "attempts"]) {
        prepared(this.db, `DELETE FROM ${table} WHERE namespace = ? AND task = ?`).run(namespace, task);
      }
    });
    this.attemptsByToken.forgetTask(namespace, task);
    this.heardSeq.delete(topic("event", namespace, task));
    // A long Task has thousands of events and log chunks.
    for (const table of growingTables) deleteTaskRows(this.db, table, namespace, task);
  }

  /** Stores one event; it has the shape a read of it returns. */
  private insertEvent(namespace: string, task: string, input: ExecutionEventInput): ExecutionEvent {
    const row: Omit<EventRow, "seq"> = {
      type: input.type,
      severity: input.severity ?? "info",
      tool_name: input.toolName ?? null,
      tool_call_id: input.toolCallID ?? null,
      summary: input.summary,
      content: input.content ?? null,
      journal_run: input.journalRun ?? null,
      journal_step: input.journalStep ?? null,
      created_at: now(),
    };
    const { seq } = this.statements.insertEvent.get(
      namespace, task, row.type, row.severity, row.tool_name, row.tool_call_id, row.summary, row.content, row.journal_run, row.journal_step, row.created_at,
    )!;
    return toEvent({ seq, ...row });
  }

  private subscribe<A extends unknown[]>(name: string, listener: (...args: A) => void): () => void {
    this.notifications.on(name, listener);
    return () => {
      this.notifications.off(name, listener);
      if (this.notifications.listenerCount(name) === 0) this.heardSeq.delete(name);
    };
  }
}

/**
 * Each attempt's chunks joined in order into one: a row and a notification for what an attempt wrote in a
 * batch, rather than one per chunk (an AI worker writes a line per event, about twenty a run). Attempts
 * keep the order they first appear in, so a Task's next attempt still comes after the one before.
 */
function joinedByAttempt(chunks: readonly LogChunk[]): LogChunk[] {
  const byAttempt = new Map<string, LogChunk>();
  for (const next of chunks) {
    const key = JSON.stringify([next.namespace, next.task, next.attempt]);
    const joined = byAttempt.get(key);
    byAttempt.set(key, joined ? { ...joined, chunk: joined.chunk + next.chunk } : next);
  }
  return [...byAttempt.values()];
}

function toEvent(row: EventRow): ExecutionEvent {
  return {
    seq: row.seq,
    type: row.type,
    severity: row.severity,
    toolName: row.tool_name ?? undefined,
    toolCallID: row.tool_call_id ?? undefined,
    summary: row.summary,
    content: row.content ?? undefined,
    journalRun: row.journal_run ?? undefined,
    journalStep: row.journal_step ?? undefined,
    createdAt: row.created_at,
  };
}

function toAttempt(row: AttemptRow): Attempt {
  return {
    id: row.id,
    namespace: row.namespace,
    task: row.task,
    taskUid: row.task_uid,
    number: row.number,
    allowedTools: JSON.parse(row.allowed_tools),
    ...(row.session_tools ? { sessionTools: JSON.parse(row.session_tools) } : {}),
    state: row.state,
    exitCode: row.exit_code ?? undefined,
    reason: row.reason ?? undefined,
    startedAt: row.started_at,
    endedAt: row.ended_at ?? undefined,
  };
}
