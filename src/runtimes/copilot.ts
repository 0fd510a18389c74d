import { join } from "node:path";
import { brokerServerEntry, type RuntimeAdapter, type RuntimeLaunch } from "./adapter.ts";
import { lastJsonObject } from "./cli-output.ts";
import { adapterRefusal, baseName } from "./policy.ts";
import { PINNED_CLIS } from "./versions.ts";
import { OrkaError } from "../util/errors.ts";

/** Copilot's own tools behind each name Orka's policy uses. */
const COPILOT_TOOLS: Record<string, string[]> = {
  Read: ["view"],
  Write: ["create"],
  Edit: ["edit", "apply_patch"],
  Bash: ["bash", "read_bash", "write_bash", "stop_bash", "list_bash"],
  Glob: ["glob"],
  Grep: ["rg"],
  WebSearch: ["web_search"],
  WebFetch: ["web_fetch"],
};

const PROVIDER_KEY_ENV = "COPILOT_PROVIDER_API_KEY";
const mcpConfigPath = (launch: RuntimeLaunch) => join(launch.paths.xdg.config, "copilot", "mcp.json");

/** `Bash(git:*)` is Copilot's `shell(git:*)`; a plain name is its tools as they are. */
function permissionsOf(name: string): string[] {
  const scoped = /^Bash\((.*)\)$/s.exec(name);
  if (scoped) return [`shell(${scoped[1]})`];
  return COPILOT_TOOLS[name] ?? [];
}

function availableOf(name: string): string[] {
  return COPILOT_TOOLS[baseName(name)] ?? [];
}

/**
 * GitHub Copilot CLI in prompt mode (`--prompt`), printing JSON lines, offline against a BYOK model
 * provider (the session's proxy, OpenAI Chat Completions). A restricted policy lists the tools the
 * model is offered (`--available-tools`) and those that run without asking (`--allow-tool`); anything
 * else is refused, since prompt mode cannot ask. The broker is the only MCP server.
 */
export const copilotAdapter: RuntimeAdapter = {
  runtime: "copilot",
  cli: PINNED_CLIS.copilot,
  wire: "openai-chat",
  refusal: (policy) => adapterRefusal("copilot", policy),
  files: (launch) => [
    {
      path: mcpConfigPath(launch),
      content: JSON.stringify({ mcpServers: { orka: { ...brokerServerEntry(launch), tools: ["*"] } } }),
    },
  ],
  argv(launch) {
    const { policy } = launch;
    const brokered = policy.brokeredTools.map((tool) => `orka-${tool}`);
    const available = policy.nativeTools === "unrestricted" ? [] : unique([...policy.nativeTools.flatMap(availableOf), ...brokered]);
    // Copilot reads an empty --available-tools as no restriction at all.
    if (policy.nativeTools !== "unrestricted" && available.length === 0) {
      throw new OrkaError("failed_precondition", "copilot cannot run with no tools at all: allow at least one tool, or use another runtime");
    }
    const restriction =
      policy.nativeTools === "unrestricted"
        ? ["--allow-all-tools"]
        : [`--available-tools=${available.join(",")}`, ...unique([...policy.nativeTools.flatMap(permissionsOf), ...(brokered.length > 0 ? ["orka"] : [])]).map((tool) => `--allow-tool=${tool}`)];
    return [
      "--output-format", "json",
      `--additional-mcp-config=@${mcpConfigPath(launch)}`,
      "--disable-builtin-mcps",
      "--no-auto-update",
      "--no-ask-user",
      "--disable-client-telemetry",
      `--secret-env-vars=${PROVIDER_KEY_ENV}`,
      ...restriction,
      ...policy.disallowedTools.flatMap(permissionsOf).map((tool) => `--deny-tool=${tool}`),
      `--prompt=${launch.prompt}`,
    ];
  },
  env: (launch) => ({
    COPILOT_OFFLINE: "true",
    COPILOT_PROVIDER_TYPE: "openai",
    COPILOT_PROVIDER_WIRE_API: "completions",
    COPILOT_PROVIDER_BASE_URL: launch.provider.baseURL,
    // Sent as `Authorization: Bearer`.
    [PROVIDER_KEY_ENV]: launch.provider.token,
    COPILOT_MODEL: launch.policy.model,
    ...(launch.policy.modelLimits
      ? { COPILOT_PROVIDER_MAX_PROMPT_TOKENS: String(launch.policy.modelLimits.contextWindow), COPILOT_PROVIDER_MAX_OUTPUT_TOKENS: String(launch.policy.modelLimits.maxTokens) }
      : {}),
  }),
  finalAnswer(stdout) {
    const result = lastJsonObject(stdout, (o) => o.type === "result");
    if (result && result.exitCode !== 0) throw new OrkaError("unavailable", `copilot ended with exit code ${String(result.exitCode)}`);
    const message = lastJsonObject(stdout, (o) => o.type === "assistant.message");
    const content = (message?.data as { content?: unknown } | undefined)?.content;
    if (typeof content !== "string") throw new OrkaError("unavailable", "copilot printed no assistant message");
    return content;
  },
};

const unique = (names: string[]) => [...new Set(names)];
