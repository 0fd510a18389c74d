import { OFFLINE_PROVIDER_TYPES, type ProviderSpec, type ProviderStatus } from "../resources/provider.ts";
import type { ModelEndpoint } from "../providers/index.ts";
import type { ToolDefinition } from "../providers/model.ts";
import { coordinationOf } from "../resources/agent.ts";
import { ANNOTATION, LABEL, type Resource } from "../resources/meta.ts";
import type { SkillSpec } from "../resources/skill.ts";
import type { Task, TaskSpec, TaskStatus } from "../resources/task.ts";
import type { ToolSpec, ToolStatus } from "../resources/tool.ts";
import type { ResourceStore } from "../store/resource-store.ts";
import { builtinTool } from "../tools/registry.ts";
import { childRefusal, type ChildRefusal } from "./child-rules.ts";
import { parentNamespaceOf, parentTaskName } from "../resources/parent-link.ts";
import { assignTaskTools, resolveTaskFacts, type TaskTools } from "./task-tools.ts";
import type { GrantGate } from "../auth/grant-gate.ts";
import { GrantRefused } from "../auth/grants.ts";
import type { AgentRun, AiRun, ContainerRun } from "../runner/attempt-config.ts";
import { admitAgentRun, type AgentAdmissionSettings } from "./agent-admission.ts";
import { applyAgentTimeout, providerReadiness, resolveEndpoint, secretReader, type Agent, type ProviderSettings } from "./resolve.ts";
import { OrkaError } from "../util/errors.ts";

/** Everything a Task needs to start, resolved from the store. */
export interface StartPlan {
  agentResource?: Agent;
  parentTask?: string;
  depth: number;
  ai?: AiRun;
  /** A coding-agent Task's session. */
  agent?: AgentRun;
  container?: ContainerRun;
  notices: string[];
}

export type Admission = { kind: "fail"; message: string } | { kind: "wait"; delayMs: number; reason: string } | { kind: "admit"; plan: StartPlan };

const fail = (message: string): Admission => ({ kind: "fail", message });
/**
 * A refusal (an unreadable script file, say) fails the Task with its reason instead of retrying the
 * reconcile; a fault of Orka itself (an internal error, a Secret that cannot be decrypted) is retried.
 */
const refusal = (err: unknown): OrkaError => {
  if (err instanceof OrkaError && err.code !== "internal") return err;
  throw err;
};
const CHILD_WAIT_MS = 10_000;

/** What admission checks a Task against besides the store. */
export interface AdmissionChecks extends AgentAdmissionSettings {
  /** Transaction grants, checked again as the attempt would start now. */
  grants: GrantGate;
  /** Where scripted Providers may read files. */
  providers: ProviderSettings;
}

/**
 * Whether a Task can start now: its Agent, whether the Agent suits the Task's type, a child's coordination
 * limits, its Provider; then a Task with a transaction is checked against its stamped grant as it would start.
 */
export async function admit(store: ResourceStore, task: Task, checks: AdmissionChecks): Promise<Admission> {
  const { spec, metadata } = task;
  const namespace = metadata.namespace;
  let agent: Agent | undefined;
  if (spec.agentRef) {
    agent = await store.get("Agent", spec.agentRef.namespace ?? namespace, spec.agentRef.name);
    if (!agent) return fail(`failed to get agent: agent "${spec.agentRef.name}" not found`);
  }

  if (spec.type === "agent" && !agent) return fail("type: agent tasks require an agentRef");
  if (spec.type === "ai" && agent?.spec.runtime) {
    return fail(`agent "${agent.metadata.name}" has runtime configured (use type: agent instead of type: ai)`);
  }
  const coordination = agent?.spec.coordination;
  const wantsApproval =
    (agent?.spec.tools ?? []).some((t) => t.name === "request_approval" && t.enabled !== false) ||
    (spec.ai?.tools ?? []).includes("request_approval") ||
    (coordination?.approvalRequiredTools?.length ?? 0) > 0;
  if (wantsApproval && !coordination?.autonomous) {
    return fail("request_approval and approvalRequiredTools need an Agent with coordination.autonomous: true");
  }

  const child = await checkChild(store, task, agent);
  if (child.kind !== "admit") return child;
  const plan: StartPlan = { agentResource: agent, parentTask: parentTaskName(task), depth: child.plan.depth, notices: [] };

  const tools = await assignTaskTools(store, task, agent);
  const admission =
    spec.type === "container" ? admitContainer(task, plan)
    : spec.type === "agent" ? await admitAgent(store, task, plan, tools, checks)
    : await admitAi(store, task, plan, tools, checks.providers);
  if (admission.kind !== "admit" || !spec.transaction) return admission;
  return recheckGrant(store, checks.grants, task, tools, admission);
}

/**
 * The grant was checked when the Task was created, but its Agent, Tools or Providers may have changed
 * since: what the attempt would get now, read from the same sources as the plan, must still be covered.
 */
async function recheckGrant(store: ResourceStore, grants: GrantGate, task: Task, tools: TaskTools, admission: Admission): Promise<Admission> {
  const claims = task.spec.transaction!;
  const site = { method: "START", path: `tasks/${task.metadata.name}`, principal: claims.subject, namespace: task.metadata.namespace };
  try {
    grants.attemptStart(claims, await resolveTaskFacts(store, task, tools), site);
  } catch (err) {
    if (err instanceof GrantRefused) return fail(err.message);
    throw err;
  }
  return admission;
}

/** A delegated child (it has a coordination depth) starts only while its parent may have it, and within the parent's running-children limit. */
async function checkChild(store: ResourceStore, task: Task, agent: Agent | undefined): Promise<Admission> {
  const depthText = task.metadata.annotations?.[ANNOTATION.coordinationDepth];
  if (depthText === undefined) return { kind: "admit", plan: { depth: 0, notices: [] } };
  const depth = Number(depthText);
  if (!Number.isInteger(depth) || depth < 1) return fail("coordination depth annotation is invalid");
  const parentName = parentTaskName(task);
  const parent = parentName ? await store.get<TaskSpec, TaskStatus>("Task", parentNamespaceOf(task), parentName) : undefined;
  const parentAgentRef = parent?.spec.agentRef;
  const parentAgent = parentAgentRef
    ? await store.get<Agent["spec"], unknown>("Agent", parentAgentRef.namespace ?? parentNamespaceOf(task), parentAgentRef.name)
    : undefined;
  const agentRef = { name: task.spec.agentRef?.name ?? "", namespace: task.spec.agentRef?.namespace ?? task.metadata.namespace };
  const refusal = childRefusal({ parentName, parentAgent, depth, namespace: task.metadata.namespace, agentRef, agent });
  if (refusal) return fail(admissionRefused(refusal, depth, agentRef.name));
  const { maxConcurrentChildren } = coordinationOf(parentAgent?.spec);
  const siblings = await store.list<TaskSpec, TaskStatus>("Task", {
    namespace: task.metadata.namespace,
    labelSelector: `${LABEL.parentTask}=${task.metadata.labels?.[LABEL.parentTask] ?? parentName}`,
  });
  const running = siblings.items.filter((t) => t.metadata.name !== task.metadata.name && t.status?.phase === "Running").length;
  if (running >= maxConcurrentChildren) {
    return { kind: "wait", delayMs: CHILD_WAIT_MS, reason: `waiting: parent has ${running} running children (max ${maxConcurrentChildren})` };
  }
  return { kind: "admit", plan: { depth, notices: [] } };
}

function admissionRefused(refusal: ChildRefusal, depth: number, agent: string): string {
  switch (refusal.rule) {
    case "coordination":
      return "parent agent does not have coordination enabled";
    case "depth":
      return `coordination depth ${depth} exceeds max ${refusal.maxDepth}`;
    case "agent":
      return `agent "${agent}" not in parent's allowedAgents`;
  }
}

async function admitAgent(store: ResourceStore, task: Task, plan: StartPlan, tools: TaskTools, settings: AgentAdmissionSettings): Promise<Admission> {
  const admitted = await admitAgentRun(store, task, plan.agentResource!, tools, settings);
  if ("failure" in admitted) return fail(admitted.failure);
  plan.agent = admitted.run;
  return { kind: "admit", plan };
}

function admitContainer(task: Task, plan: StartPlan): Admission {
  if (task.spec.image) return fail("container runtime not available");
  if (!task.spec.command?.length) return fail("container tasks need spec.command (or spec.image with a container runtime)");
  const env = Object.fromEntries((task.spec.env ?? []).filter((e) => !e.name.startsWith("ORKA_")).map((e) => [e.name, e.value]));
  plan.container = { command: [...task.spec.command, ...(task.spec.args ?? [])], env, network: false };
  return { kind: "admit", plan };
}

async function admitAi(store: ResourceStore, task: Task, plan: StartPlan, tools: TaskTools, providers: ProviderSettings): Promise<Admission> {
  const { spec, metadata } = task;
  const namespace = metadata.namespace;
  const agent = plan.agentResource;
  const providerRef = spec.ai?.providerRef ?? agent?.spec.providerRef;
  if (!providerRef) return fail("no provider configured: set spec.ai.providerRef or the Agent's providerRef");
  const provider = await store.get<ProviderSpec, ProviderStatus>("Provider", providerRef.namespace ?? namespace, providerRef.name);
  if (!provider) return fail(`provider ${providerRef.name} is not ready: provider not found`);
  const secrets = secretReader(store);
  const readiness = await providerReadiness(secrets, provider);
  if (!readiness.ready) return fail(`provider ${providerRef.name} is not ready: ${readiness.message}`);

  const secretNames = [spec.secretRef?.name, agent?.spec.secretRef?.name].filter((n): n is string => !!n);
  const endpoint = await resolveEndpoint(secrets, provider, spec.ai?.model ?? agent?.spec.model?.name, secretNames, providers).catch(refusal);
  if (endpoint instanceof OrkaError) return fail(`provider ${providerRef.name} is not ready: ${endpoint.message}`);
  if (!endpoint.model) return fail("no model configured: set spec.ai.model, the Agent's model.name or the Provider's defaultModel");
  if (!OFFLINE_PROVIDER_TYPES.includes(endpoint.type) && !endpoint.apiKey) return fail(`API key for ${provider.metadata.name} not found`);

  const fallbacks: ModelEndpoint[] = [];
  for (const fallback of agent?.spec.model?.fallbacks ?? []) {
    const fallbackProvider = await store.get<ProviderSpec, ProviderStatus>("Provider", namespace, fallback.providerRef);
    if (!fallbackProvider) plan.notices.push(`fallback provider ${fallback.providerRef} not found; skipped`);
    else {
      const resolved = await resolveEndpoint(secrets, fallbackProvider, fallback.model, secretNames, providers).catch(refusal);
      if (resolved instanceof OrkaError) plan.notices.push(`fallback provider ${fallback.providerRef} skipped: ${resolved.message}`);
      else fallbacks.push(resolved);
    }
  }

  applyAgentTimeout(agent, [endpoint, ...fallbacks]);

  const prompt = spec.ai?.prompt ?? spec.prompt;
  if (!prompt) return fail("task has no prompt: set spec.prompt or spec.ai.prompt");
  if (agent?.spec.systemPrompt?.configMapRef && !spec.ai?.systemPrompt) {
    return fail("systemPrompt.configMapRef needs the Kubernetes backend; use systemPrompt.inline");
  }
  if (agent?.spec.soul?.configMapRef) return fail("soul.configMapRef needs the Kubernetes backend; use soul.inline");

  const skills: string[] = [];
  for (const ref of [...(agent?.spec.skills ?? []), ...(spec.ai?.skills ?? [])]) {
    const skill = await store.get<SkillSpec, unknown>("Skill", namespace, ref.name);
    if (skill) skills.push(skill.spec.content.inline);
    else plan.notices.push(`skill ${ref.name} not found; skipped`);
  }

  const offered = offeredTools(plan, tools);
  const coordination = agent?.spec.coordination;
  plan.ai = {
    endpoint,
    fallbacks,
    prompt,
    systemPrompt: spec.ai?.systemPrompt ?? agent?.spec.systemPrompt?.inline ?? "",
    soul: agent?.spec.soul?.inline,
    skills,
    ...offered,
    temperature: spec.ai?.temperature ?? agent?.spec.model?.temperature,
    maxTokens: spec.ai?.maxTokens ?? agent?.spec.model?.maxTokens,
    turnBudget: coordination?.enabled ? (coordination.autonomous ? 100 : 50) : 10,
  };
  return { kind: "admit", plan };
}

/** What the model is offered of the Task's tool set: the built-in tools this build implements and the custom Tools, with notes on the rest. */
function offeredTools(plan: StartPlan, { toolset, customTools: customByName }: TaskTools): { tools: string[]; customTools: ToolDefinition[] } {
  plan.notices.push(...toolset.warnings);
  const custom = new Set(toolset.custom);
  const notBuilt = toolset.names.filter((name) => !custom.has(name) && !builtinTool(name));
  if (notBuilt.length > 0) plan.notices.push(`not offered to the model because this Orka build does not implement them yet: ${notBuilt.join(", ")}`);
  const definitions = new Map(toolset.custom.map((name) => [name, customDefinitions(plan, customByName.get(name)!)]));
  return {
    tools: toolset.names.flatMap((name) => (custom.has(name) ? definitions.get(name)!.map((d) => d.name) : builtinTool(name) ? [name] : [])),
    customTools: [...definitions.values()].flat(),
  };
}

/** An HTTP Tool is one model tool; an MCP Tool is one per server tool its probe found (none while it is unavailable). */
function customDefinitions(plan: StartPlan, tool: Resource<ToolSpec, ToolStatus>): ToolDefinition[] {
  const { name } = tool.metadata;
  if (!tool.spec.mcp) return [{ name, description: tool.spec.description, parameters: tool.spec.parameters }];
  if (!tool.status?.available || !tool.status.mcpTools?.length) {
    plan.notices.push(`MCP Tool "${name}" is not offered: ${tool.status?.error ?? "its server has not been probed yet"}`);
    return [];
  }
  return tool.status.mcpTools.map((t) => ({ name: t.modelName, description: t.description, parameters: t.inputSchema }));
}
