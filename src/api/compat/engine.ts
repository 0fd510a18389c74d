import { OFFLINE_PROVIDER_TYPES } from "../../resources/provider.ts";
import type { FastifyReply, FastifyRequest } from "fastify";
import type { ApiContext } from "../context.ts";
import { randomBytes } from "node:crypto";
import { rm } from "node:fs/promises";
import { join } from "node:path";
import type { AgentSpec } from "../../resources/agent.ts";
import type { ProviderSpec, ProviderStatus } from "../../resources/provider.ts";
import type { Resource } from "../../resources/meta.ts";
import { applyAgentTimeout, resolveEndpoint, type ProviderSettings } from "../../controller/resolve.ts";
import type { ModelEndpoint } from "../../providers/index.ts";
import { ModelApiError, type ChatMessage, type FinishReason, type ToolCall, type ToolDefinition } from "../../providers/model.ts";
import { prepareAttemptDirs } from "../../runner/local/dirs.ts";
import type { ResourceStore } from "../../store/resource-store.ts";
import { toolDefinition, type ToolSettings } from "../../tools/define.ts";
import { createToolContext } from "../../tools/context.ts";
import { builtinTool } from "../../tools/registry.ts";
import { CORE_TOOLS } from "../../tools/names.ts";
import { redactValues } from "../../policy/redact.ts";
import { OrkaError } from "../../util/errors.ts";
import { DEFAULT_MAX_TOKENS, runToolLoop } from "../../worker/loop.ts";
import { modelWithFallbacks } from "../../worker/models.ts";
import type { ModelCallSettings } from "../../providers/model.ts";
import { toolExecutor } from "../../worker/tool-executor.ts";

/**
 * An error that refuses the request itself, answered with its own status and message; a model call
 * that failed (whatever the provider said) is a completion that failed, answered 502.
 */
export function isCompatRefusal(err: unknown): err is OrkaError {
  return err instanceof OrkaError && !(err instanceof ModelApiError);
}

/** The first five core tools: exactly what the compatible endpoints offer. */
export const COMPAT_TOOLS = CORE_TOOLS.slice(0, 5);
const COMPAT_TURN_BUDGET = 10;

export interface CompatSettings {
  workDir: string;
  toolSettings: ToolSettings;
  modelCalls: ModelCallSettings;
  providers: ProviderSettings;
}

export interface CompatRequest {
  namespace: string;
  model: string;
  system?: string;
  messages: ChatMessage[];
  maxTokens?: number;
  temperature?: number;
  /** `X-Orka-Tools: disabled`: the client's own tools go to the model and its calls come back. */
  passthrough: boolean;
  clientTools: ToolDefinition[];
  onProgress?: (note: string) => void;
  signal: AbortSignal;
}

export interface CompatAnswer {
  text: string;
  toolCalls: ToolCall[];
  finish: FinishReason;
  usage: { inputTokens: number; outputTokens: number };
}

/** Tool mode cannot hand calls back to the client, so a client's own tools are refused, not dropped. */
const CLIENT_TOOLS_REFUSED =
  `tools: in tool mode Orka runs ${COMPAT_TOOLS.join(", ")} server-side and cannot return calls to your own tools; send the header X-Orka-Tools: disabled to pass your tools to the model and get its tool calls back`;

/** Progress of the server-side loop as an SSE comment: SDKs skip it, so it never joins the answer, and it keeps the stream alive. */
export const sseComment = (note: string) => `: ${note.replace(/[\r\n]+/g, " ")}\n\n`;

/** A signal that aborts when the response closes before it is complete: the client left, so the model and tools stop. */
export function abortWhenClientLeaves(reply: FastifyReply): AbortSignal {
  const abort = new AbortController();
  reply.raw.on("close", () => {
    if (!reply.raw.writableFinished) abort.abort(new Error("client went away"));
  });
  return abort.signal;
}

/**
 * Resolves a compat `model`: an Agent of that name, else `provider/model`, else a model of the
 * Provider named `default`.
 */
export async function resolveCompatModel(store: ResourceStore, providers: ProviderSettings, namespace: string, model: string): Promise<{ endpoint: ModelEndpoint; system?: string }> {
  const agent = await store.get<AgentSpec, unknown>("Agent", namespace, model);
  if (agent?.spec.providerRef) {
    refuseProviderElsewhere(agent.spec.providerRef, namespace, model);
    const provider = await providerOf(store, namespace, agent.spec.providerRef.name, model);
    const endpoint = await endpointFor(store, providers, provider, agent.spec.model?.name);
    applyAgentTimeout(agent, [endpoint]);
    return { endpoint, system: agent.spec.systemPrompt?.inline };
  }
  const slash = model.indexOf("/");
  const [providerName, upstream] = slash > 0 ? [model.slice(0, slash), model.slice(slash + 1)] : ["default", model];
  return { endpoint: await endpointFor(store, providers, await providerOf(store, namespace, providerName, model), upstream) };
}

/** The compatible endpoints reach Providers of the request's namespace only; a same-named local one must not stand in silently. */
function refuseProviderElsewhere(ref: { namespace?: string }, namespace: string, agent: string): void {
  if (ref.namespace === undefined || ref.namespace === namespace) return;
  throw new OrkaError(
    "invalid_argument",
    `Agent "${agent}" uses a Provider in namespace "${ref.namespace}" (spec.providerRef.namespace); as a model it can only use a Provider of namespace "${namespace}": call the compatible endpoint in namespace "${ref.namespace}", or name provider/model`,
    { field: "spec.providerRef.namespace" },
  );
}

async function providerOf(store: ResourceStore, namespace: string, name: string, model: string): Promise<Resource<ProviderSpec, ProviderStatus>> {
  const provider = await store.get<ProviderSpec, ProviderStatus>("Provider", namespace, name);
  if (!provider) {
    throw new OrkaError("not_found", `unknown model "${model}": use an Agent name, provider/model, or a model of the Provider named "default"`);
  }
  return provider;
}

async function endpointFor(store: ResourceStore, providers: ProviderSettings, provider: Resource<ProviderSpec, ProviderStatus>, model: string | undefined): Promise<ModelEndpoint> {
  const endpoint = await resolveEndpoint(store, provider, model, [], providers);
  if (!endpoint.model) throw new OrkaError("invalid_argument", `no model given and Provider ${provider.metadata.name} has no defaultModel`);
  if (!OFFLINE_PROVIDER_TYPES.includes(endpoint.type) && !endpoint.apiKey) throw new OrkaError("invalid_argument", `API key for ${provider.metadata.name} not found`);
  return endpoint;
}

/**
 * Checks a compat request and resolves its model, so that everything a client can get wrong is
 * refused before a stream starts (in the protocol's error shape, which the SDKs raise as
 * BadRequest/NotFound); the returned function then runs it.
 */
export async function prepareCompat(store: ResourceStore, settings: CompatSettings, request: CompatRequest): Promise<() => Promise<CompatAnswer>> {
  if (!request.passthrough && request.clientTools.length > 0) throw new OrkaError("invalid_argument", CLIENT_TOOLS_REFUSED, { field: "tools" });
  const { endpoint, system } = await resolveCompatModel(store, settings.providers, request.namespace, request.model);
  // An upstream may echo the key it was sent: neither a progress note nor an error may carry it to the caller.
  const scrub = (text: string) => redactValues(text, endpoint.apiKey ? [endpoint.apiKey] : []);
  const onProgress = request.onProgress && ((note: string) => request.onProgress!(scrub(note)));
  return async () => {
    try {
      return await runCompat(settings, { ...request, onProgress }, endpoint, system);
    } catch (err) {
      if (err instanceof Error) err.message = scrub(err.message);
      throw err;
    }
  };
}

/** Runs one compat request: Orka's tool loop with the core tools (server-side), or a plain pass-through. */
async function runCompat(settings: CompatSettings, request: CompatRequest, endpoint: ModelEndpoint, system: string | undefined): Promise<CompatAnswer> {
  const model = modelWithFallbacks([endpoint], { ...settings.modelCalls, onNotice: (note) => request.onProgress?.(note) });
  const systemPrompt = [system, request.system].filter(Boolean).join("\n\n") || undefined;
  const maxTokens = request.maxTokens ?? DEFAULT_MAX_TOKENS;

  if (request.passthrough) {
    const response = await model.complete({
      model: endpoint.model,
      system: systemPrompt,
      messages: request.messages,
      tools: request.clientTools,
      maxTokens,
      temperature: request.temperature,
      signal: request.signal,
    });
    return { ...response, usage: response.usage ?? { inputTokens: 0, outputTokens: 0 } };
  }

  const requestId = `compat-${randomBytes(6).toString("hex")}`;
  const dirs = await prepareAttemptDirs(join(settings.workDir, "compat"), requestId);
  try {
    const result = await runToolLoop({
      model,
      modelName: endpoint.model,
      system: systemPrompt ?? "",
      messages: request.messages,
      tools: COMPAT_TOOLS.map((name) => toolDefinition(builtinTool(name)!)),
      maxTokens,
      temperature: request.temperature,
      turnBudget: COMPAT_TURN_BUDGET,
      executeTool: toolExecutor({
        allowed: COMPAT_TOOLS,
        customTools: new Set(),
        callCustomTool: async () => "",
        notOffered: (name) => `tool "${name}" is not available in this request`,
        context: createToolContext({ namespace: request.namespace, taskName: requestId, dirs, settings: settings.toolSettings, signal: request.signal }),
      }),
      toolErrorText: (message) => JSON.stringify({ success: false, error: message }),
      emit: (event) => {
        if (event.type === "ToolCallCompleted") request.onProgress?.(`[Tool ${event.toolName} completed]`);
        if (event.type === "ToolCallFailed") request.onProgress?.(`[Tool ${event.toolName} failed]`);
      },
      signal: request.signal,
    });
    return { text: result.text, toolCalls: [], finish: "stop", usage: result.usage };
  } finally {
    await rm(join(settings.workDir, "compat", requestId), { recursive: true, force: true });
  }
}

/** With a transaction token, running the compat tools server-side needs `orka:tools:use` and each of them granted. */
export function authorizeCompatTools(ctx: ApiContext, request: FastifyRequest, action: string, passthrough: boolean, namespace: string): void {
  const claims = request.principal?.transaction;
  if (!claims || passthrough) return;
  ctx.grants.offeredTools(claims, action, COMPAT_TOOLS, { method: request.method, path: request.url.split("?")[0], principal: request.principal?.name, namespace });
}
