import { toolMessage } from "../providers/model.ts";

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

/**
 * Where a custom Tool call's result goes in the journal, sent with the call: the control plane writes
 * that step with the call's recorded reply, one round trip and one commit fewer than the worker writing it.
 */
export interface ResultStepPlace {
  run: number;
  seq: number;
  toolCallId: string;
}

/** The step that journals a tool call's result: the tool message the model is given next. */
export function toolResultStep(place: ResultStepPlace, toolName: string, content: string): StepInput {
  return { run: place.run, seq: place.seq, kind: "tool_result", messages: [toolMessage(place.toolCallId, toolName, content)], detail: {} };
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

/** The owner of the steps an attempt writes. */
export function stepOwnerOf(attempt: { namespace: string; task: string; taskUid: string; number: number }): StepOwner {
  return { namespace: attempt.namespace, task: attempt.task, taskUid: attempt.taskUid, attempt: attempt.number };
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
  /**
   * Refuses (a conflict) a step `seq` that is already written or that would not follow the run's last
   * step: only the run's next step may be written.
   */
  checkNextStep(taskUid: string, run: number, seq: number): void;
  /** Every step of a run, in order, with its messages. */
  steps(taskUid: string, run: number): JournalStep[];
  /** Copies steps 1..upTo of a run into another Task's run (a fork); copying again changes nothing. */
  copyRun(from: { taskUid: string; run: number; upTo: number }, to: StepOwner, toRun: number): void;

  effect(key: string): Effect | undefined;
  /** Marks a keyed effect as begun; false when the key is already known. */
  beginEffect(owner: { namespace: string; task: string }, key: string, tool: string, payloadDigest?: string): boolean;
  /**
   * Records a keyed effect's reply; with `resultStep`, the step that journals the call's result is
   * appended in the same commit (a step that does not fit the run refuses both).
   */
  finishEffect(key: string, result: string, resultStep?: { owner: StepOwner; step: StepInput }): void;

  /** Removes a Task's journal and effects. */
  deleteTask(namespace: string, task: string): void;
}
