/** Per-Task data kept beside the resources: results, execution events, logs, artifacts, attempts. */
import { sha256Hex } from "../util/hash.ts";
import { clipText } from "../util/text.ts";

/** What the store keeps of a worker's bearer token, and looks its attempt up by (`attemptByTokenHash`). */
export function hashToken(token: string): string {
  return sha256Hex(token);
}

export type EventSeverity = "info" | "warning" | "error";

export interface ExecutionEventInput {
  type: string;
  severity?: EventSeverity;
  toolName?: string;
  toolCallID?: string;
  summary: string;
  content?: string;
  /** Where an `ai` run's journal stood when this happened: run `journalRun` had `journalStep` steps (fork --at). */
  journalRun?: number;
  journalStep?: number;
}

/** The most an execution event may hold; the control plane refuses more, so a worker trims to fit. */
export const EVENT_LIMITS = { type: 100, toolName: 200, toolCallID: 200, summary: 4000, content: 65_536 } as const;

/**
 * An event cut to the limits: its fields may quote what a model wrote (a tool name of any length),
 * and an event that does not fit must never cost the Task its journal step.
 */
export function fitEvent(event: ExecutionEventInput): ExecutionEventInput {
  return {
    ...event,
    type: clipText(event.type, EVENT_LIMITS.type),
    summary: clipText(event.summary, EVENT_LIMITS.summary),
    ...(event.toolName !== undefined ? { toolName: clipText(event.toolName, EVENT_LIMITS.toolName) } : {}),
    ...(event.toolCallID !== undefined ? { toolCallID: clipText(event.toolCallID, EVENT_LIMITS.toolCallID) } : {}),
    ...(event.content !== undefined ? { content: clipText(event.content, EVENT_LIMITS.content) } : {}),
  };
}

export interface ExecutionEvent extends Required<Pick<ExecutionEventInput, "type" | "summary">> {
  seq: number;
  severity: EventSeverity;
  toolName?: string;
  toolCallID?: string;
  content?: string;
  journalRun?: number;
  journalStep?: number;
  createdAt: string;
}

export type AttemptState = "running" | "succeeded" | "failed" | "killed";

export interface Attempt {
  id: string;
  namespace: string;
  task: string;
  taskUid: string;
  number: number;
  allowedTools: string[];
  /** A coding-agent session's brokered tools, frozen when it started; absent for other attempts. */
  sessionTools?: SessionTool[];
  state: AttemptState;
  exitCode?: number;
  reason?: string;
  startedAt: string;
  endedAt?: string;
}

/** A brokered tool of a coding-agent session as the control plane froze it when the session's attempt started. */
export interface SessionTool {
  name: string;
  effect: "read_only" | "consequential";
  /** A custom Tool's digest of its uid, generation and spec at session start (`customToolDigest`); absent for a built-in. */
  digest?: string;
}

export interface ArtifactInfo {
  file: string;
  size: number;
  createdAt: string;
}

export interface LogChunk {
  namespace: string;
  task: string;
  attempt: number;
  chunk: string;
}

export interface TaskDataStore {
  putResult(namespace: string, task: string, body: string): void;
  getResult(namespace: string, task: string): string | undefined;

  appendEvent(namespace: string, task: string, event: ExecutionEventInput): ExecutionEvent;
  /** A worker's batch, in order, in one transaction. */
  appendEvents(namespace: string, task: string, events: ExecutionEventInput[]): ExecutionEvent[];
  /**
   * Events appended in one transaction with `write`, another write to the same database (a journal
   * step): both are committed or neither is, in one commit; listeners hear of the events after the transaction.
   */
  appendEventsWith<T>(namespace: string, task: string, events: ExecutionEventInput[], write: () => T): { events: ExecutionEvent[]; written: T };
  listEvents(namespace: string, task: string, options?: { after?: number; limit?: number; type?: string }): ExecutionEvent[];
  latestEventSeq(namespace: string, task: string): number;
  /**
   * Called after every event append for that Task (once its transaction has ended), in order, with the seq
   * of the Task's event before it (0 for its first): a listener that has seen up to that seq has missed
   * nothing.
   * Returns an unsubscribe function.
   */
  onEvent(namespace: string, task: string, listener: (event: ExecutionEvent, previousSeq: number) => void): () => void;

  appendLog(namespace: string, task: string, attempt: number, chunk: string): void;
  /** Several chunks, in order, written together (one commit for a burst of output), each attempt's joined into one. */
  appendLogs(chunks: readonly LogChunk[]): void;
  readLogs(namespace: string, task: string, afterId?: number): { text: string; lastId: number };
  onLog(namespace: string, task: string, listener: (chunk: string) => void): () => void;

  putArtifact(namespace: string, task: string, file: string, content: Buffer): void;
  listArtifacts(namespace: string, task: string): ArtifactInfo[];
  getArtifact(namespace: string, task: string, file: string): Buffer | undefined;

  createAttempt(attempt: Omit<Attempt, "state" | "startedAt" | "sessionTools">, tokenHash: string): Attempt;
  /** Freezes a coding-agent session's brokered tools with its attempt (only their name, effect and digest are kept). */
  recordSessionTools(attemptId: string, tools: readonly SessionTool[]): void;
  attemptByTokenHash(tokenHash: string): Attempt | undefined;
  latestAttempt(namespace: string, task: string): Attempt | undefined;
  runningAttempts(): Attempt[];
  finishAttempt(id: string, outcome: { state: Exclude<AttemptState, "running">; exitCode?: number; reason?: string }): void;

  /** Removes everything a Task owns. */
  deleteTaskData(namespace: string, task: string): void;
}
