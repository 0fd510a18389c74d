import { runtimeAllowance, type RuntimeSettings } from "../runtimes/policy.ts";
import { BUILTIN_TOOL_NAMES, familyToolNames } from "./registry.ts";

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
  /** The Task carries a PR monitor's validation commands (`spec.validation`). */
  validation?: boolean;
  /** `orka.ai/disable-coordination-tool-injection: "true"`. */
  disableInjection: boolean;
  /** Enabled custom Tool resources in the Task's namespace. */
  customTools: ReadonlySet<string>;
  /** A coding-agent Task's runtime and what its Agent and the Task say about the session's tools. */
  runtime?: RuntimeSettings;
}

export interface Toolset {
  /** Every tool the Task gets, in order: selected first, then added by rule. */
  names: string[];
  /** Names among `names` that resolve to custom Tool resources. */
  custom: string[];
  warnings: string[];
  /** A coding-agent runtime without a tool list: its CLI may use any of its tools besides `names`. */
  unrestricted: boolean;
}

const UNRESTRICTED = "unrestricted";

interface Rule {
  when: (task: ToolsetInput) => boolean;
  add: readonly string[] | ((task: ToolsetInput) => readonly string[] | typeof UNRESTRICTED);
  /** Injected tools are the ones the disable annotation turns off. */
  injected: boolean;
  /** The added tools work only where this rule holds: selecting one by name elsewhere is skipped, with this reason. */
  onlyHere?: string;
}

export const MEMORY_TOOLS = familyToolNames("memory");

/** What `coordination.enabled` adds: coordination, pull request, agent management tools and update_plan. */
export const COORDINATOR_TOOLS = familyToolNames("coordination", "messaging", "pull-requests", "agents", "planning");

/** Source 2 of the built-in tools page, one row per sentence of "Tools Orka adds automatically", then the runtime's own tools. */
export const AUTO_ADDED_RULES: readonly Rule[] = [
  { when: (t) => t.taskType === "ai", add: MEMORY_TOOLS, injected: false },
  // A coding-agent session gets Orka's tools only by name in its runtime's list, beside a child's messaging.
  { when: (t) => t.taskType !== "agent" && t.coordination?.enabled === true, add: COORDINATOR_TOOLS, injected: true },
  // A coding CLI has no way to wait for a human's decision: its autonomy needs no approval tool.
  { when: (t) => t.taskType !== "agent" && t.coordination?.enabled === true && t.coordination.autonomous === true, add: ["request_approval"], injected: true },
  { when: (t) => t.isChild, add: familyToolNames("messaging"), injected: true },
  { when: (t) => t.gatewayInterim === true, add: familyToolNames("gateway"), injected: false },
  { when: (t) => t.validation === true, add: familyToolNames("monitors"), injected: false, onlyHere: "it runs a PR monitor's validation commands, and this Task has none (spec.validation)" },
  { when: (t) => t.taskType === "agent", add: (t) => (t.runtime ? runtimeAllowance(t.runtime).allowed : UNRESTRICTED), injected: false },
];

/** Why a selected tool is not offered: it works only where its rule holds, and that rule does not hold for this Task. */
function confinedElsewhere(name: string, task: ToolsetInput): string | undefined {
  const rule = AUTO_ADDED_RULES.find((candidate) => candidate.onlyHere && Array.isArray(candidate.add) && candidate.add.includes(name));
  return rule && !rule.when(task) ? `tool "${name}" is not offered: ${rule.onlyHere}` : undefined;
}

/** Selected ∪ auto-added, nothing else; trimmed, de-duplicated, in a stable order. */
export function assembleToolset(task: ToolsetInput): Toolset {
  const toolset: Toolset = { names: [], custom: [], warnings: [], unrestricted: false };
  const add = (name: string) => {
    if (!toolset.names.includes(name)) toolset.names.push(name);
    // A coding-agent session's list may name custom Tools too.
    if (!BUILTIN_TOOL_NAMES.has(name) && task.customTools.has(name) && !toolset.custom.includes(name)) toolset.custom.push(name);
  };
  const warn = (warning: string) => {
    if (!toolset.warnings.includes(warning)) toolset.warnings.push(warning);
  };

  const selected = [
    ...(task.agentTools ?? []).filter((t) => t.enabled !== false).map((t) => t.name),
    ...(task.aiTools ?? []),
  ].map((n) => n.trim()).filter(Boolean);
  for (const name of selected) {
    const skipped = confinedElsewhere(name, task);
    if (skipped) warn(skipped);
    else if (BUILTIN_TOOL_NAMES.has(name)) add(name);
    else if (task.customTools.has(name)) add(name);
    else warn(`tool "${name}" is neither a built-in tool nor a Tool in this namespace; skipped`);
  }

  for (const rule of AUTO_ADDED_RULES) {
    if ((rule.injected && task.disableInjection) || !rule.when(task)) continue;
    const added = typeof rule.add === "function" ? rule.add(task) : rule.add;
    if (added === UNRESTRICTED) toolset.unrestricted = true;
    else added.forEach(add);
  }
  return toolset;
}
