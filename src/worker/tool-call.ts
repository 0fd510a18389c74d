import type { ResultStepPlace, StepInput } from "../store/journal-store.ts";
import type { ExecutionEventInput } from "../store/data-store.ts";
import { OrkaError } from "../util/errors.ts";

/** How the loop asks for one tool call: with its idempotency key, and whether a lost attempt had started it. */
export interface ToolCallContext {
  key?: string;
  interrupted: boolean;
  /** The call's place in the journal: what must be written before it acts, and where its result goes. */
  journal?: JournalledCall;
}

/** Journal steps not written yet, carried by a call that acts on them, with the events emitted since the last write. */
export interface JournalFirst {
  steps: StepInput[];
  events: ExecutionEventInput[];
}

/** What a call carries to the control plane about the journal. */
export interface CarriedJournal {
  /** Where the call's result goes: the control plane writes that step with the call's reply. */
  resultStep: ResultStepPlace;
  /** Written by the control plane in the commit that starts the call. */
  journalFirst?: JournalFirst;
}

/** The steps a call acts on that are not written yet (the model's answer that asked for it). */
export interface UnwrittenSteps {
  /** Sends a call with the unwritten steps, if any; once it is answered, or has failed after writing them, they count as written. */
  carry<T>(send: (first: JournalFirst | undefined) => Promise<T>): Promise<T>;
  /** Writes them on their own. */
  write(): Promise<void>;
}

/**
 * A tool call's place in the journal. The answer that asked for the call may not be written yet: a call
 * the control plane runs (a custom Tool call) carries it, one round trip for both; any other call has it
 * written before it acts (`writeFirst`). The call's result step the control plane may write with the
 * call's reply (the ledger records the reply, and the step goes in the same commit): it says so, and if
 * nothing was journalled, the loop journals the result itself.
 */
export class JournalledCall {
  readonly place: ResultStepPlace;
  private readonly unwritten: UnwrittenSteps;
  private readonly beforeHandOver: () => void;
  private written?: string;

  constructor(place: ResultStepPlace, unwritten: UnwrittenSteps, beforeHandOver: () => void) {
    this.place = place;
    this.unwritten = unwritten;
    this.beforeHandOver = beforeHandOver;
  }

  /** Sends the call with what it carries of the journal. */
  send<T>(request: (carried: CarriedJournal) => Promise<T>): Promise<T> {
    return this.unwritten.carry((journalFirst) => {
      this.beforeHandOver();
      return request({ resultStep: this.place, ...(journalFirst ? { journalFirst } : {}) });
    });
  }

  /** For a call that runs anywhere but on the control plane: what it acts on is written before it runs. */
  writeFirst(): Promise<void> {
    return this.unwritten.write();
  }

  /** The control plane journalled the call's result with this content. */
  journalled(content: string): void {
    this.written = content;
  }

  /** What the control plane journalled, if it did. */
  get content(): string | undefined {
    return this.written;
  }
}

/** A call refused before anything ran: recorded as rejected, with a reason code, and never executed. */
export class ToolRejected extends OrkaError {
  readonly reason: "tool_not_enabled";
  constructor(reason: "tool_not_enabled", message: string) {
    super("permission_denied", message);
    this.reason = reason;
  }
}
