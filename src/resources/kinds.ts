import { z } from "zod";
import { agentSpecSchema, agentStatusSchema } from "./agent.ts";
import { API_VERSION } from "./meta.ts";
import { providerSpecSchema, providerStatusSchema } from "./provider.ts";
import { skillSpecSchema } from "./skill.ts";
import { taskSpecSchema, taskStatusSchema } from "./task.ts";
import { toolSpecSchema, toolStatusSchema } from "./tool.ts";

export interface KindInfo {
  kind: string;
  apiVersion: string;
  plural: string;
  singular: string;
  shortNames: string[];
  spec: z.ZodType;
  status: z.ZodType;
}

const kind = (name: string, plural: string, shortNames: string[], spec: z.ZodType, status: z.ZodType): KindInfo => ({
  kind: name,
  apiVersion: API_VERSION,
  plural,
  singular: name.toLowerCase(),
  shortNames,
  spec,
  status,
});

/** The Orka kinds, each from one zod schema pair. Secrets are `v1` and handled apart. */
export const ORKA_KINDS: readonly KindInfo[] = [
  kind("Provider", "providers", ["prov"], providerSpecSchema, providerStatusSchema),
  kind("Agent", "agents", ["ag"], agentSpecSchema, agentStatusSchema),
  kind("Task", "tasks", ["tk"], taskSpecSchema, taskStatusSchema),
  kind("Tool", "tools", [], toolSpecSchema, toolStatusSchema),
  kind("Skill", "skills", ["sk"], skillSpecSchema, z.object({})),
];

export type KindName = "Provider" | "Agent" | "Task" | "Tool" | "Skill" | "Secret";
export const ALL_KIND_NAMES: readonly KindName[] = ["Provider", "Agent", "Task", "Tool", "Skill", "Secret"];

export function orkaKind(name: string): KindInfo | undefined {
  return ORKA_KINDS.find((k) => k.kind === name);
}

/** Resolves what a person types (`task`, `tasks`, `Task`, `tk`, `secret`) to a kind name. */
export function resolveKindName(typed: string): KindName | undefined {
  const lower = typed.toLowerCase();
  if (lower === "secret" || lower === "secrets") return "Secret";
  const found = ORKA_KINDS.find((k) => k.singular === lower || k.plural === lower || k.shortNames.includes(lower));
  return found?.kind as KindName | undefined;
}

export function pluralOf(kindName: KindName): string {
  return kindName === "Secret" ? "secrets" : orkaKind(kindName)!.plural;
}
