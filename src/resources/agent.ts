import { z } from "zod";
import { durationText, localRef, namespacedRef } from "./meta.ts";
import { modelCallTimeout } from "./provider.ts";
import { soulSchema } from "./soul.ts";

export const RUNTIME_TYPES = ["claude", "codex", "copilot", "opencode"] as const;
export type RuntimeType = (typeof RUNTIME_TYPES)[number];

export const REASONING_EFFORTS = ["low", "medium", "high", "xhigh", "max"] as const;
export type ReasoningEffort = (typeof REASONING_EFFORTS)[number];

/** A coding-agent session's turns when neither Task nor Agent says, and the most either may say. */
export const DEFAULT_MAX_TURNS = 50;
export const MAX_TURNS_LIMIT = 1000;
/** The most tool names a session's list may hold. */
export const MAX_ALLOWED_TOOLS = 128;

/** What an Agent's `coordination` means for a field it leaves out, or when it has no `coordination` at all. */
export const COORDINATION_DEFAULTS = { enabled: false, autonomous: false, maxIterations: 0, maxConcurrentChildren: 5, maxDepth: 3 } as const;

const coordinationSchema = z
  .strictObject({
    enabled: z.boolean().default(COORDINATION_DEFAULTS.enabled),
    autonomous: z.boolean().default(COORDINATION_DEFAULTS.autonomous),
    maxIterations: z.number().int().min(0).default(COORDINATION_DEFAULTS.maxIterations),
    allowedAgents: z.array(namespacedRef).optional(),
    maxConcurrentChildren: z.number().int().min(1).default(COORDINATION_DEFAULTS.maxConcurrentChildren),
    maxDepth: z.number().int().min(1).max(10).default(COORDINATION_DEFAULTS.maxDepth),
    approvalRequiredTools: z.array(z.string()).optional(),
    /** A pending approval older than this expires (treated as declined); none: wait for ever. */
    approvalTimeout: durationText.optional(),
  })
  .refine((c) => !(c.approvalRequiredTools?.length && !c.autonomous), {
    message: "approvalRequiredTools requires autonomous: true",
    path: ["approvalRequiredTools"],
  });
export type Coordination = z.infer<typeof coordinationSchema>;

/**
 * A coding-agent session's tool names: the CLI's own (`Read`, `Bash(git:*)`) and Orka's. They end up in
 * CLI arguments and config files, so a name is one line of printable text.
 */
const toolName = z
  .string()
  .min(1)
  .max(256)
  .regex(/^[^\p{Cc}]+$/u, "a tool name is one line without control characters");
export const allowedToolNames = z.array(toolName).max(MAX_ALLOWED_TOOLS, `name at most ${MAX_ALLOWED_TOOLS} tools`);

export const agentSpecSchema = z
  .strictObject({
    providerRef: namespacedRef.optional(),
    model: z
      .strictObject({
        provider: z.string().optional(),
        name: z.string().optional(),
        temperature: z.number().min(0).max(2).optional(),
        maxTokens: z.number().int().positive().optional(),
        /** The model's context window in tokens, which some coding CLIs must be told (opencode). */
        contextWindow: z.number().int().positive().optional(),
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
    coordination: coordinationSchema.optional(),
    runtime: z
      .strictObject({
        type: z.enum(RUNTIME_TYPES).optional(),
        runtimeRef: localRef.optional(),
        defaultMaxTurns: z.number().int().min(1).max(MAX_TURNS_LIMIT).default(DEFAULT_MAX_TURNS),
        /** Present, even empty (deny all), it is the session's tool list; absent, the CLI's own defaults. */
        defaultAllowedTools: allowedToolNames.optional(),
        /** Absent: Bash is allowed. */
        defaultAllowBash: z.boolean().optional(),
        defaultReasoningEffort: z.enum(REASONING_EFFORTS, { message: `must be one of ${REASONING_EFFORTS.join(", ")}` }).optional(),
      })
      .refine((r) => (r.type === undefined) !== (r.runtimeRef === undefined), {
        message: "set exactly one of type and runtimeRef",
      })
      .optional(),
  })
  .refine((spec) => !(spec.providerRef && spec.runtime), {
    message: "providerRef and runtime cannot be set together",
    path: ["runtime"],
  })
  .refine((spec) => !(spec.secretRef && spec.runtime), {
    message: "an Agent with runtime takes its key from the Provider named by model.provider, never from secretRef (the coding CLI must not see a key): remove secretRef",
    path: ["secretRef"],
  });
export type AgentSpec = z.infer<typeof agentSpecSchema>;

/** An Agent's coordination settings with the defaults filled in, also for an Agent stored without them. */
export function coordinationOf(spec: AgentSpec | undefined): Coordination {
  return { ...COORDINATION_DEFAULTS, ...spec?.coordination };
}

export const agentStatusSchema = z.object({
  ready: z.boolean().optional(),
  activeTasks: z.number().int().default(0),
  lastUsed: z.string().optional(),
});
export type AgentStatus = z.infer<typeof agentStatusSchema>;
