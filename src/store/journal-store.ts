/**
 * The journal of an attempt's conversation (written before each step is acted on) and the effect
 * ledger of its tool calls, so a killed attempt resumes exactly where it stopped.
 */

export const STEP_KINDS = ["request", "response", "tool_started", "tool_result"] as const;
export type StepKind = (typeof STEP_KINDS)[number];

/** One step as the worker writes it: only the messages that are new in it. */
export interface StepInput {
  run: number;
  seq: number;
  kind: StepKind;
  /** Messages this step adds to the conversation, as JSON objects. */
  messages: unknown[];
  /** Kind-specific facts: the system prompt of the first request, a tool call's id, name and idempotency key. */
  detail: Record<string, unknown>;
}

export interface JournalStep extends StepInput {
  attempt: number;
  createdAt: string;
}

export interface StepOwner {
  namespace: string;
  task: string;
  taskUid: string;
  attempt: number;
}

export type EffectState = "started" | "done";

export interface Effect {
  key: string;
  tool: string;
  state: EffectState;
  result?: string;
  /** The digest of what the call was begun with, when its caller keys calls by an id of its own (a brokered call id). */
  payloadDigest?: string;
}

export interface JournalStore {
  /**
   * Appends a step, storing each message once per Task by its hash. Writing the same step again is a
   * no-op (a retried request); a different step at a taken position is refused.
   * Returns the bytes newly stored.
   */
  append(owner: StepOwner, step: StepInput): { storedBytes: number };
  /** Every step of a run, in order, with its messages. */
  steps(taskUid: string, run: number): JournalStep[];
  /** Copies steps 1..upTo of a run into another Task's run (a fork); copying again changes nothing. */
  copyRun(from: { taskUid: string; run: number; upTo: number }, to: StepOwner, toRun: number): void;

  effect(key: string): Effect | undefined;
  /** Marks a keyed effect as begun; false when the key is already known. */
  beginEffect(owner: { namespace: string; task: string }, key: string, tool: string, payloadDigest?: string): boolean;
  finishEffect(key: string, result: string): void;

  /** Removes a Task's journal and effects. */
  deleteTask(namespace: string, task: string): void;
}
