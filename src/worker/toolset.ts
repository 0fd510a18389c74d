import { BUILTIN_TOOL_NAMES, CHILD_MESSAGING_TOOLS, COORDINATOR_TOOLS, GATEWAY_TOOLS, MEMORY_TOOLS } from "../tools/names.ts";

/** The facts about a Task that decide its tools. */
export interface ToolsetInput {
  taskType: "ai" | "agent" | "container";
  agentTools?: { name: string; enabled?: boolean }[];
  aiTools?: string[];
  coordination?: { enabled?: boolean; autonomous?: boolean };
  /** The Task has a parent link (it was delegated or scheduled by another Task). */
  isChild: boolean;
  /** Created by a gateway whose adapter supports interim messages. */
  gatewayInterim?: boolean;
  /** `orka.ai/disable-coordination-tool-injection: "true"`. */
  disableInjection: boolean;
  /** Enabled custom Tool resources in the Task's namespace. */
  customTools: ReadonlySet<string>;
}

export interface Toolset {
  /** Every tool the Task gets, in order: selected first, then added by rule. */
  names: string[];
  /** Names among `names` that resolve to custom Tool resources. */
  custom: string[];
  warnings: string[];
}

interface Rule {
  when: (task: ToolsetInput) => boolean;
  add: readonly string[];
  /** Injected tools are the ones the disable annotation turns off. */
  injected: boolean;
}

/** Source 2 of the seed, one row per sentence of "Tools Orka adds automatically". */
export const AUTO_ADDED_RULES: readonly Rule[] = [
  { when: (t) => t.taskType === "ai", add: MEMORY_TOOLS, injected: false },
  { when: (t) => t.coordination?.enabled === true, add: COORDINATOR_TOOLS, injected: true },
  { when: (t) => t.coordination?.enabled === true && t.coordination.autonomous === true, add: ["request_approval"], injected: true },
  { when: (t) => t.isChild, add: CHILD_MESSAGING_TOOLS, injected: true },
  { when: (t) => t.gatewayInterim === true, add: GATEWAY_TOOLS, injected: false },
];

/** Selected ∪ auto-added, nothing else; trimmed, de-duplicated, in a stable order. */
export function assembleToolset(task: ToolsetInput): Toolset {
  const names: string[] = [];
  const custom: string[] = [];
  const warnings: string[] = [];
  const add = (name: string) => {
    if (!names.includes(name)) names.push(name);
  };

  const selected = [
    ...(task.agentTools ?? []).filter((t) => t.enabled !== false).map((t) => t.name),
    ...(task.aiTools ?? []),
  ].map((n) => n.trim()).filter(Boolean);
  for (const name of selected) {
    if (BUILTIN_TOOL_NAMES.has(name)) add(name);
    else if (task.customTools.has(name)) {
      add(name);
      if (!custom.includes(name)) custom.push(name);
    } else warnings.push(`tool "${name}" is neither a built-in tool nor a Tool in this namespace; skipped`);
  }

  for (const rule of AUTO_ADDED_RULES) {
    if (rule.injected && task.disableInjection) continue;
    if (rule.when(task)) rule.add.forEach(add);
  }
  return { names, custom, warnings };
}
