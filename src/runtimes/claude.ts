import { join } from "node:path";
import { brokerServerEntry, type RuntimeAdapter, type RuntimeLaunch } from "./adapter.ts";
import { adapterRefusal, baseName, NATIVE_TOOLS } from "./policy.ts";
import { lastJsonObject } from "./cli-output.ts";
import { PINNED_CLIS } from "./versions.ts";
import { OrkaError } from "../util/errors.ts";

/** The name Claude Code gives a tool of the MCP server `orka`. */
const claudeMcpToolName = (tool: string) => `mcp__orka__${tool}`;

const mcpConfigPath = (launch: RuntimeLaunch) => join(launch.paths.xdg.config, "claude", "mcp.json");

/**
 * Claude Code in print mode (`-p`), answering one JSON object. Permissions are `dontAsk`: a tool not
 * allowed is refused, never asked about, and `--tools` removes the native tools the policy does not
 * list, so the model is not even offered them. Settings files are not read (a checkout's
 * `.claude/settings.json` must not widen the policy) and only the broker's MCP server is used.
 */
export const claudeAdapter: RuntimeAdapter = {
  runtime: "claude",
  cli: PINNED_CLIS.claude,
  wire: "anthropic-messages",
  refusal: (policy) => adapterRefusal("claude", policy),
  files: (launch) => [
    {
      path: mcpConfigPath(launch),
      content: JSON.stringify({ mcpServers: { orka: brokerServerEntry(launch) } }),
    },
  ],
  argv(launch) {
    const { policy } = launch;
    const native = policy.nativeTools === "unrestricted" ? NATIVE_TOOLS.claude : policy.nativeTools;
    const allowed = [...native, ...policy.brokeredTools.map(claudeMcpToolName)];
    return [
      "-p",
      "--output-format", "json",
      "--model", policy.model,
      "--max-turns", String(policy.maxTurns),
      "--mcp-config", mcpConfigPath(launch),
      "--strict-mcp-config",
      "--setting-sources", "",
      "--permission-mode", "dontAsk",
      "--no-session-persistence",
      ...(policy.nativeTools === "unrestricted" ? [] : ["--tools", [...new Set(policy.nativeTools.map(baseName))].join(",")]),
      ...(policy.systemPrompt ? ["--append-system-prompt", policy.systemPrompt] : []),
      ...(policy.reasoningEffort ? ["--effort", policy.reasoningEffort] : []),
      // The list options take every argument up to the next option, so they come last and `--` ends them before the prompt.
      ...(policy.disallowedTools.length > 0 ? ["--disallowedTools", ...policy.disallowedTools] : []),
      ...(allowed.length > 0 ? ["--allowedTools", ...allowed] : []),
      "--",
      launch.prompt,
    ];
  },
  env: (launch) => ({
    ANTHROPIC_BASE_URL: launch.provider.baseURL,
    // Sent as `Authorization: Bearer`; ANTHROPIC_API_KEY would go as x-api-key. The proxy takes either.
    ANTHROPIC_AUTH_TOKEN: launch.provider.token,
    // Every model Claude Code picks by itself (titles, subagents, summaries) is the pinned one: the proxy refuses others.
    ANTHROPIC_MODEL: launch.policy.model,
    ANTHROPIC_SMALL_FAST_MODEL: launch.policy.model,
    ANTHROPIC_DEFAULT_HAIKU_MODEL: launch.policy.model,
    ANTHROPIC_DEFAULT_SONNET_MODEL: launch.policy.model,
    ANTHROPIC_DEFAULT_OPUS_MODEL: launch.policy.model,
    CLAUDE_CODE_SUBAGENT_MODEL: launch.policy.model,
    DISABLE_AUTOUPDATER: "1",
    DISABLE_TELEMETRY: "1",
    DISABLE_ERROR_REPORTING: "1",
    CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC: "1",
  }),
  finalAnswer(stdout) {
    const result = lastJsonObject(stdout, (o) => o.type === "result");
    if (!result) throw new OrkaError("unavailable", "claude printed no result object");
    if (result.is_error !== false || result.subtype !== "success" || typeof result.result !== "string") {
      throw new OrkaError("unavailable", `claude ended without an answer (${String(result.subtype ?? "unknown")}${typeof result.result === "string" ? `: ${result.result.slice(0, 500)}` : ""})`);
    }
    return result.result;
  },
};
