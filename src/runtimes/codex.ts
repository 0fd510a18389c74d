import { join } from "node:path";
import type { ReasoningEffort, RuntimeAdapter, RuntimeLaunch } from "./adapter.ts";
import { lastJsonObject } from "./cli-output.ts";
import { adapterRefusal } from "./policy.ts";
import { tomlString } from "./toml.ts";
import { PINNED_CLIS } from "./versions.ts";
import { OrkaError } from "../util/errors.ts";

/** Names of the variables the config file points at, so that no secret is written to a file. */
const PROVIDER_TOKEN_ENV = "ORKA_PROVIDER_TOKEN";
const MCP_BEARER_ENV = "ORKA_MCP_BEARER";

const codexHome = (launch: RuntimeLaunch) => join(launch.paths.xdg.config, "codex");

/** Codex has no `max`; its highest effort is `xhigh`. */
const codexEffort = (effort: ReasoningEffort) => (effort === "max" ? "xhigh" : effort);

/**
 * `codex exec`, printing its events as JSON lines. Its config (CODEX_HOME in the private config dir)
 * names one model provider, the session's proxy, speaking the Responses API, and one MCP server, the
 * broker, whose tools run without asking (the broker is where Orka checks them). Shell commands run in
 * codex's own sandbox: read-only on a read-intent workspace. Commands it runs do not inherit the
 * session's tokens.
 */
export const codexAdapter: RuntimeAdapter = {
  runtime: "codex",
  cli: PINNED_CLIS.codex,
  wire: "openai-responses",
  refusal: (policy) => adapterRefusal("codex", policy),
  files: (launch) => [{ path: join(codexHome(launch), "config.toml"), content: codexConfig(launch) }],
  argv: (launch) => ["exec", "--json", "--skip-git-repo-check", "--ephemeral", "--strict-config", "--ignore-rules", "--", launch.prompt],
  env: (launch) => ({
    CODEX_HOME: codexHome(launch),
    [PROVIDER_TOKEN_ENV]: launch.provider.token,
    [MCP_BEARER_ENV]: launch.mcp.bearer,
  }),
  finalAnswer(stdout) {
    const failure = lastJsonObject(stdout, (o) => o.type === "turn.failed" || o.type === "error");
    if (failure) throw new OrkaError("unavailable", `codex ended without an answer: ${errorMessage(failure).slice(0, 500)}`);
    const message = lastJsonObject(stdout, (o) => o.type === "item.completed" && (o.item as { type?: unknown } | undefined)?.type === "agent_message");
    const text = (message?.item as { text?: unknown } | undefined)?.text;
    if (typeof text !== "string") throw new OrkaError("unavailable", "codex printed no final message");
    return text;
  },
};

function codexConfig({ policy, provider, mcp }: RuntimeLaunch): string {
  const restricted = policy.nativeTools !== "unrestricted";
  const lines = [
    `model = ${tomlString(policy.model)}`,
    `model_provider = "orka"`,
    `approval_policy = "never"`,
    `sandbox_mode = ${tomlString(policy.intent === "read" ? "read-only" : "workspace-write")}`,
    // A restricted session reads files only (Glob, Grep, Read): codex's web search is not among them.
    ...(restricted ? [`web_search = "disabled"`] : []),
    ...(policy.reasoningEffort ? [`model_reasoning_effort = ${tomlString(codexEffort(policy.reasoningEffort))}`] : []),
    ...(policy.systemPrompt ? [`developer_instructions = ${tomlString(policy.systemPrompt)}`] : []),
    "",
    "[shell_environment_policy]",
    `exclude = ["ORKA_*", "CODEX_HOME"]`,
    "",
    "[model_providers.orka]",
    `name = "Orka"`,
    `base_url = ${tomlString(provider.baseURL)}`,
    `env_key = ${tomlString(PROVIDER_TOKEN_ENV)}`,
    `wire_api = "responses"`,
    "",
    "[mcp_servers.orka]",
    `url = ${tomlString(mcp.url)}`,
    `bearer_token_env_var = ${tomlString(MCP_BEARER_ENV)}`,
    `default_tools_approval_mode = "approve"`,
    `enabled_tools = [${policy.brokeredTools.map(tomlString).join(", ")}]`,
  ];
  return `${lines.join("\n")}\n`;
}

function errorMessage(event: Record<string, unknown>): string {
  const error = event.error as { message?: unknown } | undefined;
  const message = error?.message ?? event.message;
  return typeof message === "string" ? message : JSON.stringify(event);
}
