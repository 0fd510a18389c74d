import type { RuntimeCommands } from "../config.ts";
import type { ProviderSpec, ProviderStatus } from "../resources/provider.ts";
import type { RuntimeType } from "../resources/agent.ts";
import type { Task } from "../resources/task.ts";
import type { AgentRun } from "../runner/attempt-config.ts";
import type { ProviderWire, SessionPolicy } from "../runtimes/adapter.ts";
import { classifySessionTools, runtimeAllowance } from "../runtimes/policy.ts";
import { runtimeAdapter } from "../runtimes/registry.ts";
import type { ResourceStore } from "../store/resource-store.ts";
import { OrkaError } from "../util/errors.ts";
import { applyAgentTimeout, providerReadiness, resolveEndpoint, secretReader, type Agent, type ProviderSettings } from "./resolve.ts";
import { runtimeSettingsOf, type TaskTools } from "./task-tools.ts";

/**
 * The Provider type that serves each API a CLI speaks (its adapter's wire) through the session's proxy:
 * claude speaks Anthropic Messages; codex the OpenAI Responses API; copilot and opencode OpenAI Chat
 * Completions, which any OpenAI-compatible server offers too.
 */
const WIRE_PROVIDER_TYPES: Record<ProviderWire, ProviderSpec["type"]> = {
  "anthropic-messages": "anthropic",
  "openai-responses": "openai",
  "openai-chat": "openai",
};

/** What admitting a coding-agent Task reads besides the store. */
export interface AgentAdmissionSettings {
  providers: ProviderSettings;
  runtimeCommands: RuntimeCommands;
  runtimeCacheDir: string;
  runtimeReadPaths: string[];
}

/**
 * A coding-agent Task's session as it would start now: its runtime, its Provider and pinned model, its
 * effective policy and the Orka tools the broker offers; or why it cannot run, before any process starts,
 * saying what to change. Nothing is widened: a tool the session cannot have, or a policy its CLI cannot
 * enforce exactly, fails the Task.
 */
export async function admitAgentRun(
  store: ResourceStore,
  task: Task,
  agent: Agent,
  tools: TaskTools,
  settings: AgentAdmissionSettings,
): Promise<{ run: AgentRun } | { failure: string }> {
  const fail = (failure: string) => ({ failure });
  const agentName = agent.metadata.name;
  const runtime = agent.spec.runtime;
  if (!runtime) return fail(`agent "${agentName}" has no runtime: a type: agent Task needs an Agent with spec.runtime.type (or use type: ai)`);
  if (runtime.runtimeRef) {
    return fail(`RuntimeRefUnsupported: agent "${agentName}" names runtime.runtimeRef "${runtime.runtimeRef.name}", but this Orka build runs only its built-in runtimes: set runtime.type to claude, codex, copilot or opencode instead`);
  }
  const runtimeType = runtime.type!;
  if (task.spec.priorTaskRef) return fail("built-in coding-agent runtimes do not accept a prior Task: remove priorTaskRef and have the agent read the published branch instead");
  const prompt = task.spec.prompt;
  if (!prompt) return fail("task has no prompt: set spec.prompt");
  if (agent.spec.systemPrompt?.configMapRef) return fail("systemPrompt.configMapRef needs the Kubernetes backend; use systemPrompt.inline");

  const endpoint = await sessionEndpoint(store, agent, runtimeType, settings.providers);
  if (typeof endpoint === "string") return fail(endpoint);

  const runtimeSettings = runtimeSettingsOf(task, agent)!;
  const allowance = runtimeAllowance(runtimeSettings);
  const classified = classifySessionTools(runtimeType, allowance, tools.toolset.names, tools.customTools);
  if ("errors" in classified) return fail(`the ${runtimeType} session cannot have the tools it is given: ${classified.errors.join("; ")}`);
  const brokeredNames = classified.brokered.map((tool) => tool.name);
  const needApproval = (agent.spec.coordination?.approvalRequiredTools ?? []).filter((name) => brokeredNames.includes(name));
  if (needApproval.length > 0) {
    return fail(`the built-in coding CLIs have no approval channel, so a session cannot offer a tool that needs approval (${needApproval.join(", ")}): remove it from the Agent's coordination.approvalRequiredTools or from the session's allowed tools`);
  }

  const model = agent.spec.model;
  const policy: SessionPolicy = {
    nativeTools: classified.nativeTools,
    disallowedTools: allowance.disallowed,
    allowBash: allowance.allowBash,
    maxTurns: allowance.maxTurns,
    brokeredTools: brokeredNames,
    intent: runtimeSettings.intent,
    systemPrompt: agent.spec.systemPrompt?.inline || undefined,
    reasoningEffort: runtime.defaultReasoningEffort,
    model: endpoint.model,
    modelLimits: model?.contextWindow && model.maxTokens ? { contextWindow: model.contextWindow, maxTokens: model.maxTokens } : undefined,
  };
  const refusal = runtimeAdapter(runtimeType).refusal(policy);
  if (refusal) return fail(`the ${runtimeType} runtime cannot enforce this Task's policy exactly: ${refusal}`);
  const command = settings.runtimeCommands[runtimeType];
  return { run: { runtime: runtimeType, ...(command ? { command } : {}), cliCacheDir: settings.runtimeCacheDir, readPaths: settings.runtimeReadPaths, endpoint, prompt, policy, brokered: classified.brokered } };
}

/** The Provider the session's proxy forwards to (the Agent's `model.provider`, in the Agent's namespace), with its key and the pinned model. */
async function sessionEndpoint(store: ResourceStore, agent: Agent, runtime: RuntimeType, providers: ProviderSettings) {
  const namespace = agent.metadata.namespace;
  const wanted = WIRE_PROVIDER_TYPES[runtimeAdapter(runtime).wire];
  const providerName = agent.spec.model?.provider;
  if (!providerName) return `agent "${agent.metadata.name}" names no Provider: set the Agent's model.provider to a Provider of type ${wanted} in namespace "${namespace}"`;
  const modelName = agent.spec.model?.name;
  if (!modelName) return `agent "${agent.metadata.name}" pins no model: set the Agent's model.name to the model its ${runtime} session may use`;
  const provider = await store.get<ProviderSpec, ProviderStatus>("Provider", namespace, providerName);
  if (!provider) return `provider ${providerName} is not ready: provider not found in namespace "${namespace}" (the Agent's model.provider)`;
  if (provider.spec.type !== wanted) {
    return `the ${runtime} runtime needs a Provider of type ${wanted} (the API its CLI speaks), and provider ${providerName} is of type ${provider.spec.type}: point the Agent's model.provider at a ${wanted} Provider`;
  }
  const secrets = secretReader(store);
  const readiness = await providerReadiness(secrets, provider);
  if (!readiness.ready) return `provider ${providerName} is not ready: ${readiness.message}`;
  let endpoint;
  try {
    endpoint = await resolveEndpoint(secrets, provider, modelName, [], providers);
  } catch (err) {
    if (err instanceof OrkaError && err.code !== "internal") return `provider ${providerName} is not ready: ${err.message}`;
    throw err;
  }
  if (!endpoint.apiKey) return `API key for ${providerName} not found: give the Provider a secretRef to a Secret holding its key`;
  applyAgentTimeout(agent, [endpoint]);
  return endpoint;
}
