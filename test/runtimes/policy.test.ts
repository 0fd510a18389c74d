import { describe, expect, it } from "vitest";
import type { Resource } from "../../src/resources/meta.ts";
import type { ToolSpec, ToolStatus } from "../../src/resources/tool.ts";
import type { SessionPolicy } from "../../src/runtimes/adapter.ts";
import { adapterRefusal, classifySessionTools, LOCAL_PROCESS_ONLY_TOOLS, runtimeAllowance, type RuntimeSettings } from "../../src/runtimes/policy.ts";
import { customToolDigest } from "../../src/runtimes/tool-digest.ts";
import { assembleToolset } from "../../src/tools/assignment.ts";
import { builtinTool } from "../../src/tools/registry.ts";

const allowance = (settings: Partial<RuntimeSettings>) => runtimeAllowance({ runtime: "claude", intent: "write", ...settings });

describe("the effective allowance of a coding-agent session", () => {
  const rows: { rule: string; settings: Partial<RuntimeSettings>; allowed: string[] | "unrestricted"; allowBash?: boolean; maxTurns?: number }[] = [
    { rule: "neither Task nor Agent lists tools: unrestricted, Bash on, 50 turns", settings: {}, allowed: "unrestricted", allowBash: true, maxTurns: 50 },
    { rule: "an empty Task list is deny-all, not absent", settings: { task: { allowedTools: [] }, agent: { defaultAllowedTools: ["Read"] } }, allowed: [] },
    { rule: "an empty Agent list is deny-all too", settings: { agent: { defaultAllowedTools: [] } }, allowed: [] },
    { rule: "the Task's list replaces the Agent's", settings: { task: { allowedTools: ["Grep"] }, agent: { defaultAllowedTools: ["Read"] } }, allowed: ["Grep"] },
    { rule: "the Agent's list applies when the Task has none", settings: { agent: { defaultAllowedTools: ["Read", "web_fetch"] } }, allowed: ["Read", "web_fetch"] },
    { rule: "names are sorted, unique, and matched to the CLI's spelling", settings: { task: { allowedTools: ["read", "Grep", "Read", " Glob "] } }, allowed: ["Glob", "Grep", "Read"] },
    {
      rule: "denying a tool without a list narrows the CLI's own set",
      settings: { task: { disallowedTools: ["webfetch", "WRITE"] } },
      allowed: ["Bash", "Edit", "Glob", "Grep", "Read", "WebSearch"],
    },
    { rule: "Bash off without a list narrows the CLI's own set, without Bash", settings: { agent: { defaultAllowBash: false } }, allowed: ["Edit", "Glob", "Grep", "Read", "WebFetch", "WebSearch", "Write"], allowBash: false },
    { rule: "the Task's allowBash wins over the Agent's", settings: { task: { allowBash: true, allowedTools: ["Bash"] }, agent: { defaultAllowBash: false } }, allowed: ["Bash"], allowBash: true },
    { rule: "the Bash gate removes Bash in every form, scoped ones included", settings: { task: { allowedTools: ["Read", "Bash(git:*)", "bash", "Bash(npm test)", "BASH(rm:*)", " Bash "] , allowBash: false } }, allowed: ["Read"], allowBash: false },
    { rule: "allowBash true keeps the scoped forms a list names, and adds nothing", settings: { task: { allowedTools: ["Bash(git:*)"] } }, allowed: ["Bash(git:*)"] },
    { rule: "denying Bash denies its scoped forms", settings: { task: { allowedTools: ["Read", "Bash(git:*)"], disallowedTools: ["Bash"] } }, allowed: ["Read"] },
    { rule: "a denied name leaves an explicit list too", settings: { task: { allowedTools: ["Read", "web_fetch"], disallowedTools: ["web_fetch"] } }, allowed: ["Read"] },
    { rule: "the Task's maxTurns wins, then the Agent's", settings: { task: { maxTurns: 7 }, agent: { defaultMaxTurns: 9 } }, allowed: "unrestricted", maxTurns: 7 },
    { rule: "the Agent's maxTurns applies when the Task has none", settings: { agent: { defaultMaxTurns: 9 } }, allowed: "unrestricted", maxTurns: 9 },
    { rule: "OpenCode without a list gets its default set, its edit group whole", settings: { runtime: "opencode" }, allowed: ["Bash", "Edit", "Glob", "Grep", "Read", "Write", "apply_patch"] },
    { rule: "OpenCode's edit group moves as one when allowed", settings: { runtime: "opencode", task: { allowedTools: ["Read", "edit"] } }, allowed: ["Edit", "Read", "Write", "apply_patch"] },
    { rule: "OpenCode's edit group moves as one when denied", settings: { runtime: "opencode", task: { disallowedTools: ["apply_patch"] } }, allowed: ["Bash", "Glob", "Grep", "Read"] },
    {
      rule: "read intent on OpenCode removes every tool that writes or runs commands and turns Bash off",
      settings: { runtime: "opencode", intent: "read", task: { allowedTools: ["Read", "Glob", "Grep", "Edit", "Bash", "web_fetch"], allowBash: true } },
      allowed: ["Glob", "Read", "web_fetch"],
      allowBash: false,
    },
    { rule: "read intent changes nothing on the other CLIs", settings: { intent: "read", task: { allowedTools: ["Read", "Edit"] } }, allowed: ["Edit", "Read"], allowBash: true },
  ];
  it.each(rows)("$rule", ({ settings, allowed, allowBash, maxTurns }) => {
    const result = allowance(settings);
    expect(result.allowed).toEqual(allowed);
    if (allowBash !== undefined) expect(result.allowBash).toBe(allowBash);
    if (maxTurns !== undefined) expect(result.maxTurns).toBe(maxTurns);
  });
});

function customTool(name: string, spec: Partial<ToolSpec>, status?: ToolStatus): Resource<ToolSpec, ToolStatus> {
  return {
    apiVersion: "core.orka.ai/v1alpha1",
    kind: "Tool",
    metadata: { name, namespace: "default", uid: `uid-${name}`, generation: 1 },
    spec: { description: `the ${name} tool`, enabled: true, parameters: { type: "object", properties: {} }, http: { url: "http://tools.local/x" }, ...spec } as ToolSpec,
    status,
  };
}

/** A session's tools as admission works them out: the Task's tool set (with what Orka adds), then the classification. */
function sessionTools(settings: Partial<RuntimeSettings>, task: { isChild?: boolean; disableInjection?: boolean; customs?: Resource<ToolSpec, ToolStatus>[] } = {}) {
  const runtime: RuntimeSettings = { runtime: "claude", intent: "write", ...settings };
  const customs = new Map((task.customs ?? []).map((t) => [t.metadata.name, t]));
  const toolset = assembleToolset({
    taskType: "agent",
    isChild: task.isChild ?? false,
    disableInjection: task.disableInjection ?? false,
    customTools: new Set(customs.keys()),
    runtime,
  });
  return classifySessionTools(runtime.runtime, runtimeAllowance(runtime), toolset.names, customs);
}

const brokeredNames = (result: ReturnType<typeof sessionTools>) => ("errors" in result ? result.errors : result.brokered.map((t) => t.name));

describe("a session's tools, classified", () => {
  it("gives the CLI its own tools and the broker Orka's, with the registry's schema", () => {
    const result = sessionTools({ task: { allowedTools: ["Read", "Bash(git:*)", "web_fetch", "list_issues"] } });
    if ("errors" in result) throw new Error(result.errors.join("; "));
    expect(result.nativeTools).toEqual(["Bash(git:*)", "Read"]);
    expect(result.brokered.map((t) => [t.name, t.effect])).toEqual([["list_issues", "read_only"], ["web_fetch", "read_only"]]);
    expect(result.brokered[1].inputSchema).toMatchObject({ type: "object", properties: { url: expect.any(Object) } });
    expect(result.brokered[1].description).toBe(builtinTool("web_fetch")!.description);
  });

  it("refuses a scope on any tool but Bash, which the CLIs would not enforce", () => {
    expect(brokeredNames(sessionTools({ task: { allowedTools: ["Read(src/**)", "Bash(git:*)"] } }))).toEqual([
      '"Read(src/**)": only Bash takes a scope (such as Bash(git:*)); the CLIs do not enforce one on other tools, so name "Read" whole or leave it out',
    ]);
  });

  it("is unrestricted for the CLI when no list applies, and still brokers what Orka adds", () => {
    const result = sessionTools({}, { isChild: true });
    expect(result).toMatchObject({ nativeTools: "unrestricted" });
    expect(brokeredNames(result)).toEqual(["send_message", "check_messages"]);
  });

  it("adds send_message and check_messages to a delegated child, also with an empty list, unless the annotation disables injection", () => {
    expect(brokeredNames(sessionTools({ task: { allowedTools: [] } }, { isChild: true }))).toEqual(["send_message", "check_messages"]);
    expect(sessionTools({ task: { allowedTools: [] } }, { isChild: true, disableInjection: true })).toEqual({ nativeTools: [], brokered: [] });
    expect(sessionTools({ task: { allowedTools: [] } })).toEqual({ nativeTools: [], brokered: [] });
  });

  it("marks only the read-only list read_only: check_messages marks messages read, so it is consequential", () => {
    const result = sessionTools({ task: { allowedTools: ["web_search", "delegate_task", "recall_memory", "remember"] } }, { isChild: true });
    if ("errors" in result) throw new Error(result.errors.join("; "));
    expect(Object.fromEntries(result.brokered.map((t) => [t.name, t.effect]))).toEqual({
      check_messages: "consequential", delegate_task: "consequential", recall_memory: "read_only", remember: "consequential", send_message: "consequential", web_search: "read_only",
    });
  });

  it("refuses every tool that runs only in an ai Task's own worker process", () => {
    for (const name of LOCAL_PROCESS_ONLY_TOOLS) {
      expect(builtinTool(name)).toBeDefined();
      expect(brokeredNames(sessionTools({ task: { allowedTools: ["Read", name] } }))).toEqual([expect.stringContaining(`"${name}" runs only in an ai Task's own worker process`)]);
    }
  });

  it("refuses an unknown name, naming it, and a tool of another CLI", () => {
    expect(brokeredNames(sessionTools({ task: { allowedTools: ["Read", "teleport"] } }))).toEqual([expect.stringMatching(/^"teleport" is neither a tool of the claude CLI/)]);
    expect(brokeredNames(sessionTools({ runtime: "opencode", task: { allowedTools: ["WebSearch"] } }))).toEqual([expect.stringMatching(/^"WebSearch" is neither a tool of the opencode CLI/)]);
  });

  it("refuses request_approval and a built-in this build does not implement", () => {
    expect(brokeredNames(sessionTools({ task: { allowedTools: ["request_approval", "list_connections"] } }))).toEqual([
      '"list_connections" is not built in this Orka build yet: remove it from allowedTools',
      expect.stringContaining("needs an approval channel"),
    ]);
  });

  it("offers a custom Tool only with a brokeredToolClass, with its parameters and the digest of its spec", () => {
    const unclassed = customTool("lookup", {});
    expect(brokeredNames(sessionTools({ task: { allowedTools: ["lookup"] } }, { customs: [unclassed] }))).toEqual([
      'Tool "lookup" has no spec.brokeredToolClass: set it to read, write or coordination to offer it to coding-agent runtimes',
    ]);
    const parameters = { type: "object", properties: { q: { type: "string" } } };
    const reader = customTool("lookup", { brokeredToolClass: "read", parameters });
    const writer = customTool("poster", { brokeredToolClass: "write" });
    const result = sessionTools({ task: { allowedTools: ["lookup", "poster"] } }, { customs: [reader, writer] });
    expect(result).toEqual({
      nativeTools: [],
      brokered: [
        { name: "lookup", description: "the lookup tool", inputSchema: parameters, effect: "read_only", digest: customToolDigest(reader) },
        { name: "poster", description: "the poster tool", inputSchema: { type: "object", properties: {} }, effect: "consequential", digest: customToolDigest(writer) },
      ],
    });
  });

  it("offers each probed tool of an MCP Tool, and refuses one not probed", () => {
    const mcp = { url: "http://mcp.local", path: "/mcp", timeout: "30s" } as ToolSpec["mcp"];
    const probed = customTool("repo", { brokeredToolClass: "coordination", http: undefined, mcp }, {
      available: true,
      mcpTools: [{ name: "search", modelName: "repo_search", description: "Search", inputSchema: { type: "object" } }],
    });
    expect(brokeredNames(sessionTools({ task: { allowedTools: ["repo"] } }, { customs: [probed] }))).toEqual(["repo_search"]);
    const unprobed = customTool("repo", { brokeredToolClass: "read", http: undefined, mcp });
    expect(brokeredNames(sessionTools({ task: { allowedTools: ["repo"] } }, { customs: [unprobed] }))).toEqual(['MCP Tool "repo" cannot be offered: its server has not been probed yet']);
  });

  it("leaves out what the Task denies, the CLI's own and Orka's", () => {
    expect(sessionTools({ task: { allowedTools: ["Read", "web_fetch"], disallowedTools: ["WEB_FETCH"] } })).toEqual({ nativeTools: ["Read"], brokered: [] });
  });
});

describe("what each CLI can enforce exactly", () => {
  const policy = (fields: Partial<SessionPolicy>): SessionPolicy => ({
    nativeTools: "unrestricted", disallowedTools: [], allowBash: true, maxTurns: 50, brokeredTools: [], intent: "write", model: "m", ...fields,
  });
  const rows: { rule: string; runtime: "claude" | "codex" | "copilot" | "opencode"; policy: Partial<SessionPolicy>; refusal?: RegExp }[] = [
    { rule: "claude takes any policy", runtime: "claude", policy: { nativeTools: ["Read"], systemPrompt: "be brief", reasoningEffort: "high" } },
    { rule: "codex runs unrestricted", runtime: "codex", policy: {} },
    { rule: "codex runs exactly Glob, Grep, Read on read intent", runtime: "codex", policy: { nativeTools: ["Glob", "Grep", "Read"], intent: "read" } },
    { rule: "codex refuses Glob, Grep, Read on write intent", runtime: "codex", policy: { nativeTools: ["Glob", "Grep", "Read"] }, refusal: /^codex can enforce only/ },
    { rule: "codex refuses any other list", runtime: "codex", policy: { nativeTools: ["Read"], intent: "read" }, refusal: /this Task's tools are \[Read\] on read intent/ },
    { rule: "copilot refuses a system prompt", runtime: "copilot", policy: { systemPrompt: "be brief" }, refusal: /^copilot takes no Agent system prompt/ },
    { rule: "copilot refuses a reasoning effort", runtime: "copilot", policy: { reasoningEffort: "low" }, refusal: /^copilot takes no reasoning effort/ },
    { rule: "copilot cannot restrict its web search", runtime: "copilot", policy: { nativeTools: ["Read"] }, refusal: /^copilot cannot turn off its web search/ },
    { rule: "copilot runs a list that keeps WebSearch", runtime: "copilot", policy: { nativeTools: ["Read", "WebSearch"] } },
    { rule: "opencode needs the model's limits", runtime: "opencode", policy: { nativeTools: ["Read"] }, refusal: /model\.contextWindow and model\.maxTokens/ },
    { rule: "opencode runs with the model's limits", runtime: "opencode", policy: { nativeTools: ["Read"], modelLimits: { contextWindow: 128_000, maxTokens: 8_000 } } },
    { rule: "opencode refuses a system prompt", runtime: "opencode", policy: { systemPrompt: "x", modelLimits: { contextWindow: 1, maxTokens: 1 } }, refusal: /^opencode takes no Agent system prompt/ },
  ];
  it.each(rows)("$rule", ({ runtime, policy: fields, refusal }) => {
    const answer = adapterRefusal(runtime, policy(fields));
    if (refusal) expect(answer).toMatch(refusal);
    else expect(answer).toBeUndefined();
  });
});
