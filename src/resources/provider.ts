import { z } from "zod";
import { boundedDurationText, httpURL, secretKeyRef } from "./meta.ts";

const DAY_MS = 86_400_000;

/** How long one model call may take: at most a day, far past any model's answer. */
export const modelCallTimeout = boundedDurationText(DAY_MS, "24h");

export const PROVIDER_TYPES = ["anthropic", "openai", "azure-openai", "scripted", "replay"] as const;

/** Providers Orka plays itself, offline: they need no API key. */
export const OFFLINE_PROVIDER_TYPES: readonly string[] = ["scripted", "replay"];

/** One recorded model turn: the digest of the request it answered, and the answer, bit for bit. */
export const replayTurnSchema = z.strictObject({
  requestDigest: z.string().regex(/^sha256:[0-9a-f]{64}$/, "must be sha256:<64 hex>"),
  text: z.string(),
  toolCalls: z.array(z.strictObject({ id: z.string().min(1), name: z.string().min(1), arguments: z.string() })).default([]),
});
export type ReplayTurn = z.infer<typeof replayTurnSchema>;

export const replaySpecSchema = z.strictObject({
  /** Fail at the first request that differs from the recording (the default), or answer it anyway. */
  strict: z.boolean().default(true),
  /** Where the recording came from. */
  source: z.strictObject({ task: z.string(), namespace: z.string(), run: z.number().int(), exportedAt: z.string() }).optional(),
  turns: z.array(replayTurnSchema).min(1, "a replay needs at least one recorded turn"),
});
export type ReplaySpec = z.infer<typeof replaySpecSchema>;

/** One scripted model turn: text, tool calls, or both. */
export const scriptedTurnSchema = z
  .strictObject({
    text: z.string().optional(),
    toolCalls: z
      .array(z.strictObject({ name: z.string().min(1), arguments: z.record(z.string(), z.unknown()).default({}) }))
      .optional(),
  })
  .refine((turn) => turn.text !== undefined || (turn.toolCalls?.length ?? 0) > 0, {
    message: "a scripted turn needs text or toolCalls",
  });
export type ScriptedTurn = z.infer<typeof scriptedTurnSchema>;

export const providerSpecSchema = z
  .strictObject({
    type: z.enum(PROVIDER_TYPES),
    secretRef: secretKeyRef.optional(),
    baseURL: httpURL.optional(),
    defaultModel: z.string().optional(),
    rateLimit: z
      .strictObject({ requestsPerMinute: z.number().int().positive().optional(), tokensPerMinute: z.number().int().positive().optional() })
      .optional(),
    azure: z.strictObject({ deploymentName: z.string().optional(), apiVersion: z.string().optional() }).optional(),
    /** How long one model call may take before it counts as failed (default: ORKA_MODEL_TIMEOUT_MS). */
    timeout: modelCallTimeout.optional(),
    /** Orka's own offline model: plays these turns in order, or the turns in a YAML/JSON file. */
    scripted: z
      .strictObject({ turns: z.array(scriptedTurnSchema).optional(), file: z.string().optional() })
      .refine((s) => (s.turns === undefined) !== (s.file === undefined), { message: "set exactly one of turns and file" })
      .optional(),
    /** A recorded run (`orka task export`), played back offline. */
    replay: replaySpecSchema.optional(),
  })
  .refine((spec) => spec.type !== "replay" || spec.replay !== undefined, {
    message: "a replay provider needs spec.replay (from orka task export)",
    path: ["replay"],
  })
  .refine((spec) => spec.type !== "scripted" || spec.scripted !== undefined, {
    message: "a scripted provider needs spec.scripted.turns or spec.scripted.file",
    path: ["scripted"],
  });
export type ProviderSpec = z.infer<typeof providerSpecSchema>;

export const providerStatusSchema = z.object({
  ready: z.boolean().optional(),
  message: z.string().optional(),
  lastValidated: z.string().optional(),
});
export type ProviderStatus = z.infer<typeof providerStatusSchema>;
