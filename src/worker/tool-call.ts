import { OrkaError } from "../util/errors.ts";

/** How the loop asks for one tool call: with its idempotency key, and whether a lost attempt had started it. */
export interface ToolCallContext {
  key?: string;
  interrupted: boolean;
}

/** A call refused before anything ran: recorded as rejected, with a reason code, and never executed. */
export class ToolRejected extends OrkaError {
  readonly reason: "tool_not_enabled";
  constructor(reason: "tool_not_enabled", message: string) {
    super("permission_denied", message);
    this.reason = reason;
  }
}
