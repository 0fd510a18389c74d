import { describe, expect, it } from "vitest";
import { RUNTIME_TYPES } from "../../src/resources/agent.ts";
import type { RuntimeLaunch, SessionPolicy } from "../../src/runtimes/adapter.ts";
import { runtimeAdapter } from "../../src/runtimes/registry.ts";

const paths = {
  root: "/s",
  home: "/s/home",
  tmp: "/s/tmp",
  workspace: "/s/workspace",
  xdg: { config: "/s/xdg/config", cache: "/s/xdg/cache", data: "/s/xdg/data", state: "/s/xdg/state" },
};

function launchWith(policy: Partial<SessionPolicy> = {}, prompt = "Fix the bug."): RuntimeLaunch {
  return {
    policy: { nativeTools: ["Read"], disallowedTools: [], allowBash: true, maxTurns: 7, brokeredTools: ["web_fetch"], intent: "write", model: "the-model", ...policy },
    prompt,
    paths,
    mcp: { url: "http://127.0.0.1:9/_orka/mcp/route", bearer: "mcp-bearer-secret" },
    provider: { baseURL: "http://127.0.0.1:8/v1", token: "session-token-secret" },
  };
}

/** The values after `flag` up to the next option. */
function valuesOf(argv: string[], flag: string): string[] {
  const start = argv.indexOf(flag);
  if (start < 0) return [];
  const rest = argv.slice(start + 1);
  const end = rest.findIndex((arg) => arg.startsWith("--"));
  return end < 0 ? rest : rest.slice(0, end);
}

describe("runtime adapters", () => {
  it("has one adapter per runtime, each naming its runtime and a pinned CLI", () => {
    for (const runtime of RUNTIME_TYPES) {
      const adapter = runtimeAdapter(runtime);
      expect(adapter.runtime).toBe(runtime);
      expect(adapter.cli.version).toMatch(/^\d+\.\d+\.\d+$/);
    }
  });

  it("never puts the session token or the MCP bearer in argv, and passes a prompt that looks like an option as the prompt", () => {
    for (const runtime of RUNTIME_TYPES) {
      const argv = runtimeAdapter(runtime).argv(launchWith({}, "--help me"));
      expect(argv.join(" ")).not.toMatch(/session-token-secret|mcp-bearer-secret/);
      const promptEnd = runtime === "copilot" ? ["--prompt=--help me"] : ["--", "--help me"];
      expect(argv.slice(-promptEnd.length)).toEqual(promptEnd);
    }
  });
});

describe("claude adapter", () => {
  const claude = runtimeAdapter("claude");

  it("runs print mode with the broker's MCP config only, no settings files, and refuses what is not allowed", () => {
    const argv = claude.argv(launchWith({ nativeTools: ["Bash(git:*)", "Read"], disallowedTools: ["Write"] }));
    expect(argv.slice(0, 3)).toEqual(["-p", "--output-format", "json"]);
    expect(valuesOf(argv, "--model")).toEqual(["the-model"]);
    expect(valuesOf(argv, "--max-turns")).toEqual(["7"]);
    expect(valuesOf(argv, "--mcp-config")).toEqual(["/s/xdg/config/claude/mcp.json"]);
    expect(argv).toContain("--strict-mcp-config");
    expect(valuesOf(argv, "--setting-sources")).toEqual([""]);
    expect(valuesOf(argv, "--permission-mode")).toEqual(["dontAsk"]);
    expect(valuesOf(argv, "--tools")).toEqual(["Bash,Read"]);
    expect(valuesOf(argv, "--disallowedTools")).toEqual(["Write"]);
    expect(valuesOf(argv, "--allowedTools")).toEqual(["Bash(git:*)", "Read", "mcp__orka__web_fetch"]);
    expect(argv.slice(-2)).toEqual(["--", "Fix the bug."]);
  });

  it("offers no native tool for an empty list, and allows its whole native set when unrestricted", () => {
    expect(valuesOf(claude.argv(launchWith({ nativeTools: [] })), "--tools")).toEqual([""]);
    const unrestricted = claude.argv(launchWith({ nativeTools: "unrestricted" }));
    expect(unrestricted).not.toContain("--tools");
    expect(valuesOf(unrestricted, "--allowedTools")).toEqual(["Read", "Write", "Edit", "Bash", "Glob", "Grep", "WebSearch", "WebFetch", "mcp__orka__web_fetch"]);
  });

  it("passes the Agent's system prompt and reasoning effort", () => {
    const argv = claude.argv(launchWith({ systemPrompt: "Be brief.", reasoningEffort: "high" }));
    expect(valuesOf(argv, "--append-system-prompt")).toEqual(["Be brief."]);
    expect(valuesOf(argv, "--effort")).toEqual(["high"]);
  });

  it("writes the MCP config the shared format names, and points every model alias at the pinned model", () => {
    const launch = launchWith();
    expect(claude.files(launch)).toEqual([
      {
        path: "/s/xdg/config/claude/mcp.json",
        content: JSON.stringify({ mcpServers: { orka: { type: "http", url: launch.mcp.url, headers: { Authorization: "Bearer mcp-bearer-secret" } } } }),
      },
    ]);
    const env = claude.env(launch);
    expect(env).toMatchObject({ ANTHROPIC_BASE_URL: launch.provider.baseURL, ANTHROPIC_AUTH_TOKEN: "session-token-secret", ANTHROPIC_SMALL_FAST_MODEL: "the-model", DISABLE_AUTOUPDATER: "1" });
    expect(Object.entries(env).filter(([name]) => /MODEL/.test(name)).every(([, value]) => value === "the-model")).toBe(true);
  });

  it("reads the answer from the result object, and refuses an error result", () => {
    const ok = JSON.stringify({ type: "result", subtype: "success", is_error: false, result: "All fixed." });
    expect(claude.finalAnswer(`noise\n${ok}\n`)).toBe("All fixed.");
    const maxTurns = JSON.stringify({ type: "result", subtype: "error_max_turns", is_error: true });
    expect(() => claude.finalAnswer(maxTurns)).toThrow("claude ended without an answer (error_max_turns)");
    expect(() => claude.finalAnswer("not json")).toThrow("claude printed no result object");
  });
});

describe("codex adapter", () => {
  const codex = runtimeAdapter("codex");

  it("runs exec with JSON events, no git check, nothing persisted, unknown config keys an error", () => {
    expect(codex.argv(launchWith())).toEqual(["exec", "--json", "--skip-git-repo-check", "--ephemeral", "--strict-config", "--ignore-rules", "--", "Fix the bug."]);
    expect(codex.env(launchWith())).toEqual({ CODEX_HOME: "/s/xdg/config/codex", ORKA_PROVIDER_TOKEN: "session-token-secret", ORKA_MCP_BEARER: "mcp-bearer-secret" });
  });

  it("configures the proxy as the Responses API provider and the broker by env var, with no secret in the file", () => {
    const [file] = codex.files(launchWith({ intent: "read", nativeTools: ["Glob", "Grep", "Read"] }));
    expect(file.path).toBe("/s/xdg/config/codex/config.toml");
    expect(file.content).toContain('model = "the-model"\nmodel_provider = "orka"\napproval_policy = "never"\nsandbox_mode = "read-only"\nweb_search = "disabled"\n');
    expect(file.content).toContain('[model_providers.orka]\nname = "Orka"\nbase_url = "http://127.0.0.1:8/v1"\nenv_key = "ORKA_PROVIDER_TOKEN"\nwire_api = "responses"\n');
    expect(file.content).toContain('[mcp_servers.orka]\nurl = "http://127.0.0.1:9/_orka/mcp/route"\nbearer_token_env_var = "ORKA_MCP_BEARER"\ndefault_tools_approval_mode = "approve"\nenabled_tools = ["web_fetch"]\n');
    expect(file.content).not.toMatch(/session-token-secret|mcp-bearer-secret/);
    const write = codex.files(launchWith({ nativeTools: "unrestricted", reasoningEffort: "max" }))[0].content;
    expect(write).toContain('sandbox_mode = "workspace-write"');
    expect(write).not.toContain("web_search");
    expect(write).toContain('model_reasoning_effort = "xhigh"');
  });

  it("escapes values, so a model name or system prompt cannot add config keys", () => {
    const { content } = codex.files(launchWith({ model: 'm"\nsandbox_mode = "danger-full-access', systemPrompt: "line\n[mcp_servers.evil]\x7f" }))[0];
    expect(content).not.toContain('sandbox_mode = "danger-full-access');
    expect(content).not.toMatch(/^\[mcp_servers\.evil\]/m);
    expect(content).toContain('developer_instructions = "line\\n[mcp_servers.evil]\\u007f"');
  });

  it("reads the last agent message, and refuses a failed turn", () => {
    const events = [
      { type: "thread.started" },
      { type: "item.completed", item: { type: "agent_message", text: "Looking." } },
      { type: "item.completed", item: { type: "command_execution", command: "ls" } },
      { type: "item.completed", item: { type: "agent_message", text: "Done." } },
      { type: "turn.completed" },
    ];
    expect(codex.finalAnswer(events.map((e) => JSON.stringify(e)).join("\n"))).toBe("Done.");
    expect(() => codex.finalAnswer(JSON.stringify({ type: "turn.failed", error: { message: "stream disconnected" } }))).toThrow("codex ended without an answer: stream disconnected");
  });
});

describe("copilot adapter", () => {
  const copilot = runtimeAdapter("copilot");

  it("offers and allows exactly the policy's tools, offline against the proxy", () => {
    const argv = copilot.argv(launchWith({ nativeTools: ["Bash(git:*)", "Read", "WebSearch"], disallowedTools: ["Edit"] }));
    expect(argv).toContain("--available-tools=bash,read_bash,write_bash,stop_bash,list_bash,view,web_search,orka-web_fetch");
    expect(argv.filter((a) => a.startsWith("--allow-tool="))).toEqual(["--allow-tool=shell(git:*)", "--allow-tool=view", "--allow-tool=web_search", "--allow-tool=orka"]);
    expect(argv.filter((a) => a.startsWith("--deny-tool="))).toEqual(["--deny-tool=edit", "--deny-tool=apply_patch"]);
    expect(argv).toContain("--additional-mcp-config=@/s/xdg/config/copilot/mcp.json");
    expect(argv).toContain("--disable-builtin-mcps");
    expect(argv).not.toContain("--allow-all-tools");
    expect(copilot.argv(launchWith({ nativeTools: "unrestricted" }))).toContain("--allow-all-tools");
    expect(copilot.env(launchWith())).toMatchObject({ COPILOT_OFFLINE: "true", COPILOT_PROVIDER_BASE_URL: "http://127.0.0.1:8/v1", COPILOT_PROVIDER_API_KEY: "session-token-secret", COPILOT_MODEL: "the-model" });
  });

  it("refuses to launch with no tool at all, which Copilot would read as no restriction", () => {
    expect(() => copilot.argv(launchWith({ nativeTools: [], brokeredTools: [] }))).toThrow("copilot cannot run with no tools at all");
  });

  it("reads the last assistant message", () => {
    const events = [
      { type: "assistant.message", data: { content: "", toolRequests: [{ name: "view" }] } },
      { type: "assistant.message", data: { content: "Answer.", toolRequests: [] } },
      { type: "result", exitCode: 0 },
    ];
    expect(copilot.finalAnswer(events.map((e) => JSON.stringify(e)).join("\n"))).toBe("Answer.");
    expect(() => copilot.finalAnswer(JSON.stringify({ type: "result", exitCode: 1 }))).toThrow("copilot ended with exit code 1");
  });
});

describe("opencode adapter", () => {
  const opencode = runtimeAdapter("opencode");

  it("denies every permission but the policy's, declares the proxy with the model's limits, and keeps secrets out of the file", () => {
    const launch = launchWith({ nativeTools: ["Bash(git:*)", "Read", "Write"], modelLimits: { contextWindow: 200_000, maxTokens: 8_000 } });
    const [file] = opencode.files(launch);
    expect(file.path).toBe("/s/xdg/config/opencode/opencode.json");
    const config = JSON.parse(file.content);
    expect(config.permission).toEqual({ "*": "deny", read: "allow", edit: "allow", bash: { "*": "deny", "git *": "allow" }, orka_web_fetch: "allow" });
    expect(config.model).toBe("orka/the-model");
    expect(config.provider.orka.options).toEqual({ baseURL: "http://127.0.0.1:8/v1", apiKey: "{env:ORKA_PROVIDER_TOKEN}" });
    expect(config.provider.orka.models["the-model"].limit).toEqual({ context: 200_000, output: 8_000 });
    expect(config.mcp.orka).toEqual({ type: "remote", url: launch.mcp.url, headers: { Authorization: "Bearer {env:ORKA_MCP_BEARER}" }, enabled: true });
    expect(file.content).not.toMatch(/session-token-secret|mcp-bearer-secret/);
    expect(opencode.env(launch)).toMatchObject({ OPENCODE_CONFIG: file.path, OPENCODE_DISABLE_PROJECT_CONFIG: "1", ORKA_PROVIDER_TOKEN: "session-token-secret" });
    expect(opencode.argv(launch)).toEqual(["run", "--format", "json", "--model", "orka/the-model", "--", "Fix the bug."]);
  });

  it("reads the text of the last step, and refuses an error event", () => {
    const events = [
      { type: "step_start" },
      { type: "text", part: { text: "Let me look." } },
      { type: "tool_use", part: { tool: "read" } },
      { type: "step_start" },
      { type: "text", part: { text: "The answer" } },
      { type: "text", part: { text: " is 42." } },
      { type: "step_finish" },
    ];
    expect(opencode.finalAnswer(events.map((e) => JSON.stringify(e)).join("\n"))).toBe("The answer is 42.");
    expect(() => opencode.finalAnswer(JSON.stringify({ type: "error", error: { name: "APIError" } }))).toThrow(/opencode ended with an error/);
  });
});
