import { z } from "zod";
import { durationText, localRef, namespacedRef } from "./meta.ts";
import { soulSchema } from "./soul.ts";

export const RUNTIME_TYPES = ["claude", "codex", "copilot", "opencode"] as const;

export const agentSpecSchema = z
  .object({
    providerRef: namespacedRef.optional(),
    model: z
      .object({
        provider: z.string().optional(),
        name: z.string().optional(),
        temperature: z.number().min(0).max(2).optional(),
        maxTokens: z.number().int().positive().optional(),
        fallbacks: z.array(z.object({ providerRef: z.string().min(1), model: z.string().optional() })).optional(),
      })
      .optional(),
    systemPrompt: z
      .object({ inline: z.string().optional(), configMapRef: z.object({ name: z.string(), key: z.string() }).optional() })
      .refine((p) => (p.inline === undefined) !== (p.configMapRef === undefined), {
        message: "set exactly one of inline and configMapRef",
      })
      .optional(),
    tools: z.array(z.object({ name: z.string().min(1), enabled: z.boolean().default(true) })).optional(),
    skills: z.array(localRef).optional(),
    soul: soulSchema.optional(),
    secretRef: localRef.optional(),
    coordination: z
      .object({
        enabled: z.boolean().default(false),
        autonomous: z.boolean().default(false),
        maxIterations: z.number().int().min(0).default(0),
        allowedAgents: z.array(namespacedRef).optional(),
        maxConcurrentChildren: z.number().int().min(1).default(5),
        maxDepth: z.number().int().min(1).max(10).default(3),
        approvalRequiredTools: z.array(z.string()).optional(),
        /** A pending approval older than this expires (treated as declined); none: wait for ever. */
        approvalTimeout: durationText.optional(),
      })
      .refine((c) => !(c.approvalRequiredTools?.length && !c.autonomous), {
        message: "approvalRequiredTools requires autonomous: true",
        path: ["approvalRequiredTools"],
      })
      .optional(),
    runtime: z
      .object({
        type: z.enum(RUNTIME_TYPES).optional(),
        runtimeRef: localRef.optional(),
        defaultMaxTurns: z.number().int().positive().default(50),
        defaultAllowedTools: z.array(z.string()).optional(),
        defaultAllowBash: z.boolean().optional(),
      })
      .refine((r) => (r.type === undefined) !== (r.runtimeRef === undefined), {
        message: "set exactly one of type and runtimeRef",
      })
      .optional(),
  })
  .refine((spec) => !(spec.providerRef && spec.runtime), {
    message: "providerRef and runtime cannot be set together",
    path: ["runtime"],
  });
export type AgentSpec = z.infer<typeof agentSpecSchema>;

export const agentStatusSchema = z.object({
  ready: z.boolean().optional(),
  activeTasks: z.number().int().default(0),
  lastUsed: z.string().optional(),
});
export type AgentStatus = z.infer<typeof agentStatusSchema>;
