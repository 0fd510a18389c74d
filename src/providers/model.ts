/** The one request/response shape every model vendor is translated to and from. */

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

export interface ToolDefinition {
  name: string;
  description: string;
  parameters: Record<string, unknown>;
}

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

/** A model API error with its HTTP status, so retry and context-length handling need not know the vendor. */
export class ModelApiError extends Error {
  readonly status: number | undefined;
  readonly retryAfterMs: number | undefined;

  constructor(message: string, status?: number, retryAfterMs?: number) {
    super(message);
    this.name = "ModelApiError";
    this.status = status;
    this.retryAfterMs = retryAfterMs;
  }

  get contextTooLong(): boolean {
    return this.status === 400 && /context.{0,20}(length|window|too long)|too many tokens|prompt is too long|maximum context/i.test(this.message);
  }
}

/** What the vendor SDKs throw (APIError of openai and @anthropic-ai/sdk), reduced to a ModelApiError. */
export function toModelApiError(err: unknown): unknown {
  if (err instanceof ModelApiError || !(err instanceof Error)) return err;
  const status = (err as { status?: unknown }).status;
  if (typeof status !== "number") return err;
  const headers = (err as { headers?: Headers | Record<string, string> }).headers;
  const retryAfter = headers instanceof Headers ? headers.get("retry-after") : headers?.["retry-after"];
  const retryAfterMs = retryAfter && Number.isFinite(Number(retryAfter)) ? Number(retryAfter) * 1000 : undefined;
  return new ModelApiError(err.message, status, retryAfterMs);
}
