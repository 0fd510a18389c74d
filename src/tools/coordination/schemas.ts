import { z } from "zod";
import { namespaceName } from "../../resources/meta.ts";
import { soulFields } from "../../resources/soul.ts";
import { workspaceSchema } from "../../resources/task.ts";

/** Arguments of delegate_task, checked by the tool and again by the control plane. */
export const delegateArgs = z.object({
  agent: z.string().describe("Name of the Agent to delegate to"),
  prompt: z.string().describe("The child Task's prompt"),
  taskNamespace: namespaceName.optional().describe("Namespace of the child Task (defaults to this Task's)"),
  agentNamespace: namespaceName.optional().describe("Namespace of the Agent (defaults to taskNamespace)"),
  namespace: namespaceName.optional().describe("Legacy: sets both namespaces"),
  priority: z.number().int().optional().describe("0-1000; defaults to this Task's priority"),
  timeout: z.string().optional().describe("Child timeout, such as 20m"),
  workspace: workspaceSchema.optional().describe("Repository the child works in (Secret names as plain strings); with prior_task and no workspace, the prior Task's is copied"),
  maxTurns: z.number().int().min(1).max(1000).optional(),
  allowBash: z.boolean().optional(),
  prior_task: z.string().optional().describe("A completed Task whose work this continues (native children)"),
  feedback: z.string().optional().describe("Review feedback prepended to the prompt"),
  auto_retry: z.boolean().optional(),
  max_retries: z.number().int().optional().describe("Default 2"),
});
export type DelegateArgs = z.output<typeof delegateArgs>;

export const containerArgs = z.object({
  image: z.string().optional(),
  command: z.array(z.string()).optional(),
  args: z.array(z.string()).optional(),
  workspace: workspaceSchema.optional(),
  prior_task: z.string().optional(),
  namespace: namespaceName.optional(),
  timeout: z.string().optional(),
  priority: z.number().int().optional(),
  schedule: z.string().optional(),
});
export type ContainerArgs = z.output<typeof containerArgs>;

export const waitArgs = z.object({
  tasks: z.array(z.string()).describe("Names of the child Tasks"),
  timeout: z.string().default("10m").describe("How long to wait, such as 10m"),
});

export const createAgentArgs = z.object({
  name: z.string().describe("Role name of the new Agent (the created Agent's name is derived from it)"),
  provider: z.string().describe("Name of an existing Provider"),
  model: z
    .union([z.string(), z.object({ name: z.string(), temperature: z.number().min(0).max(2).optional(), maxTokens: z.number().int().positive().optional() })])
    .describe('Model name, or "provider/model", or {name, temperature, maxTokens}'),
  systemPrompt: z.string().max(32 * 1024).optional().describe("Role instructions"),
  soul: z.union([z.string(), soulFields]).optional().describe("Persona: its text, {inline}, or {configMapRef: {name, key}, digest}"),
  tools: z.array(z.string()).optional(),
  coordination: z
    .object({ enabled: z.boolean().optional(), maxDepth: z.number().int().min(1).max(10).optional(), maxConcurrentChildren: z.number().int().min(1).optional(), allowedAgents: z.array(z.object({ name: z.string(), namespace: z.string().optional() })).optional() })
    .optional(),
});
export type CreateAgentArgs = z.output<typeof createAgentArgs>;
