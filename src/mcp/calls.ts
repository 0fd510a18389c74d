import { OrkaError } from "../util/errors.ts";

/** One `tools/call` a coding CLI sent to its session's broker, after the transport and JSON-RPC checks. */
export interface BrokerCall {
  name: string;
  arguments: Record<string, unknown>;
  /** The JSON-RPC request id when it is a usable call id (a string of at most 256 characters without whitespace), else `rpc-<hash of the id>`. */
  callId: string;
}

/** What the broker answers the CLI: the tool's text (raw JSON when the tool answers JSON), and whether it is an error. */
export interface BrokerCallResult {
  text: string;
  isError: boolean;
  /** The call id was seen before with the same arguments: this is the recorded result, nothing ran again. */
  replayed?: boolean;
}

/** The most a brokered call answers the CLI (UTF-8 bytes of its text); the control plane records no more. */
export const MAX_BROKERED_RESULT_BYTES = 1024 * 1024;

/** Runs a brokered call with every per-call check; the broker gives it the call's abort signal (revoked session, gone client). */
export type BrokeredCallRunner = (call: BrokerCall, signal: AbortSignal) => Promise<BrokerCallResult>;

/**
 * A call the broker must refuse: `not_authorized` (JSON-RPC -32001, "MCP tool call is not authorized": the
 * session, Task, allowlist, custom Tool digest, approvals or grant said no, and nothing ran) or `failed`
 * (-32002, "MCP broker call failed": the tool could not be run, or its result was dropped because the
 * session was revoked meanwhile).
 */
export class BrokerRefusal extends OrkaError {
  readonly kind: "not_authorized" | "failed";

  constructor(kind: "not_authorized" | "failed", message: string) {
    super(kind === "not_authorized" ? "permission_denied" : "unavailable", message);
    this.kind = kind;
  }
}
