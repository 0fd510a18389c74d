import { ANNOTATION } from "../../resources/meta.ts";
import type { SecretSpec } from "../../resources/secret.ts";
import type { ToolSpec, ToolStatus } from "../../resources/tool.ts";
import { recallMemoryContext, type MemoryContextEntry } from "../../memory/context.ts";
import { carriedSecretValues, type AiRun, type AttemptConfig } from "../../runner/attempt-config.ts";
import type { AttemptDirs } from "../../runner/runner.ts";
import type { ResourceStore } from "../../store/resource-store.ts";
import type { ToolSettings } from "../../tools/define.ts";
import type { StartPlan } from "../admission.ts";
import { SESSION_REF_DEFAULTS, type Task } from "../../resources/task.ts";
import { coordinationOf } from "../../resources/agent.ts";
import { errorMessage } from "../../util/errors.ts";
import { recordEvent, type TaskContext } from "./context.ts";

const RESOLVED_APPROVALS_CARRIED = 32;

/** The attempt being started, as the Task's status will name it. */
export interface NewAttempt {
  id: string;
  number: number;
  /** The worker's bearer token for /internal/v1. */
  token: string;
  dirs: AttemptDirs;
  journal: AttemptConfig["journal"];
}

/** Everything the attempt needs, from the Task, its admission plan and the controller's settings. */
export async function buildAttemptConfig(ctx: TaskContext, task: Task, plan: StartPlan, attempt: NewAttempt): Promise<AttemptConfig> {
  const { metadata, spec, status } = task;
  const coordination = coordinationOf(plan.agentResource?.spec);
  return {
    attemptId: attempt.id,
    attempt: attempt.number,
    journal: attempt.journal,
    task: { name: metadata.name, namespace: metadata.namespace, uid: metadata.uid!, type: spec.type },
    agentName: plan.agentResource?.metadata.name,
    parentTask: plan.parentTask,
    controllerURL: ctx.controllerURL,
    token: attempt.token,
    ...attempt.dirs,
    toolSettings: await toolSettingsFor(ctx, task, plan),
    session: spec.sessionRef && {
      name: spec.sessionRef.name,
      append: spec.sessionRef.append ?? SESSION_REF_DEFAULTS.append,
      maxMessages: spec.sessionRef.maxMessages ?? SESSION_REF_DEFAULTS.maxMessages,
    },
    ai: plan.ai && { ...plan.ai, modelCalls: ctx.modelCalls, memories: memoryContextFor(ctx, task, plan.ai) },
    agent: plan.agent,
    coordination: {
      enabled: coordination.enabled,
      maxDepth: coordination.maxDepth,
      maxChildren: coordination.maxConcurrentChildren,
      allowedAgents: (coordination.allowedAgents ?? []).map((a) => a.name),
      depth: plan.depth,
    },
    autonomous: {
      mode: coordination.autonomous,
      iteration: status?.iteration ?? 0,
      maxIterations: coordination.maxIterations,
    },
    approvalRequiredTools: coordination.approvalRequiredTools ?? [],
    resolvedApprovals: ctx.approvals
      .listForTask(metadata.namespace, metadata.name, metadata.uid)
      .filter((a) => a.status !== "pending")
      .reverse()
      .slice(0, RESOLVED_APPROVALS_CARRIED),
    container: plan.container,
  };
}

/**
 * The namespace's newest reviewed memories for an attempt that may recall them. A resumed attempt gets
 * them too: its prompt comes from its journal, unless nothing was journalled yet, and then it starts
 * afresh with them. Best effort: a failing read starts the attempt without them.
 */
function memoryContextFor(ctx: TaskContext, task: Task, ai: AiRun): MemoryContextEntry[] {
  if (!ai.tools.includes("recall_memory")) return [];
  try {
    return recallMemoryContext(ctx.memory, task.metadata.namespace);
  } catch (err) {
    recordEvent(ctx, task, { type: "MemoryUnavailable", severity: "warning", summary: `durable memory not loaded: ${errorMessage(err)}` });
    return [];
  }
}

/** A delegated child's exchanged transaction token, from the Secret its annotation names. */
export async function transactionTokenOf(store: ResourceStore, task: Task): Promise<string | undefined> {
  const secretName = task.metadata.annotations?.[ANNOTATION.transactionTokenSecret];
  if (!secretName) return undefined;
  return (await store.get<SecretSpec, unknown>("Secret", task.metadata.namespace, secretName))?.spec.data.token || undefined;
}

/** Every Secret value the attempt uses: its model keys, the search key, and its HTTP Tools' credentials. */
export async function secretValuesOf(store: ResourceStore, task: Task, config: AttemptConfig): Promise<(string | undefined)[]> {
  const values: (string | undefined)[] = carriedSecretValues(config);
  const customToolNames = [...(config.ai?.customTools ?? []), ...(config.agent?.brokered.filter((tool) => tool.digest) ?? [])].map((tool) => tool.name);
  for (const name of customToolNames) {
    const ref = (await store.get<ToolSpec, ToolStatus>("Tool", task.metadata.namespace, name))?.spec.http?.authSecretRef;
    if (ref) values.push((await store.get<SecretSpec, unknown>("Secret", task.metadata.namespace, ref.name))?.spec.data[ref.key]);
  }
  return values;
}

/** The search key goes only to attempts that may search, from a Secret in their own namespace. */
async function toolSettingsFor(ctx: TaskContext, task: Task, plan: StartPlan): Promise<ToolSettings> {
  const settings = ctx.toolSettings;
  if (!ctx.searchSecret || !offeredToolNames(plan).includes("web_search")) return settings;
  const secret = await ctx.store.get<SecretSpec, unknown>("Secret", task.metadata.namespace, ctx.searchSecret);
  return { ...settings, search: { ...settings.search, apiKey: secret?.spec.data["api-key"] } };
}

/** The tools an attempt may call through the control plane: an ai loop's, or the Orka tools a coding-agent session's broker offers. */
export function offeredToolNames(plan: StartPlan): string[] {
  return plan.ai?.tools ?? plan.agent?.brokered.map((tool) => tool.name) ?? [];
}
