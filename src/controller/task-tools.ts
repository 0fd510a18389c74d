import { ANNOTATION } from "../resources/meta.ts";
import type { ProviderSpec, ProviderStatus } from "../resources/provider.ts";
import type { ToolSpec } from "../resources/tool.ts";
import type { ResourceStore } from "../store/resource-store.ts";
import type { TaskFacts } from "../auth/grants.ts";
import { assembleToolset, type Toolset } from "../tools/assignment.ts";
import { parentTaskName, type Task } from "./admission.ts";
import type { Agent } from "./resolve.ts";

/** Enabled Tool resources of a namespace, by name. */
export async function enabledCustomTools(store: ResourceStore, namespace: string) {
  const list = await store.list<ToolSpec, unknown>("Tool", { namespace });
  return new Map(list.items.filter((t) => t.spec.enabled !== false).map((t) => [t.metadata.name, t]));
}

/** The Task's tool set by the seed's rule table: what the worker advertises and what a grant must cover. */
export function taskToolset(task: Task, agent: Agent | undefined, customTools: ReadonlySet<string>): Toolset {
  return assembleToolset({
    taskType: task.spec.type,
    agentTools: agent?.spec.tools,
    aiTools: task.spec.ai?.tools,
    coordination: agent?.spec.coordination,
    isChild: parentTaskName(task) !== undefined,
    disableInjection: task.metadata.annotations?.[ANNOTATION.disableCoordinationToolInjection] === "true",
    customTools,
  });
}

/** A coding-agent runtime adds its own tools (and Bash); without a list it is unrestricted. */
function runtimeTools(task: Task, agent: Agent | undefined): string[] | "unrestricted" {
  const runtime = agent?.spec.runtime;
  const allowed = task.spec.agentRuntime?.allowedTools ?? runtime?.defaultAllowedTools;
  if (!allowed) return "unrestricted";
  const bash = task.spec.agentRuntime?.allowBash ?? runtime?.defaultAllowBash ?? false;
  return bash ? [...allowed, "Bash"] : allowed;
}

/** The Agent and Tools a Task's tool set is built from, read once so the grant check and the attempt see the same. */
export interface ToolSources {
  agent: Agent | undefined;
  customTools: Awaited<ReturnType<typeof enabledCustomTools>>;
}

/** Everything a Task's grant and reference checks need to know about it, resolved from the store (or from sources already read). */
export async function resolveTaskFacts(store: ResourceStore, task: Task, sources?: ToolSources): Promise<TaskFacts> {
  const { spec, metadata } = task;
  const namespace = metadata.namespace;
  const agentNamespace = spec.agentRef?.namespace ?? namespace;
  const agent = sources ? sources.agent : spec.agentRef ? await store.get<Agent["spec"], unknown>("Agent", agentNamespace, spec.agentRef.name) : undefined;
  const customTools = sources?.customTools ?? (await enabledCustomTools(store, namespace));
  const toolset = taskToolset(task, agent, new Set(customTools.keys()));
  let tools: TaskFacts["tools"] = toolset.names;
  if (spec.type === "agent") {
    const extra = runtimeTools(task, agent);
    tools = extra === "unrestricted" ? extra : [...new Set([...toolset.names, ...extra])];
  }

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
    workspace: workspace ? { repo: workspace.gitRepo, branch: workspace.branch, ref: workspace.ref } : undefined,
    tools,
    credentialSecrets: [...new Set(credentialSecrets)],
    dependencies,
    isChild: parentTaskName(task) !== undefined,
  };
}
