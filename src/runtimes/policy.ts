import { DEFAULT_MAX_TURNS, MAX_ALLOWED_TOOLS, type RuntimeType } from "../resources/agent.ts";
import type { Resource } from "../resources/meta.ts";
import type { ToolSpec, ToolStatus } from "../resources/tool.ts";
import type { BrokeredTool } from "../runner/attempt-config.ts";
import { toolDefinition } from "../tools/define.ts";
import { BUILTIN_TOOL_NAMES, builtinTool } from "../tools/registry.ts";
import type { SessionPolicy } from "./adapter.ts";
import { customToolDigest } from "./tool-digest.ts";

/** The CLIs' own tools, as the Task and Agent name them. */
const WEB_CLI_TOOLS = ["Read", "Write", "Edit", "Bash", "Glob", "Grep", "WebSearch", "WebFetch"] as const;
export const NATIVE_TOOLS: Record<RuntimeType, readonly string[]> = {
  claude: WEB_CLI_TOOLS,
  codex: WEB_CLI_TOOLS,
  copilot: WEB_CLI_TOOLS,
  opencode: ["Read", "Write", "Edit", "apply_patch", "Bash", "Glob", "Grep"],
};
/** OpenCode gets a list even when neither Task nor Agent gives one: it has no "unrestricted" mode Orka could vouch for. */
const OPENCODE_DEFAULT_TOOLS = ["Read", "Write", "Edit", "Bash", "Glob", "Grep"];
/** OpenCode grants apply_patch, edit and write with one permission: allowing or denying one does so for all three. */
const OPENCODE_EDIT_GROUP = ["apply_patch", "edit", "write"];
/** What a read-intent OpenCode session loses: everything that writes, and the tools that run commands. */
const OPENCODE_READ_INTENT_REMOVES = ["apply_patch", "bash", "edit", "grep", "write"];

/** What the Agent's `runtime` and the Task's `agentRuntime` and `workspace.intent` say about a session's tools and turns. */
export interface RuntimeSettings {
  runtime: RuntimeType;
  agent?: { defaultMaxTurns?: number; defaultAllowedTools?: readonly string[]; defaultAllowBash?: boolean };
  task?: { maxTurns?: number; allowedTools?: readonly string[]; disallowedTools?: readonly string[]; allowBash?: boolean };
  intent: "read" | "write";
}

/** The effective allowance: which names the session may use (Orka's and the CLI's own), Bash, turns. */
export interface RuntimeAllowance {
  /** Sorted and unique; "unrestricted" when neither the Task nor the Agent lists tools and nothing narrows the CLI's own set. */
  allowed: string[] | "unrestricted";
  disallowed: string[];
  allowBash: boolean;
  maxTurns: number;
}

const lower = (name: string) => name.toLowerCase();
/** The tool a name scopes: `Bash(git:*)` is a scoped form of `Bash`. */
export const baseName = (name: string) => name.replace(/\(.*\)$/s, "");
const isBash = (name: string) => lower(baseName(name)) === "bash";

/**
 * The allowance of a coding-agent session. A tool list that is present replaces the default even when it
 * is empty (deny all); Task wins over Agent. Without a list, denying something or turning Bash off narrows
 * the CLI's own set; `allowBash: false` removes Bash in every form; OpenCode's edit group moves as one and
 * a read-intent OpenCode session loses every tool that writes or runs commands.
 */
export function runtimeAllowance({ runtime, agent, task, intent }: RuntimeSettings): RuntimeAllowance {
  const opencode = runtime === "opencode";
  const disallowed = [...new Set(task?.disallowedTools ?? [])];
  const allowBash = !(opencode && intent === "read") && (task?.allowBash ?? agent?.defaultAllowBash ?? true);
  const maxTurns = task?.maxTurns ?? agent?.defaultMaxTurns ?? DEFAULT_MAX_TURNS;
  let listed = task?.allowedTools ?? agent?.defaultAllowedTools ?? (opencode ? OPENCODE_DEFAULT_TOOLS : undefined);
  if (!listed && (disallowed.length > 0 || !allowBash)) listed = NATIVE_TOOLS[runtime];
  if (!listed) return { allowed: "unrestricted", disallowed, allowBash, maxTurns };

  let names = listed.map((name) => name.trim()).filter(Boolean).map((name) => nativeSpelling(runtime, name) ?? name);
  const denied = new Set(disallowed.map(lower));
  if (opencode && [...denied].some((name) => OPENCODE_EDIT_GROUP.includes(name))) OPENCODE_EDIT_GROUP.forEach((name) => denied.add(name));
  if (opencode && names.some((name) => OPENCODE_EDIT_GROUP.includes(lower(name)))) names.push(...nativeSpellings(runtime, OPENCODE_EDIT_GROUP));
  names = names.filter((name) => !denied.has(lower(name)) && !denied.has(lower(baseName(name))));
  if (!allowBash) names = names.filter((name) => !isBash(name));
  if (opencode && intent === "read") names = names.filter((name) => !OPENCODE_READ_INTENT_REMOVES.includes(lower(baseName(name))));
  return { allowed: sortedUnique(names), disallowed, allowBash, maxTurns };
}

function nativeSpellings(runtime: RuntimeType, names: readonly string[]): string[] {
  return NATIVE_TOOLS[runtime].filter((native) => names.includes(lower(native)));
}

function sortedUnique(names: string[]): string[] {
  return [...new Set(names)].sort();
}

/** Built-in tools that work only inside an ai Task's own worker process, on its own files: a CLI has its own tools for that. */
export const LOCAL_PROCESS_ONLY_TOOLS = ["code_exec", "file_read", "file_write", "run_validation"] as const;

/** What a brokered call does: a read-only one is run again freely; a consequential one is reserved in the effect ledger first. */
const READ_ONLY_TOOLS: ReadonlySet<string> = new Set([
  "check_pr_review_marker", "check_pull_request_ci", "check_task_progress", "fetch_task_output", "get_issue", "list_agents",
  "list_connections", "list_issues", "list_pull_requests", "list_tasks", "list_tools", "recall_memory", "search_transcript",
  "wait_for_task", "wait_for_tasks", "web_fetch", "web_search",
]);

type CustomTool = Resource<ToolSpec, ToolStatus>;

/** How a session reaches its tools: the CLI's own ones by its permission flags, Orka's through the broker. */
export interface SessionTools {
  nativeTools: string[] | "unrestricted";
  brokered: BrokeredTool[];
}

/**
 * Splits a session's tool names into the CLI's own and Orka's brokered ones, or says, for each name,
 * why the session cannot have it: a tool that runs only in an ai Task's worker process, one this build
 * does not implement, one that needs an approval channel the CLIs lack, a custom Tool without a
 * `brokeredToolClass`, a name nobody knows. `names` is the Task's whole tool set (its allowance and
 * the tools Orka adds); names the Task denies are left out.
 */
export function classifySessionTools(
  runtime: RuntimeType,
  allowance: RuntimeAllowance,
  names: readonly string[],
  customTools: ReadonlyMap<string, CustomTool>,
): SessionTools | { errors: string[] } {
  const denied = new Set(allowance.disallowed.map(lower));
  const native: string[] = [];
  const brokered: BrokeredTool[] = [];
  const errors: string[] = [];
  for (const name of names) {
    if (denied.has(lower(name))) continue;
    if (baseName(name) !== name && lower(baseName(name)) !== "bash") {
      errors.push(`"${name}": only Bash takes a scope (such as Bash(git:*)); the CLIs do not enforce one on other tools, so name "${baseName(name)}" whole or leave it out`);
      continue;
    }
    const nativeName = nativeSpelling(runtime, name);
    if (nativeName) native.push(nativeName);
    else {
      const classified = brokeredTool(runtime, name, customTools.get(name));
      if ("error" in classified) errors.push(classified.error);
      else brokered.push(...classified.tools);
    }
  }
  const nativeTools = allowance.allowed === "unrestricted" ? "unrestricted" : sortedUnique(native);
  if (nativeTools !== "unrestricted" && nativeTools.length + brokered.length > MAX_ALLOWED_TOOLS) {
    errors.push(`a session may allow at most ${MAX_ALLOWED_TOOLS} tools, this one ${nativeTools.length + brokered.length}: shorten allowedTools`);
  }
  return errors.length > 0 ? { errors } : { nativeTools, brokered };
}

/** The runtime's own spelling of one of its tools (names are matched case-insensitively, scopes kept), or undefined. */
function nativeSpelling(runtime: RuntimeType, name: string): string | undefined {
  const base = baseName(name);
  const native = NATIVE_TOOLS[runtime].find((candidate) => lower(candidate) === lower(base));
  return native && native + name.slice(base.length);
}

function brokeredTool(runtime: RuntimeType, name: string, custom: CustomTool | undefined): { tools: BrokeredTool[] } | { error: string } {
  if ((LOCAL_PROCESS_ONLY_TOOLS as readonly string[]).includes(name)) {
    return { error: `"${name}" runs only in an ai Task's own worker process; a ${runtime} session uses its CLI's own tools (${NATIVE_TOOLS[runtime].join(", ")}) instead: remove "${name}" from allowedTools` };
  }
  if (name === "request_approval") return { error: `"request_approval" needs an approval channel, which the built-in coding CLIs do not have: remove it from allowedTools` };
  const builtin = builtinTool(name);
  if (builtin) {
    const { description, parameters } = toolDefinition(builtin);
    return { tools: [{ name, description, inputSchema: parameters, effect: READ_ONLY_TOOLS.has(name) ? "read_only" : "consequential" }] };
  }
  if (BUILTIN_TOOL_NAMES.has(name)) return { error: `"${name}" is not built in this Orka build yet: remove it from allowedTools` };
  if (custom) return customBrokeredTools(name, custom);
  return { error: `"${name}" is neither a tool of the ${runtime} CLI (${NATIVE_TOOLS[runtime].join(", ")}), an Orka built-in tool nor a Tool in this namespace: fix or remove it in allowedTools` };
}

/** A custom Tool is offered to a CLI only when its owner said what kind of effect it has; an MCP Tool brings each tool its probe found. */
function customBrokeredTools(name: string, tool: CustomTool): { tools: BrokeredTool[] } | { error: string } {
  const toolClass = tool.spec.brokeredToolClass;
  if (!toolClass) return { error: `Tool "${name}" has no spec.brokeredToolClass: set it to read, write or coordination to offer it to coding-agent runtimes` };
  const effect = toolClass === "read" ? "read_only" : "consequential";
  const digest = customToolDigest(tool);
  if (!tool.spec.mcp) return { tools: [{ name, description: tool.spec.description, inputSchema: tool.spec.parameters ?? { type: "object", properties: {} }, effect, digest }] };
  if (!tool.status?.available || !tool.status.mcpTools?.length) {
    return { error: `MCP Tool "${name}" cannot be offered: ${tool.status?.error ?? "its server has not been probed yet"}` };
  }
  return { tools: tool.status.mcpTools.map((t) => ({ name: t.modelName, description: t.description, inputSchema: t.inputSchema, effect, digest })) };
}

const CODEX_READ_TOOLS = ["Glob", "Grep", "Read"];

/**
 * Why a CLI cannot enforce this policy exactly, or undefined. A policy a CLI would widen fails the Task
 * before launch: codex can only run unrestricted or, on a read-intent workspace, with exactly Glob, Grep
 * and Read; copilot and opencode take no Agent system prompt or reasoning effort; copilot cannot turn off
 * its web search; opencode must be told the model's context window and output limit.
 */
export function adapterRefusal(runtime: RuntimeType, policy: SessionPolicy): string | undefined {
  const { nativeTools } = policy;
  switch (runtime) {
    case "claude":
      return undefined;
    case "codex": {
      if (nativeTools === "unrestricted") return undefined;
      const exact = policy.intent === "read" && nativeTools.length === CODEX_READ_TOOLS.length && nativeTools.every((n, i) => n === CODEX_READ_TOOLS[i]);
      if (exact) return undefined;
      return `codex can enforce only an unrestricted tool list, or exactly Glob, Grep and Read on a read-intent workspace; this Task's tools are [${nativeTools.join(", ")}] on ${policy.intent} intent: leave allowedTools, disallowedTools and allowBash unset, or allow exactly ["Glob","Grep","Read"] with workspace.intent: read`;
    }
    case "copilot":
      return (
        promptOrEffortRefusal(runtime, policy) ??
        (nativeTools !== "unrestricted" && !nativeTools.includes("WebSearch")
          ? "copilot cannot turn off its web search: add WebSearch to allowedTools (and leave it out of disallowedTools), or use another runtime"
          : undefined)
      );
    case "opencode":
      return (
        promptOrEffortRefusal(runtime, policy) ??
        (policy.modelLimits ? undefined : "opencode must be told the model's limits: set the Agent's model.contextWindow and model.maxTokens")
      );
  }
}

function promptOrEffortRefusal(runtime: RuntimeType, policy: SessionPolicy): string | undefined {
  if (policy.systemPrompt) return `${runtime} takes no Agent system prompt: remove the Agent's systemPrompt, or use the claude or codex runtime`;
  if (policy.reasoningEffort) return `${runtime} takes no reasoning effort: remove the Agent's runtime.defaultReasoningEffort, or use the claude or codex runtime`;
  return undefined;
}
