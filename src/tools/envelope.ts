import { OrkaError, type ErrorCode } from "../util/errors.ts";

/** The kinds of refusal a chat tool's result names (`errorType`). */
export type RefusalType = "invalid_arguments" | "not_found" | "permission_denied" | "authorization_failed" | "limit_reached" | "internal_error";

/** What a chat tool answers: its data, or a refusal the model can act on. Chat tools return these; they do not throw. */
export type ToolEnvelope<Data> = { success: true; data: Data } | { success: false; error: string; errorType: RefusalType; suggestion: string };

const CODE_OF: Record<RefusalType, ErrorCode> = {
  invalid_arguments: "invalid_argument",
  not_found: "not_found",
  permission_denied: "permission_denied",
  authorization_failed: "permission_denied",
  limit_reached: "resource_exhausted",
  internal_error: "internal",
};

/** A refusal with its envelope fields, thrown by the checks of a chat tool and answered as `{success: false, …}`. */
export class ToolRefusal extends OrkaError {
  readonly errorType: RefusalType;
  readonly suggestion: string;

  constructor(errorType: RefusalType, message: string, suggestion: string) {
    super(CODE_OF[errorType], message);
    this.errorType = errorType;
    this.suggestion = suggestion;
  }

  envelope(): ToolEnvelope<never> {
    return { success: false, error: this.message, errorType: this.errorType, suggestion: this.suggestion };
  }
}
