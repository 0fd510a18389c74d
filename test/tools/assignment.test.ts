import { describe, expect, it } from "vitest";
import { assembleToolset, COORDINATOR_TOOLS, MEMORY_TOOLS, type ToolsetInput } from "../../src/tools/assignment.ts";
import { BUILTIN_TOOL_NAMES, BUILTIN_TOOLS, COMPAT_TOOL_NAMES, RESERVED_TOOLS } from "../../src/tools/registry.ts";

const base: ToolsetInput = { taskType: "ai", isChild: false, disableInjection: false, customTools: new Set(["weather"]) };
const names = (input: Partial<ToolsetInput>) => assembleToolset({ ...base, ...input }).names;

// One test per sentence of the seed's "Who gets which tools".
describe("three-source tool list", () => {
  it("selected: Agent spec.tools without enabled:false, then spec.ai.tools, trimmed and de-duplicated", () => {
    const result = assembleToolset({
      ...base,
      agentTools: [{ name: "web_search" }, { name: "code_exec", enabled: false }, { name: " weather " }],
      aiTools: ["file_read", "web_search", "unknown-tool"],
    });
    expect(result.names.slice(0, 3)).toEqual(["web_search", "weather", "file_read"]);
    expect(result.custom).toEqual(["weather"]);
    expect(result.warnings).toEqual(['tool "unknown-tool" is neither a built-in tool nor a Tool in this namespace; skipped']);
  });

  it("a built-in name wins over a custom Tool of the same name", () => {
    const result = assembleToolset({ ...base, customTools: new Set(["web_search"]), aiTools: ["web_search"] });
    expect(result.custom).toEqual([]);
  });

  it("every type: ai Task gets the memory tools; other types do not", () => {
    expect(names({})).toEqual([...MEMORY_TOOLS]);
    expect(names({ taskType: "container" })).toEqual([]);
  });

  it("coordination.enabled adds coordination, pull request, agent management tools and update_plan, not request_approval", () => {
    // The seed's list, written out here so that a wrong table in the code cannot agree with itself.
    expect([...COORDINATOR_TOOLS]).toEqual([
      "delegate_task", "wait_for_tasks", "create_container_task", "cancel_task", "send_message", "check_messages",
      "create_pull_request", "list_pull_requests", "check_pr_review_marker", "check_pull_request_ci", "merge_pull_request",
      "auto_merge_pull_request", "review_pull_request", "post_review_comment", "create_agent", "delete_agent", "update_plan",
    ]);
    expect([...MEMORY_TOOLS]).toEqual(["recall_memory", "remember", "propose_memory", "search_transcript"]);
    const list = names({ coordination: { enabled: true } });
    expect(list).toEqual([...MEMORY_TOOLS, ...COORDINATOR_TOOLS]);
    expect(list).not.toContain("request_approval");
    expect(list).not.toContain("list_issues");
  });

  it("an autonomous coordinator also gets request_approval", () => {
    expect(names({ coordination: { enabled: true, autonomous: true } }).at(-1)).toBe("request_approval");
    expect(names({ coordination: { enabled: false, autonomous: true } })).not.toContain("request_approval");
    // A coding CLI cannot wait for a human's decision.
    expect(names({ taskType: "agent", coordination: { enabled: true, autonomous: true } })).not.toContain("request_approval");
  });

  it("a coding-agent session gets no coordinator tools by coordination.enabled and no selected ai tools: only its runtime list", () => {
    const denyAll = { runtime: { runtime: "claude" as const, intent: "read" as const, task: { allowedTools: [] } } };
    expect(names({ taskType: "agent", coordination: { enabled: true }, ...denyAll })).toEqual([]);
    expect(names({ taskType: "agent", coordination: { enabled: true }, runtime: { ...denyAll.runtime, task: { allowedTools: ["delegate_task"] } } })).toEqual(["delegate_task"]);
  });

  it("a delegated child gets send_message and check_messages", () => {
    expect(names({ isChild: true })).toEqual([...MEMORY_TOOLS, "send_message", "check_messages"]);
  });

  it("a gateway Task with interim messages gets reply_in_conversation", () => {
    expect(names({ gatewayInterim: true })).toContain("reply_in_conversation");
  });

  it("the disable annotation removes coordination, approval and child messaging, keeps memory and selected tools", () => {
    const list = names({ disableInjection: true, isChild: true, coordination: { enabled: true, autonomous: true }, aiTools: ["delegate_task", "weather"] });
    expect(list).toEqual(["delegate_task", "weather", ...MEMORY_TOOLS]);
  });

  it("create_pr_monitor is never added automatically, only when a Task or its Agent selects it by name", () => {
    const everyRule: Partial<ToolsetInput> = { coordination: { enabled: true, autonomous: true }, isChild: true, gatewayInterim: true };
    expect(names(everyRule)).not.toContain("create_pr_monitor");
    expect(names({ aiTools: ["create_pr_monitor"] })).toEqual(["create_pr_monitor", ...MEMORY_TOOLS]);
    expect(names({ agentTools: [{ name: "create_pr_monitor" }] })).toContain("create_pr_monitor");
    expect(names({ agentTools: [{ name: "create_pr_monitor", enabled: false }] })).not.toContain("create_pr_monitor");
  });

  it("a PR monitor's run, a coordinator child with the disable annotation, gets its five selected tools and memory, nothing injected", () => {
    const monitorTools = ["list_pull_requests", "check_pr_review_marker", "check_pull_request_ci", "review_pull_request", "post_review_comment"];
    const run = assembleToolset({ ...base, aiTools: monitorTools, coordination: { enabled: true }, isChild: true, disableInjection: true });
    expect(run.names).toEqual([...monitorTools, ...MEMORY_TOOLS]);
  });

  it("run_validation goes to a Task with validation commands (a PR monitor's run), whatever the disable annotation says, and to no other", () => {
    const monitorRun: Partial<ToolsetInput> = { validation: true, coordination: { enabled: true }, isChild: true, disableInjection: true };
    expect(names(monitorRun)).toEqual([...MEMORY_TOOLS, "run_validation"]);
    expect(names({ ...monitorRun, aiTools: ["run_validation"] })).toEqual(["run_validation", ...MEMORY_TOOLS]);
    const everyOtherRule: Partial<ToolsetInput> = { coordination: { enabled: true, autonomous: true }, isChild: true, gatewayInterim: true };
    expect(names(everyOtherRule)).not.toContain("run_validation");
    const selected = assembleToolset({ ...base, aiTools: ["run_validation"], agentTools: [{ name: "run_validation" }] });
    expect(selected.names).toEqual([...MEMORY_TOOLS]);
    expect(selected.warnings).toEqual(['tool "run_validation" is not offered: it runs a PR monitor\'s validation commands, and this Task has none (spec.validation)']);
  });

  it("the issue tools are never added automatically, only when selected", () => {
    expect(names({ coordination: { enabled: true }, isChild: true })).not.toContain("get_issue");
    expect(names({ aiTools: ["get_issue"] })).toContain("get_issue");
  });
});

describe("who gets which tools: the whole table", () => {
  const MEMORY = [...MEMORY_TOOLS];
  const MESSAGING = ["send_message", "check_messages"];
  type Row = [label: string, input: Partial<ToolsetInput>, expected: string[], withAnnotation: string[]];
  const rows: Row[] = [
    ["plain ai Task", {}, MEMORY, MEMORY],
    ["coordinator", { coordination: { enabled: true } }, [...MEMORY, ...COORDINATOR_TOOLS], MEMORY],
    ["autonomous coordinator", { coordination: { enabled: true, autonomous: true } }, [...MEMORY, ...COORDINATOR_TOOLS, "request_approval"], MEMORY],
    ["delegated child", { isChild: true }, [...MEMORY, ...MESSAGING], MEMORY],
    ["coordinator child", { isChild: true, coordination: { enabled: true } }, [...MEMORY, ...COORDINATOR_TOOLS], MEMORY],
  ];
  const selected: Partial<ToolsetInput> = {
    agentTools: [{ name: "web_fetch" }, { name: "code_exec", enabled: false }, { name: "no-such" }],
    aiTools: ["weather", "file_read"],
  };

  it.each(rows)("%s, with and without the disable annotation, keeps selected tools and skips disabled and unknown ones", (_label, input, expected, withAnnotation) => {
    expect(names(input)).toEqual(expected);
    expect(names({ ...input, disableInjection: true })).toEqual(withAnnotation);
    const picked = assembleToolset({ ...base, ...input, ...selected });
    expect(picked.names).toEqual(["web_fetch", "weather", "file_read", ...expected.filter((n) => !["web_fetch", "weather", "file_read"].includes(n))]);
    expect(picked.names).not.toContain("code_exec");
    expect(picked.warnings).toEqual(['tool "no-such" is neither a built-in tool nor a Tool in this namespace; skipped']);
    expect(assembleToolset({ ...base, ...input, ...selected, disableInjection: true }).names).toEqual(["web_fetch", "weather", "file_read", ...withAnnotation]);
  });
});

describe("a coding-agent runtime's own tools", () => {
  const agentTask = (input: Partial<ToolsetInput>) => assembleToolset({ ...base, taskType: "agent", ...input });

  const claude = (task: { allowedTools?: string[]; allowBash?: boolean }) => ({ runtime: "claude" as const, task, intent: "write" as const });

  it("adds the runtime's effective tool list, sorted, after the tools Orka adds; Bash only when listed and allowed", () => {
    expect(agentTask({ runtime: claude({ allowedTools: ["Read", "Grep"] }) })).toMatchObject({ names: ["Grep", "Read"], unrestricted: false });
    expect(agentTask({ runtime: claude({ allowedTools: ["Read"], allowBash: true }), isChild: true }).names).toEqual(["send_message", "check_messages", "Read"]);
    expect(agentTask({ runtime: claude({ allowedTools: ["Read", "Bash"], allowBash: false }) }).names).toEqual(["Read"]);
  });

  it("knows a custom Tool its runtime list names as custom (its credentials need the grant too)", () => {
    expect(agentTask({ runtime: claude({ allowedTools: ["Read", "weather"] }) })).toMatchObject({ names: ["Read", "weather"], custom: ["weather"] });
  });

  it("is unrestricted without a tool list, whatever the disable annotation says", () => {
    expect(agentTask({ runtime: claude({}), disableInjection: true })).toMatchObject({ names: [], unrestricted: true });
    expect(agentTask({ disableInjection: true })).toMatchObject({ names: [], unrestricted: true });
    expect(assembleToolset({ ...base, runtime: claude({}) }).unrestricted).toBe(false);
  });
});

describe("the registry, derived from the declarations", () => {
  it("owns every name of the built-in tools page: the declared tools and one list of reserved ones", () => {
    // Written out so that a wrong registry cannot agree with itself.
    expect([...BUILTIN_TOOL_NAMES].sort()).toEqual([
      "web_search", "code_exec", "file_read", "web_fetch", "file_write", "request_approval",
      "recall_memory", "remember", "propose_memory", "search_transcript",
      ...COORDINATOR_TOOLS, "list_issues", "get_issue", "comment_on_issue",
      "reply_in_conversation", "create_pr_monitor", "list_connections", "run_validation",
    ].sort());
    const declared = new Set(BUILTIN_TOOLS.map((tool) => tool.name));
    expect(RESERVED_TOOLS.filter((tool) => declared.has(tool.name))).toEqual([]);
  });

  it("offers the first five core tools on the compatible endpoints, by a field of their declarations", () => {
    expect(COMPAT_TOOL_NAMES).toEqual(["web_search", "code_exec", "file_read", "web_fetch", "file_write"]);
  });
});
