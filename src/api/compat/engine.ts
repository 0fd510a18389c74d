import { OFFLINE_PROVIDER_TYPES, type ProviderSpec, type ProviderStatus } from "../../resources/provider.ts";
import type { FastifyReply, FastifyRequest } from "fastify";
import type { ApiContext } from "../context.ts";
import type { AgentSpec } from "../../resources/agent.ts";
import type { Resource } from "../../resources/meta.ts";
import { applyAgentTimeout, resolveEndpoint, secretReader, type ProviderSettings } from "../../controller/resolve.ts";
import type { ModelEndpoint } from "../../providers/index.ts";
import { modelWithFallbacks } from "../../providers/fallbacks.ts";
import { DEFAULT_MAX_TOKENS, type ChatMessage, type FinishReason, type ToolCall, type ToolDefinition } from "../../providers/model.ts";
import type { ResourceStore } from "../../store/resource-store.ts";
import { COMPAT_TOOL_NAMES } from "../../tools/registry.ts";
import { redactValues } from "../../policy/redact.ts";
import { OrkaError } from "../../util/errors.ts";
import type { CompatAttempts } from "./attempts.ts";

const COMPAT_TURN_BUDGET = 10;

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
  `tools: in tool mode Orka runs ${COMPAT_TOOL_NAMES.join(", ")} server-side and cannot return calls to your own tools; send the header X-Orka-Tools: disabled to pass your tools to the model and get its tool calls back`;

/** Progress of the server-side loop as an SSE comment: SDKs skip it, so it never joins the answer, and it keeps the stream alive. */
export const sseComment = (note: string) => `: ${note.replace(/[\r\n]+/g, " ")}\n\n`;

/** A signal that aborts when the response closes before it is complete: the client left, so the model and tools stop. */
export function abortWhenClientLeaves(reply: FastifyReply): AbortSignal {
  const abort = new AbortController();
  reply.raw.on("close", () => {
    if (!reply.raw.writableFinished) abort.abort(new OrkaError("unavailable", "client went away"));
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
  const endpoint = await resolveEndpoint(secretReader(store), provider, model, [], providers);
  if (!endpoint.model) throw new OrkaError("invalid_argument", `no model given and Provider ${provider.metadata.name} has no defaultModel`);
  if (!OFFLINE_PROVIDER_TYPES.includes(endpoint.type) && !endpoint.apiKey) throw new OrkaError("invalid_argument", `API key for ${provider.metadata.name} not found`);
  return endpoint;
}

/**
 * Checks a compat request and resolves its model, so that everything a client can get wrong is
 * refused before a stream starts (in the protocol's error shape, which the SDKs raise as
 * BadRequest/NotFound); the returned function then runs it.
 */
export async function prepareCompat(ctx: ApiContext, request: CompatRequest): Promise<() => Promise<CompatAnswer>> {
  if (!request.passthrough && request.clientTools.length > 0) throw new OrkaError("invalid_argument", CLIENT_TOOLS_REFUSED, { field: "tools" });
  // Refused before a stream starts, so every client gets a plain 429 it can retry.
  if (!request.passthrough) ctx.compat.checkRoom();
  const { endpoint, system } = await resolveCompatModel(ctx.store, ctx.providers, request.namespace, request.model);
  // An upstream may echo the key it was sent: neither a progress note nor an error may carry it to the caller.
  const scrub = (text: string) => redactValues(text, endpoint.apiKey ? [endpoint.apiKey] : []);
  const onProgress = request.onProgress && ((note: string) => request.onProgress!(scrub(note)));
  return async () => {
    try {
      return await runCompat(ctx.compat, { ...request, onProgress }, endpoint, system);
    } catch (err) {
      if (err instanceof Error) err.message = scrub(err.message);
      throw err;
    }
  };
}

/**
 * Runs one compat request: a plain pass-through is one model call from here; with the core tools
 * server-side, Orka's tool loop runs as an attempt of the runner (this process runs no tools).
 */
async function runCompat(compat: CompatAttempts, request: CompatRequest, endpoint: ModelEndpoint, system: string | undefined): Promise<CompatAnswer> {
  const systemPrompt = [system, request.system].filter(Boolean).join("\n\n");
  const maxTokens = request.maxTokens ?? DEFAULT_MAX_TOKENS;

  if (request.passthrough) {
    const model = modelWithFallbacks([endpoint], { ...compat.settings.modelCalls, onNotice: (note) => request.onProgress?.(note) });
    const response = await model.complete({
      model: endpoint.model,
      system: systemPrompt || undefined,
      messages: request.messages,
      tools: request.clientTools,
      maxTokens,
      temperature: request.temperature,
      signal: request.signal,
    });
    return { ...response, usage: response.usage ?? { inputTokens: 0, outputTokens: 0 } };
  }

  const job = {
    namespace: request.namespace,
    endpoint,
    system: systemPrompt,
    messages: request.messages,
    tools: [...COMPAT_TOOL_NAMES],
    maxTokens,
    temperature: request.temperature,
    turnBudget: COMPAT_TURN_BUDGET,
    progress: request.onProgress !== undefined,
  };
  const result = await compat.run(job, { signal: request.signal, onProgress: request.onProgress });
  return { ...result, toolCalls: [], finish: "stop" };
}

/** With a transaction token, running the compat tools server-side needs `orka:tools:use` and each of them granted. */
export function authorizeCompatTools(ctx: ApiContext, request: FastifyRequest, action: string, passthrough: boolean, namespace: string): void {
  const claims = request.principal?.transaction;
  if (!claims || passthrough) return;
  ctx.grants.offeredTools(claims, action, COMPAT_TOOL_NAMES, { method: request.method, path: request.url.split("?")[0], principal: request.principal?.name, namespace });
}
