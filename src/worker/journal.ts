import { sha256Hex } from "../util/hash.ts";
import type { ChatMessage, ToolCall } from "../providers/model.ts";
import type { JournalStep, StepInput } from "../store/journal-store.ts";
import { JournalledCall, type JournalFirst } from "./tool-call.ts";
import type { ExecutionEventInput } from "../store/data-store.ts";
import { OrkaError } from "../util/errors.ts";
import { killAtJournalStep } from "../util/fault-injection.ts";
import type { ControlPlaneClient } from "./client.ts";

/** Where a journalled conversation stands: what the loop needs to continue exactly from there. */
export interface LoopResume {
  /** Model turns already answered. */
  turn: number;
  /** Tool calls of the last answer that have no recorded result, in order. */
  pending: ToolCall[];
  /** The id of the pending call that had started when the worker was lost. */
  interrupted?: string;
  /** The journalled final answer, when the model had already given it. */
  final?: string;
  /** The empty-answer nudge was already used. */
  nudged: boolean;
  /** Tool calls already made in this run (their index is part of each call's idempotency key). */
  callIndex: number;
}

/** A conversation rebuilt from a journal: the system prompt and messages exactly as the model saw them. */
export interface Replay {
  system: string;
  messages: ChatMessage[];
  resume: LoopResume;
  steps: number;
}

/**
 * Sends a step together with the events waiting to be sent, in order with everything sent before;
 * `closing` are sent after them, and are not kept for a later write when this one fails.
 */
export interface StepCarrier {
  carry<T>(send: (events: ExecutionEventInput[]) => Promise<T>, closing?: ExecutionEventInput[]): Promise<T>;
}

/**
 * The events that end the attempt once its final answer is written, given the answer's text: they travel
 * with the answer when nothing else is left to do (one call to the control plane fewer); undefined when
 * something is, and they are sent after it.
 */
export type ClosingEvents = (answer: string) => ExecutionEventInput[] | undefined;

/**
 * The attempt's journal: every step is written to the control plane before it is acted on, and a
 * message is sent once (the server keeps each by its hash), so a step costs what is new in it.
 * A model answer that asks for tool calls is acted on only by its first call, so it is held until then:
 * a call the control plane runs carries it, and anything else writes it first.
 */
export class AttemptJournal {
  private readonly client: ControlPlaneClient;
  private readonly carrier: StepCarrier;
  private readonly run: number;
  private readonly taskName: string;
  /** The last step written. */
  private seq: number;
  /** Steps after `seq` that nothing has acted on yet, written with the next write or call. */
  private unwritten: StepInput[] = [];
  private readonly written = new WeakSet<ChatMessage>();
  private resultStored = false;
  private closingSent = false;
  private readonly closing?: ClosingEvents;
  readonly taskUid: string;

  constructor(
    client: ControlPlaneClient,
    carrier: StepCarrier,
    options: { run: number; taskName: string; taskUid: string; seq?: number; written?: ChatMessage[]; closing?: ClosingEvents },
  ) {
    this.client = client;
    this.carrier = carrier;
    this.run = options.run;
    this.taskName = options.taskName;
    this.taskUid = options.taskUid;
    this.seq = options.seq ?? 0;
    this.closing = options.closing;
    for (const message of options.written ?? []) this.written.add(message);
  }

  /** Whether this journal stored the final answer as the Task's result (a resumed run's journalled answer was not written again). */
  get resultWritten(): boolean {
    return this.resultStored;
  }

  /** Whether the final answer's write carried the attempt's closing events: nothing is left to send. */
  get sentClosingEvents(): boolean {
    return this.closingSent;
  }

  /**
   * Before asking the model: the messages it has not journalled yet (and, first time, the system
   * prompt), with `closing` after the events waiting to be sent. A turn that adds nothing new (tool
   * results are journalled as they come) writes nothing. Answers whether it wrote.
   */
  async request(messages: ChatMessage[], system?: string, closing: ExecutionEventInput[] = []): Promise<boolean> {
    const fresh = messages.filter((m) => !this.written.has(m));
    if (fresh.length === 0 && this.lastSeq() > 0) return false;
    await this.write("request", fresh, this.lastSeq() === 0 ? { system: system ?? "" } : {}, false, closing);
    return true;
  }

  /**
   * After the model answered, before anything in the answer is acted on: tool calls with the first call; a
   * final answer at once, stored as the Task's result in the same commit.
   */
  async response(message: ChatMessage): Promise<void> {
    if (message.role === "assistant" && message.toolCalls?.length) return void this.unwritten.push(this.next("response", [message], {}));
    // An empty answer is no result: the model is asked once more.
    const isResult = message.content.trim() !== "";
    const closing = isResult ? this.closing?.(message.content) : undefined;
    await this.write("response", [message], {}, isResult, closing);
    this.resultStored = isResult;
    this.closingSent = closing !== undefined;
  }

  toolStarted(call: ToolCall, key: string): Promise<void> {
    return this.write("tool_started", [], { callId: call.id, tool: call.name, key });
  }

  /** `call`'s place: after the steps it acts on, its result as the next step, for the control plane to write with the call's reply. */
  callJournal(call: ToolCall): JournalledCall {
    const seq = this.lastSeq() + 1;
    const unwritten = { carry: <T>(send: (first: JournalFirst | undefined) => Promise<T>) => this.carry(send), write: () => this.flush() };
    // The worker's fault point before this step: before the call that would write it is sent.
    return new JournalledCall({ run: this.run, seq, toolCallId: call.id }, unwritten, () => killAtJournalStep("worker", this.taskName, seq));
  }

  /**
   * After a tool call, before its result is given to the model: written here, unless the control plane
   * wrote it with the call. Answers the message the model is to be given: the journalled one.
   */
  async toolResult(message: ChatMessage, call?: JournalledCall): Promise<ChatMessage> {
    const journalled = call?.content;
    if (journalled !== undefined) {
      // Fail closed: what the model would be given (scrubbed of the attempt's secrets) must be what was journalled.
      if (message.role !== "tool" || message.content !== journalled) throw new OrkaError("internal", `the control plane journalled a result for tool call ${call!.place.toolCallId} other than the one the model would be given`);
      return this.taken(call!.place.seq, message);
    }
    try {
      await this.write("tool_result", [message], {});
      return message;
    } catch (err) {
      if (!call || !(err instanceof OrkaError && err.code === "conflict")) throw err;
      // The control plane may have journalled the call's result after this worker stopped waiting for it
      // (a timeout): then that result is the call's, and the model is given it.
      const written = await this.stepAt(call.place.seq);
      const [result] = (written?.kind === "tool_result" ? written.messages : []) as ChatMessage[];
      if (result?.role !== "tool" || result.toolCallId !== call.place.toolCallId) throw err;
      return this.taken(call.place.seq, result);
    }
  }

  /** Where the run stands: the fields an event carries, none before the first step. A held step is written before the event is. */
  position(): Pick<ExecutionEventInput, "journalRun" | "journalStep"> {
    const seq = this.lastSeq();
    return seq > 0 ? { journalRun: this.run, journalStep: seq } : {};
  }

  /** The idempotency key of a tool call: Task uid, run, call index and argument digest. */
  keyFor(callIndex: number, call: ToolCall): string {
    return sha256Hex(`${this.taskUid}\n${this.run}\n${callIndex}\n${call.name}\n${sha256Hex(call.arguments)}`);
  }

  /** A step the control plane wrote: the run stands after it, and its message needs no writing again. */
  private taken(seq: number, message: ChatMessage): ChatMessage {
    this.writtenUpTo(seq, [message]);
    return message;
  }

  private async stepAt(seq: number): Promise<JournalStep | undefined> {
    const { steps } = (await this.client.get(`journal/${this.client.taskPath()}`, { run: String(this.run) })) as { steps: JournalStep[] };
    return steps.find((step) => step.seq === seq);
  }

  /** The last step, written or held. */
  private lastSeq(): number {
    return this.seq + this.unwritten.length;
  }

  private next(kind: StepInput["kind"], messages: ChatMessage[], detail: Record<string, unknown>): StepInput {
    return { run: this.run, seq: this.lastSeq() + 1, kind, messages, detail };
  }

  /**
   * Writes a step, after the held ones, with the events waiting to be sent and then `closing`, placed at
   * the step; `answerIsResult` stores it as the Task's result too.
   */
  private write(kind: StepInput["kind"], messages: ChatMessage[], detail: Record<string, unknown>, answerIsResult = false, closing: ExecutionEventInput[] = []): Promise<void> {
    const step = this.next(kind, messages, detail);
    return this.send([...this.unwritten, step], answerIsResult, closing.map((event) => ({ ...event, journalRun: step.run, journalStep: step.seq })));
  }

  /** Writes the held steps, if any. */
  private async flush(): Promise<void> {
    if (this.unwritten.length > 0) await this.send([...this.unwritten]);
  }

  private async send(steps: StepInput[], answerIsResult = false, closing: ExecutionEventInput[] = []): Promise<void> {
    for (const step of steps) killAtJournalStep("worker", this.taskName, step.seq);
    await this.carrier.carry(async (events) => {
      try {
        await this.client.post(`journal/${this.client.taskPath()}`, { steps, events, ...(answerIsResult ? { answerIsResult } : {}) });
      } catch (err) {
        // A write whose reply was lost (a timeout) may have been stored, and the closing events with it (the
        // attempt ended well, the model is asked): then it was, and what they tell of goes on. The journal says which.
        if (closing.length === 0 || !(await this.isWritten(steps.at(-1)!))) throw err;
      }
    }, closing);
    this.wrote(steps);
  }

  /**
   * Sends a call that carries the held steps and the events waiting to be sent; the control plane writes
   * them in one commit before the call starts. When the call fails, that commit may or may not have been
   * made (a refusal before it, a timeout after it): the journal says which. Written, the steps and their
   * events are not sent again; not written, they go with the next write.
   */
  private async carry<T>(send: (first: JournalFirst | undefined) => Promise<T>): Promise<T> {
    const steps = [...this.unwritten];
    if (steps.length === 0) return send(undefined);
    for (const step of steps) killAtJournalStep("worker", this.taskName, step.seq);
    const outcome = await this.carrier.carry(async (events) => {
      try {
        return { answer: await send({ steps, events }) };
      } catch (err) {
        if (!(await this.isWritten(steps.at(-1)!))) throw err; // the events go back in the queue
        return { failed: err };
      }
    });
    this.wrote(steps);
    if ("failed" in outcome) throw outcome.failed;
    return outcome.answer;
  }

  /** Whether `step` is in the journal; false when the journal cannot be read either. */
  private async isWritten(step: StepInput): Promise<boolean> {
    const written = await this.stepAt(step.seq).catch(() => undefined);
    return written?.kind === step.kind;
  }

  private wrote(steps: StepInput[]): void {
    this.writtenUpTo(steps.at(-1)!.seq, steps.flatMap((step) => step.messages as ChatMessage[]));
  }

  /** The run stands after step `seq` (and so after every step held before it), whose new messages are `messages`. */
  private writtenUpTo(seq: number, messages: ChatMessage[]): void {
    for (const held of this.unwritten) if (held.seq < seq) messages.push(...(held.messages as ChatMessage[]));
    this.unwritten = this.unwritten.filter((held) => held.seq > seq);
    this.seq = seq;
    for (const message of messages) this.written.add(message);
  }
}

/** Reads a run back and works out where it stopped. */
export async function loadReplay(client: ControlPlaneClient, run: number): Promise<Replay | undefined> {
  const { steps } = (await client.get(`journal/${client.taskPath()}`, { run: String(run) })) as { steps: JournalStep[] };
  if (steps.length === 0) return undefined;
  const messages: ChatMessage[] = [];
  let system = "";
  const resume: LoopResume = { turn: 0, pending: [], nudged: false, callIndex: 0 };
  for (const step of steps) {
    const stepMessages = step.messages as ChatMessage[];
    if (step.kind === "request") {
      if (typeof step.detail.system === "string") system = step.detail.system;
      messages.push(...stepMessages);
    } else if (step.kind === "response") {
      const answer = stepMessages[0] as Extract<ChatMessage, { role: "assistant" }>;
      messages.push(answer);
      resume.turn++;
      resume.pending = [...(answer.toolCalls ?? [])];
      if (resume.pending.length === 0) {
        if (answer.content.trim()) resume.final = answer.content;
        else resume.nudged = true;
      }
    } else if (step.kind === "tool_started") {
      resume.interrupted = String(step.detail.callId);
    } else {
      messages.push(stepMessages[0]);
      resume.pending.shift();
      resume.interrupted = undefined;
      resume.callIndex++;
    }
  }
  return { system, messages, resume, steps: steps.length };
}
