/** The one request/response shape every model vendor is translated to and from. */
import { redact } from "../policy/redact.ts";
import { clipText } from "../util/text.ts";
import { errorCodeOfDependency, OrkaError, type ErrorCode } from "../util/errors.ts";

export interface ToolCall {
  id: string;
  name: string;
  /** The raw JSON text the model produced; validated by the tool executor, not here. */
  arguments: string;
}

export type ChatMessage =
  | { role: "user"; content: string }
  | { role: "assistant"; content: string; toolCalls?: ToolCall[] }
  | { role: "tool"; toolCallId: string; name: string; content: string };

/** A tool call's result as the model is given it (and as the journal keeps it). */
export function toolMessage(toolCallId: string, name: string, content: string): ChatMessage {
  return { role: "tool", toolCallId, name, content };
}

export interface ToolDefinition {
  name: string;
  description: string;
  parameters: Record<string, unknown>;
}

/** The answer length asked for when a request names none. */
export const DEFAULT_MAX_TOKENS = 4096;

export interface ModelRequest {
  model: string;
  system?: string;
  messages: ChatMessage[];
  tools: ToolDefinition[];
  maxTokens: number;
  temperature?: number;
  signal?: AbortSignal;
}

/** Why the model stopped; anything but `stop` or `tool_calls` is an outcome the loop refuses. */
export type FinishReason = "stop" | "tool_calls" | "length" | "refusal" | "unknown";

export interface ModelResponse {
  text: string;
  toolCalls: ToolCall[];
  finish: FinishReason;
  usage?: { inputTokens: number; outputTokens: number };
}

export interface ModelClient {
  readonly provider: string;
  complete(request: ModelRequest): Promise<ModelResponse>;
}

/** Provider answers worth asking again: rate limits, server errors and overload. */
const RETRYABLE_STATUSES = new Set([429, 500, 502, 503, 529]);

/**
 * A failed model call, vendor-neutral: what the provider did (its HTTP status and message, a body
 * that was no answer, or silence) in words that need no vendor, so retries, fallbacks, context-length
 * handling and the Task's failure message need not know the vendor. Its code is the provider's
 * refusal for a 4xx (resource_exhausted for a rate limit), deadline_exceeded for silence, else unavailable.
 */
export class ModelApiError extends OrkaError {
  readonly status: number | undefined;
  readonly retryAfterMs: number | undefined;
  readonly retryable: boolean;

  constructor(message: string, status?: number, options: { retryAfterMs?: number; retryable?: boolean; code?: ErrorCode } = {}) {
    super(options.code ?? errorCodeOfDependency(status), message);
    this.status = status;
    this.retryAfterMs = options.retryAfterMs;
    this.retryable = options.retryable ?? RETRYABLE_STATUSES.has(status ?? 0);
  }

  get contextTooLong(): boolean {
    return this.status === 400 && /context.{0,20}(length|window|too long)|too many tokens|prompt is too long|maximum context/i.test(this.message);
  }
}

const SNIPPET_CHARS = 300;

/**
 * What the vendor SDKs throw (APIError of openai and @anthropic-ai/sdk), reduced to a ModelApiError
 * carrying the provider's own message, with the key the call was made with (and anything that looks
 * like a credential) redacted, since providers echo what they were sent.
 */
export function toModelApiError(err: unknown, apiKey: string, isSdkConnectionError: boolean): unknown {
  if (err instanceof ModelApiError || !(err instanceof Error)) return err;
  const status = (err as { status?: unknown }).status;
  if (typeof status !== "number") return connectionFailure(err, apiKey, isSdkConnectionError) ?? err;
  const headers = (err as { headers?: Headers | Record<string, string> }).headers;
  const retryAfter = headers instanceof Headers ? headers.get("retry-after") : headers?.["retry-after"];
  const retryAfterMs = retryAfter && Number.isFinite(Number(retryAfter)) ? Number(retryAfter) * 1000 : undefined;
  const said = providerMessage(err) ?? err.message.replace(/^\d{3}\s+/, "");
  return new ModelApiError(`provider returned HTTP ${status}: ${clipText(redact(said, [apiKey]), SNIPPET_CHARS * 4)}`, status, { retryAfterMs });
}

/** Codes of a connection refused, dropped or cut before an answer: worth asking again, like a 503. */
const CONNECTION_FAULT_CODE = /^(ECONNRESET|ECONNREFUSED|ECONNABORTED|EPIPE|ETIMEDOUT|EHOSTUNREACH|ENETUNREACH|EAI_AGAIN|UND_ERR_(?!ABORTED)\w+)$/;
const MAX_CAUSE_DEPTH = 5;

/**
 * The SDKs wrap a failed fetch in a connection error without a status; the code that says why sits
 * a few causes down, unless the SDK dropped it (Anthropic's "Request timed out.").
 */
function connectionFailure(err: Error, apiKey: string, isSdkConnectionError: boolean): ModelApiError | undefined {
  const failed = (what: string) => new ModelApiError(`provider connection failed: ${clipText(redact(what, [apiKey]), SNIPPET_CHARS)}`, undefined, { retryable: true });
  let cause: unknown = err;
  for (let depth = 0; depth < MAX_CAUSE_DEPTH && cause instanceof Error; depth++, cause = cause.cause) {
    const code = (cause as { code?: unknown }).code;
    if (typeof code === "string" && CONNECTION_FAULT_CODE.test(code)) return failed(`${cause.message} (${code})`);
  }
  return isSdkConnectionError ? failed(err.message) : undefined;
}

/** The `message` of an OpenAI (`{error: {message}}`) or Anthropic (`{error: {error: {message}}}`) error body. */
function providerMessage(err: Error): string | undefined {
  const body = (err as { error?: { message?: unknown; error?: { message?: unknown } } }).error;
  const message = body?.message ?? body?.error?.message;
  return typeof message === "string" && message ? message : undefined;
}

/**
 * The SDKs hand back a body that is not JSON as a plain string, and do not look inside one that is:
 * either way a 2xx without the answer's `field` is a provider fault (a proxy's HTML page, a wrong
 * baseURL), retried like a 5xx, never read as an answer.
 */
export function unusableBody(data: unknown, response: Response, field: string, apiKey: string): ModelApiError | undefined {
  if (typeof data === "object" && data !== null && field in data) return undefined;
  const what = typeof data === "string"
    ? `a non-JSON body (${response.headers.get("content-type") || "no content-type"}): ${clipText(redact(data, [apiKey]).replace(/\s+/g, " ").trim(), SNIPPET_CHARS)}`
    : `a JSON body without "${field}"`;
  return new ModelApiError(`provider returned HTTP ${response.status} with ${what}`, response.status, { retryable: true });
}

/** How every model call is made: the first retry backoff, and how long one call may take unless its endpoint says otherwise. */
export interface ModelCallSettings {
  retryBaseMs: number;
  timeoutMs: number;
}

/**
 * An error that refuses the request itself, answered with its own status and message; a model call
 * that failed (whatever the provider said) is a completion that failed, answered 502.
 */
export function isRequestRefusal(err: unknown): err is OrkaError {
  // An internal error is Orka's own fault, never a reason to show its detail to the caller.
  return err instanceof OrkaError && !(err instanceof ModelApiError) && err.code !== "internal";
}
