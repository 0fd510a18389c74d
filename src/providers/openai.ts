import OpenAI, { AzureOpenAI } from "openai";
import type { ChatCompletionCreateParamsNonStreaming, ChatCompletionMessageParam } from "openai/resources/chat/completions";
import { type ChatMessage, type FinishReason, type ModelClient, type ModelRequest, type ModelResponse, toModelApiError, unusableBody } from "./model.ts";
import { KEY_SENT_PER_REQUEST, sharedClient } from "./shared-clients.ts";
import { abortableSdkCall, sdkTransport } from "./transport.ts";

export interface OpenAIOptions {
  apiKey: string;
  baseURL?: string;
  azure?: { deployment?: string; apiVersion?: string };
  /** The deadline calls are made with. */
  timeoutMs: number;
}

/** The endpoint's shared SDK client (see `sharedClient`): Azure's or OpenAI's. */
function sdkClientFor(options: OpenAIOptions): OpenAI {
  return sharedClient(["openai", options.baseURL ?? null, options.azure ?? null, options.timeoutMs], () =>
    options.azure
      ? new AzureOpenAI({
          apiKey: KEY_SENT_PER_REQUEST,
          endpoint: options.baseURL,
          deployment: options.azure.deployment,
          apiVersion: options.azure.apiVersion ?? "2024-10-21",
          maxRetries: 0,
          ...sdkTransport(options.timeoutMs),
        })
      : new OpenAI({ apiKey: KEY_SENT_PER_REQUEST, baseURL: options.baseURL, maxRetries: 0, ...sdkTransport(options.timeoutMs) }),
  );
}

/** OpenAI Chat Completions through the official SDK; also Azure OpenAI and any compatible endpoint (vLLM, Ollama, LiteLLM). */
export function openAIModel(options: OpenAIOptions): ModelClient {
  const client = sdkClientFor(options);
  // The header the SDK would send the key in (Azure's own, or a bearer token): a request's own header wins over the
  // client's. The other is removed (null), whatever the environment's OPENAI_CUSTOM_HEADERS adds.
  const credential = options.azure ? { "api-key": options.apiKey, authorization: null } : { authorization: `Bearer ${options.apiKey}`, "api-key": null };
  // The first-party API wants max_completion_tokens; compatible servers mostly know only max_tokens.
  const tokenField = options.baseURL && !options.azure ? "max_tokens" : "max_completion_tokens";

  return {
    provider: options.azure ? "azure-openai" : "openai",
    async complete(request: ModelRequest): Promise<ModelResponse> {
      const body: ChatCompletionCreateParamsNonStreaming = {
        model: request.model,
        messages: toOpenAIMessages(request.system, request.messages),
        [tokenField]: request.maxTokens,
        ...(request.temperature !== undefined ? { temperature: request.temperature } : {}),
        ...(request.tools.length > 0
          ? { tools: request.tools.map((t) => ({ type: "function" as const, function: { name: t.name, description: t.description, parameters: t.parameters } })) }
          : {}),
      };
      let reply;
      try {
        reply = await abortableSdkCall(request.signal, (options) => client.chat.completions.create(body, { ...options, headers: credential }).withResponse());
      } catch (err) {
        throw toModelApiError(err, options.apiKey, err instanceof OpenAI.APIConnectionError);
      }
      const { data: completion, response } = reply;
      const unusable = unusableBody(completion, response, "choices", options.apiKey);
      if (unusable) throw unusable;
      const choice = completion.choices[0];
      const toolCalls = (choice?.message.tool_calls ?? [])
        .filter((call) => call.type === "function")
        .map((call) => ({ id: call.id, name: call.function.name, arguments: call.function.arguments }));
      return {
        text: choice?.message.content ?? "",
        toolCalls,
        finish: finishReason(choice?.finish_reason, toolCalls.length > 0),
        usage: completion.usage && { inputTokens: completion.usage.prompt_tokens, outputTokens: completion.usage.completion_tokens },
      };
    },
  };
}

function finishReason(reason: string | undefined | null, hasToolCalls: boolean): FinishReason {
  if (hasToolCalls) return "tool_calls";
  switch (reason) {
    case "stop":
    case "tool_calls":
      return reason;
    case "length":
      return "length";
    case "content_filter":
      return "refusal";
    default:
      return "unknown";
  }
}

export function toOpenAIMessages(system: string | undefined, messages: ChatMessage[]): ChatCompletionMessageParam[] {
  const out: ChatCompletionMessageParam[] = system ? [{ role: "system", content: system }] : [];
  for (const message of messages) {
    if (message.role === "user") out.push({ role: "user", content: message.content });
    else if (message.role === "tool") out.push({ role: "tool", tool_call_id: message.toolCallId, content: message.content });
    else if (message.toolCalls?.length) {
      out.push({
        role: "assistant",
        content: message.content || null,
        tool_calls: message.toolCalls.map((c) => ({ id: c.id, type: "function", function: { name: c.name, arguments: c.arguments } })),
      });
    } else out.push({ role: "assistant", content: message.content });
  }
  return out;
}
