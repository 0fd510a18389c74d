import { z } from "zod";
import { durationText, localRef, namespacedRef } from "./meta.ts";
import { modelCallTimeout } from "./provider.ts";
import { soulSchema } from "./soul.ts";

export const RUNTIME_TYPES = ["claude", "codex", "copilot", "opencode"] as const;

export const agentSpecSchema = z
  .strictObject({
    providerRef: namespacedRef.optional(),
    model: z
      .strictObject({
        provider: z.string().optional(),
        name: z.string().optional(),
        temperature: z.number().min(0).max(2).optional(),
        maxTokens: z.number().int().positive().optional(),
        fallbacks: z.array(z.strictObject({ providerRef: z.string().min(1), model: z.string().optional() })).optional(),
        /** How long one model call may take, for this Agent's Provider and fallbacks alike; wins over the Provider's. */
        timeout: modelCallTimeout.optional(),
      })
      .optional(),
    systemPrompt: z
      .strictObject({ inline: z.string().optional(), configMapRef: z.strictObject({ name: z.string(), key: z.string() }).optional() })
      .refine((p) => (p.inline === undefined) !== (p.configMapRef === undefined), {
        message: "set exactly one of inline and configMapRef",
      })
      .optional(),
    tools: z.array(z.strictObject({ name: z.string().min(1), enabled: z.boolean().default(true) })).optional(),
    skills: z.array(localRef).optional(),
    soul: soulSchema.optional(),
    secretRef: localRef.optional(),
    coordination: z
      .strictObject({
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
      .strictObject({
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
