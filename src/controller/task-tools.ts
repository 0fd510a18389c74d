import { ANNOTATION } from "../resources/meta.ts";
import type { ProviderSpec, ProviderStatus } from "../resources/provider.ts";
import type { Task } from "../resources/task.ts";
import type { ToolSpec, ToolStatus } from "../resources/tool.ts";
import type { ResourceStore } from "../store/resource-store.ts";
import type { TaskFacts } from "../auth/grants.ts";
import { assembleToolset, type Toolset } from "../tools/assignment.ts";
import { parentTaskName } from "../resources/parent-link.ts";
import type { Agent } from "./resolve.ts";
import type { RuntimeSettings } from "../runtimes/policy.ts";

/** Enabled Tool resources of a namespace, by name. */
async function enabledCustomTools(store: ResourceStore, namespace: string) {
  const list = await store.list<ToolSpec, ToolStatus>("Tool", { namespace });
  return new Map(list.items.filter((t) => t.spec.enabled !== false).map((t) => [t.metadata.name, t]));
}

/** A Task's tool set and what it was worked out from, read once so the grant check and the attempt see the same. */
export interface TaskTools {
  agent: Agent | undefined;
  customTools: Awaited<ReturnType<typeof enabledCustomTools>>;
  toolset: Toolset;
}

/**
 * The one place a Task's tools are worked out: its Agent (read here unless the caller has it) and the
 * enabled Tools of its namespace, through the rule table. The model is offered these, and a grant must
 * cover them.
 */
export async function assignTaskTools(store: ResourceStore, task: Task, agent?: Agent): Promise<TaskTools> {
  const { spec, metadata } = task;
  agent ??= spec.agentRef ? await store.get<Agent["spec"], unknown>("Agent", spec.agentRef.namespace ?? metadata.namespace, spec.agentRef.name) : undefined;
  const customTools = await enabledCustomTools(store, metadata.namespace);
  const toolset = assembleToolset({
    taskType: spec.type,
    // A coding-agent session's tools are its runtime's list (below), not the tools an ai Task selects.
    agentTools: spec.type === "agent" ? undefined : agent?.spec.tools,
    aiTools: spec.type === "agent" ? undefined : spec.ai?.tools,
    coordination: agent?.spec.coordination,
    isChild: parentTaskName(task) !== undefined,
    validation: spec.validation !== undefined,
    disableInjection: metadata.annotations?.[ANNOTATION.disableCoordinationToolInjection] === "true",
    customTools: new Set(customTools.keys()),
    runtime: runtimeSettingsOf(task, agent),
  });
  return { agent, customTools, toolset };
}

/** What a coding-agent Task's Agent and the Task itself say about its session; undefined unless the Agent names a runtime type. */
export function runtimeSettingsOf(task: Task, agent: Agent | undefined): RuntimeSettings | undefined {
  const runtime = agent?.spec.runtime;
  if (task.spec.type !== "agent" || !runtime?.type) return undefined;
  return { runtime: runtime.type, agent: runtime, task: task.spec.agentRuntime, intent: task.spec.workspace?.intent === "write" ? "write" : "read" };
}

/** Everything a Task's grant and reference checks need to know about it, with its tools as assigned (assigned here unless given). */
export async function resolveTaskFacts(store: ResourceStore, task: Task, tools?: TaskTools): Promise<TaskFacts> {
  const { spec, metadata } = task;
  const namespace = metadata.namespace;
  const agentNamespace = spec.agentRef?.namespace ?? namespace;
  const { agent, customTools, toolset } = tools ?? (await assignTaskTools(store, task));

  const models: TaskFacts["models"] = [];
  const dependencies: TaskFacts["dependencies"] = spec.agentRef ? [{ field: "agentRef", namespace: agentNamespace }] : [];
  const providerRef = spec.ai?.providerRef ?? agent?.spec.providerRef;
  if (spec.type === "ai" && providerRef) {
    const providerNamespace = providerRef.namespace ?? namespace;
    const provider = await store.get<ProviderSpec, ProviderStatus>("Provider", providerNamespace, providerRef.name);
    models.push({ provider: providerRef.name, providerNamespace, model: spec.ai?.model ?? agent?.spec.model?.name ?? provider?.spec.defaultModel });
    const field = spec.ai?.providerRef ? "ai.providerRef" : `the providerRef of agent "${spec.agentRef?.name}"`;
    dependencies.push({ field, namespace: providerNamespace });
    for (const fallback of agent?.spec.model?.fallbacks ?? []) models.push({ provider: fallback.providerRef, providerNamespace: namespace, model: fallback.model });
  }
  // A coding-agent session's Provider is the one its Agent's model names, in the Agent's namespace (a reference already checked as agentRef's).
  const runtimeProvider = agent?.spec.runtime && agent.spec.model?.provider;
  if (spec.type === "agent" && runtimeProvider) models.push({ provider: runtimeProvider, providerNamespace: agentNamespace, model: agent.spec.model?.name });

  const workspace = spec.workspace;
  const credentialSecrets = [
    workspace?.readCredentialRef,
    workspace?.publicationReadCredentialRef,
    workspace?.publicationCredentialRef,
    workspace?.forgeCredentialRef,
    ...toolset.custom.map((name) => customTools.get(name)?.spec.http?.authSecretRef?.name),
  ].filter((name): name is string => !!name);

  return {
    name: metadata.name,
    namespace,
    type: spec.type,
    agent: spec.agentRef ? { name: spec.agentRef.name, namespace: agentNamespace } : undefined,
    models,
    workspace: workspace
      ? { repo: workspace.gitRepo, branch: workspace.branch, ref: workspace.ref, publicationRepo: workspace.publicationGitRepo, pushBranch: workspace.pushBranch }
      : undefined,
    tools: toolset.unrestricted ? "unrestricted" : toolset.names,
    credentialSecrets: [...new Set(credentialSecrets)],
    dependencies,
    isChild: parentTaskName(task) !== undefined,
  };
}
