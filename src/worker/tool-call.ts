import type { ResultStepPlace } from "../store/journal-store.ts";
import { OrkaError } from "../util/errors.ts";

/** How the loop asks for one tool call: with its idempotency key, and whether a lost attempt had started it. */
export interface ToolCallContext {
  key?: string;
  interrupted: boolean;
  /** Where the call's result goes in the journal, for a call the control plane can journal itself. */
  resultStep?: ServerJournalledResult;
}

/**
 * A tool call's result step that the control plane may write with the call's reply (a custom Tool call:
 * the ledger records its reply, and the step goes in the same commit). Whoever runs the call hands the
 * place over with it and says what was journalled; if nothing was, the loop journals the result itself.
 */
export class ServerJournalledResult {
  readonly place: ResultStepPlace;
  private readonly beforeHandOver: () => void;
  private written?: string;

  constructor(place: ResultStepPlace, beforeHandOver: () => void) {
    this.place = place;
    this.beforeHandOver = beforeHandOver;
  }

  /** The place, as the call carries it to the control plane. */
  handOver(): ResultStepPlace {
    this.beforeHandOver();
    return this.place;
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
