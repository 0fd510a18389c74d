import { randomBytes } from "node:crypto";
import { agentSpecSchema, coordinationOf, type AgentSpec } from "../resources/agent.ts";
import { ANNOTATION, API_VERSION, LABEL, labelValue } from "../resources/meta.ts";
import type { Task } from "../resources/task.ts";
import { parseWith } from "../resources/validate.ts";
import type { ResourceStore } from "../store/resource-store.ts";
import { OrkaError } from "../util/errors.ts";
import type { CreateAgentArgs } from "../tools/coordination/schemas.ts";
import type { NamespaceIsolation } from "../auth/isolation.ts";
import { parentLink } from "../resources/parent-link.ts";
import { checkNamespaceForTask } from "./task-identity.ts";

/** The Agent name: `<task>-<role>-<6 hex>`, DNS-1123, at most 63 characters. */
function agentName(task: string, role: string): string {
  const slug = `${task}-${role}`.toLowerCase().replace(/[^a-z0-9-]+/g, "-").replace(/-+/g, "-").slice(0, 55).replace(/^-+|-+$/g, "");
  return `${slug}-${randomBytes(3).toString("hex")}`;
}

/**
 * create_agent: the Agent lives in the Task's namespace, is owned by the Task (and
 * deleted with it), and may not hold tools or depth the creator does not have.
 */
export async function createAgentForTask(store: ResourceStore, task: Task, allowedTools: string[], args: CreateAgentArgs) {
  const namespace = task.metadata.namespace;
  if (!args.name.trim()) throw new OrkaError("invalid_argument", "name is required");
  const creator = task.spec.agentRef ? await store.get<AgentSpec, unknown>("Agent", task.spec.agentRef.namespace ?? namespace, task.spec.agentRef.name) : undefined;
  if (!(await store.get("Provider", namespace, args.provider))) {
    throw new OrkaError("invalid_argument", `provider "${args.provider}" not found; coordinator uses "${creator?.spec.providerRef?.name ?? "none"}"`);
  }
  const escalated = (args.tools ?? []).filter((tool) => !allowedTools.includes(tool));
  if (escalated.length > 0) throw new OrkaError("permission_denied", `tools not held by this task cannot be granted: ${escalated.join(", ")}`);
  const depth = Number(task.metadata.annotations?.[ANNOTATION.coordinationDepth] ?? 0) || 0;
  const remaining = coordinationOf(creator?.spec).maxDepth - depth;
  if ((args.coordination?.maxDepth ?? 0) > remaining) throw new OrkaError("permission_denied", `maxDepth may be at most ${remaining} (what this task has left)`);
  const model = typeof args.model === "string" ? { name: args.model.includes("/") ? args.model.slice(args.model.indexOf("/") + 1) : args.model } : args.model;
  const spec = parseWith(
    agentSpecSchema,
    {
      providerRef: { name: args.provider },
      model,
      ...(args.systemPrompt ? { systemPrompt: { inline: args.systemPrompt } } : {}),
      ...(args.soul !== undefined ? { soul: typeof args.soul === "string" ? { inline: args.soul } : args.soul } : {}),
      ...(args.tools?.length ? { tools: args.tools.map((name) => ({ name })) } : {}),
      ...(args.coordination ? { coordination: args.coordination } : {}),
    },
    "spec",
  );
  const name = agentName(task.metadata.name, args.name);
  await store.create({
    apiVersion: API_VERSION,
    kind: "Agent",
    metadata: { name, namespace, ...parentLink(task, namespace, { labels: { [LABEL.createdBy]: "create_agent", "orka.ai/agent-role": labelValue(args.name.toLowerCase()) } }) },
    spec,
  });
  return { agentName: name, namespace, status: "created" };
}

/**
 * delete_agent: only an Agent this Task created (its owner), never a person's, in
 * the namespace asked for when the Task's identity may act there.
 */
export async function deleteAgentForTask(store: ResourceStore, isolation: NamespaceIsolation, task: Task, name: string, requestedNamespace?: string) {
  const namespace = requestedNamespace || task.metadata.namespace;
  if (!name.trim()) throw new OrkaError("invalid_argument", "agent name is required");
  checkNamespaceForTask(task, namespace, isolation);
  const agent = await store.get("Agent", namespace, name);
  if (!agent) throw new OrkaError("not_found", `failed to get agent ${namespace}/${name}: not found`);
  const owned = agent.metadata.ownerReferences?.some((o) => o.uid === task.metadata.uid);
  if (!owned) throw new OrkaError("permission_denied", `cannot delete agent ${namespace}/${name}: not owned by current task`);
  await store.delete("Agent", namespace, name);
  return { name, status: "deleted" };
}
