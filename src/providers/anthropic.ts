import Anthropic from "@anthropic-ai/sdk";
import { type ChatMessage, type FinishReason, type ModelClient, type ModelRequest, type ModelResponse, toModelApiError, unusableBody } from "./model.ts";
import { jsonDepth, MAX_JSON_DEPTH, stringifyJson } from "../util/deep-json.ts";
import { KEY_SENT_PER_REQUEST, sharedClient } from "./shared-clients.ts";
import { abortableSdkCall, sdkTransport } from "./transport.ts";

type AnthropicMessage = Anthropic.MessageParam;
type ContentBlock = Anthropic.ContentBlockParam;

/**
 * Anthropic Messages through the official SDK. A trailing `/v1` on baseURL is dropped, as the SDK adds it.
 * Attempts that call one endpoint share a client (`sharedClient`); each request carries its own key, as the
 * bearer token the SDK would send, and a request's own header wins over the client's. No key or token from
 * the environment is sent.
 */
export function anthropicModel(options: { apiKey: string; baseURL?: string; timeoutMs: number }): ModelClient {
  const baseURL = options.baseURL?.replace(/\/v1\/?$/, "");
  const client = sharedClient(["anthropic", baseURL ?? null, options.timeoutMs], () =>
    new Anthropic({ apiKey: KEY_SENT_PER_REQUEST, authToken: null, baseURL, maxRetries: 0, ...sdkTransport(options.timeoutMs) }),
  );
  // No other credential header goes along, whatever the environment's ANTHROPIC_CUSTOM_HEADERS adds (null removes one).
  const credential = { authorization: `Bearer ${options.apiKey}`, "x-api-key": null };
  return {
    provider: "anthropic",
    async complete(request: ModelRequest): Promise<ModelResponse> {
      let reply;
      try {
        reply = await abortableSdkCall(request.signal, (options) => client.messages.create(
          {
            model: request.model,
            max_tokens: request.maxTokens,
            messages: toAnthropicMessages(request.messages),
            ...(request.system ? { system: request.system } : {}),
            ...(request.temperature !== undefined ? { temperature: request.temperature } : {}),
            ...(request.tools.length > 0
              ? { tools: request.tools.map((t) => ({ name: t.name, description: t.description, input_schema: t.parameters as Anthropic.Tool.InputSchema })) }
              : {}),
          },
          { ...options, headers: credential },
        ).withResponse());
      } catch (err) {
        throw toModelApiError(err, options.apiKey, err instanceof Anthropic.APIConnectionError);
      }
      const { data: message, response } = reply;
      const unusable = unusableBody(message, response, "content", options.apiKey);
      if (unusable) throw unusable;
      const text = message.content.flatMap((b) => (b.type === "text" ? [b.text] : [])).join("");
      const toolCalls = message.content.flatMap((b) =>
        // Written without recursion: a model may nest its input deeper than JSON.stringify can go.
        b.type === "tool_use" ? [{ id: b.id, name: b.name, arguments: stringifyJson(b.input ?? {}) }] : [],
      );
      return {
        text,
        toolCalls,
        finish: finishReason(message.stop_reason, toolCalls.length > 0),
        usage: { inputTokens: message.usage.input_tokens, outputTokens: message.usage.output_tokens },
      };
    },
  };
}

function finishReason(reason: string | null, hasToolCalls: boolean): FinishReason {
  if (hasToolCalls) return "tool_calls";
  switch (reason) {
    case "end_turn":
    case "stop_sequence":
      return "stop";
    case "tool_use":
      return "tool_calls";
    case "max_tokens":
      return "length";
    case "refusal":
      return "refusal";
    default:
      return "unknown";
  }
}

/** Anthropic wants tool results as blocks of a user turn, consecutive results merged into one. */
export function toAnthropicMessages(messages: ChatMessage[]): AnthropicMessage[] {
  const out: AnthropicMessage[] = [];
  for (const message of messages) {
    if (message.role === "tool") {
      const block: ContentBlock = { type: "tool_result", tool_use_id: message.toolCallId, content: message.content };
      const previous = out.at(-1);
      if (previous?.role === "user" && Array.isArray(previous.content) && previous.content.every((b) => b.type === "tool_result")) {
        previous.content.push(block);
      } else out.push({ role: "user", content: [block] });
    } else if (message.role === "assistant" && message.toolCalls?.length) {
      const blocks: ContentBlock[] = message.content ? [{ type: "text", text: message.content }] : [];
      for (const call of message.toolCalls) blocks.push({ type: "tool_use", id: call.id, name: call.name, input: parseArguments(call.arguments) });
      out.push({ role: "assistant", content: blocks });
    } else out.push({ role: message.role, content: message.content });
  }
  return out;
}

/** The input of a journalled call; one the tool executor refused as too deep goes back empty, as the SDK could not send it. */
function parseArguments(text: string): Record<string, unknown> {
  if (jsonDepth(text) > MAX_JSON_DEPTH) return {};
  try {
    const value = JSON.parse(text);
    return value && typeof value === "object" && !Array.isArray(value) ? value : {};
  } catch {
    return {};
  }
}
