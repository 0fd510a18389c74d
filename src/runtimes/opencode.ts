import { join } from "node:path";
import type { RuntimeAdapter, RuntimeLaunch, SessionPolicy } from "./adapter.ts";
import { adapterRefusal, NATIVE_TOOLS } from "./policy.ts";
import { PINNED_CLIS } from "./versions.ts";
import { OrkaError } from "../util/errors.ts";

/** The permission behind each name Orka's policy uses for OpenCode (apply_patch, edit and write are one). */
const OPENCODE_PERMISSIONS: Record<string, string> = {
  Read: "read",
  Write: "edit",
  Edit: "edit",
  apply_patch: "edit",
  Bash: "bash",
  Glob: "glob",
  Grep: "grep",
};

const PROVIDER_TOKEN_ENV = "ORKA_PROVIDER_TOKEN";
const MCP_BEARER_ENV = "ORKA_MCP_BEARER";
const configPath = (launch: RuntimeLaunch) => join(launch.paths.xdg.config, "opencode", "opencode.json");

/**
 * `opencode run`, printing JSON events. Its config declares one provider, the session's proxy
 * (OpenAI-compatible Chat Completions) with the pinned model and its limits, and one remote MCP
 * server, the broker; secrets are `{env:…}` references, so the file holds none. Permissions deny
 * everything (`*`) except the policy's tools, which OpenCode then does not even offer the model; a
 * checkout's own opencode.json is not read.
 */
export const opencodeAdapter: RuntimeAdapter = {
  runtime: "opencode",
  cli: PINNED_CLIS.opencode,
  wire: "openai-chat",
  refusal: (policy) => adapterRefusal("opencode", policy),
  files: (launch) => [{ path: configPath(launch), content: JSON.stringify(opencodeConfig(launch), null, 2) }],
  argv: (launch) => ["run", "--format", "json", "--model", `orka/${launch.policy.model}`, "--", launch.prompt],
  env: (launch) => ({
    OPENCODE_CONFIG: configPath(launch),
    [PROVIDER_TOKEN_ENV]: launch.provider.token,
    [MCP_BEARER_ENV]: launch.mcp.bearer,
    OPENCODE_DISABLE_PROJECT_CONFIG: "1",
    OPENCODE_DISABLE_AUTOUPDATE: "1",
    OPENCODE_DISABLE_MODELS_FETCH: "1",
    OPENCODE_DISABLE_LSP_DOWNLOAD: "1",
    OPENCODE_DISABLE_SHARE: "1",
    OPENCODE_DISABLE_CLAUDE_CODE: "1",
    OPENCODE_DISABLE_DEFAULT_PLUGINS: "1",
  }),
  finalAnswer(stdout) {
    const events = stdout.split("\n").flatMap((line) => {
      try {
        return line.trim().startsWith("{") ? [JSON.parse(line) as { type?: string; part?: { text?: unknown }; error?: unknown }] : [];
      } catch {
        return [];
      }
    });
    const error = events.find((e) => e.type === "error");
    if (error) throw new OrkaError("unavailable", `opencode ended with an error: ${JSON.stringify(error.error ?? error).slice(0, 500)}`);
    // The answer is the text of the last step; earlier steps' text came before tool calls.
    const lastStep = events.map((e) => e.type).lastIndexOf("step_start");
    const texts = events.slice(lastStep + 1).flatMap((e) => (e.type === "text" && typeof e.part?.text === "string" ? [e.part.text] : []));
    if (texts.length === 0) throw new OrkaError("unavailable", "opencode printed no answer");
    return texts.join("");
  },
};

function opencodeConfig({ policy, provider, mcp }: RuntimeLaunch) {
  return {
    $schema: "https://opencode.ai/config.json",
    model: `orka/${policy.model}`,
    // Titles and summaries use the pinned model too: the proxy refuses any other.
    small_model: `orka/${policy.model}`,
    autoupdate: false,
    share: "disabled",
    provider: {
      orka: {
        npm: "@ai-sdk/openai-compatible",
        name: "Orka",
        options: { baseURL: provider.baseURL, apiKey: `{env:${PROVIDER_TOKEN_ENV}}` },
        models: {
          [policy.model]: { name: policy.model, tool_call: true, ...(policy.modelLimits ? { limit: { context: policy.modelLimits.contextWindow, output: policy.modelLimits.maxTokens } } : {}) },
        },
      },
    },
    mcp: { orka: { type: "remote", url: mcp.url, headers: { Authorization: `Bearer {env:${MCP_BEARER_ENV}}` }, enabled: true } },
    permission: permissions(policy),
  };
}

/** Deny by default; the policy's tools (OpenCode names MCP tools `<server>_<tool>`) are allowed. Later rules win. */
function permissions(policy: SessionPolicy): Record<string, unknown> {
  const native = policy.nativeTools === "unrestricted" ? NATIVE_TOOLS.opencode : policy.nativeTools;
  const rules: Record<string, unknown> = { "*": "deny" };
  const bashPatterns: string[] = [];
  for (const name of native) {
    const scoped = /^Bash\((.*)\)$/s.exec(name);
    if (scoped) bashPatterns.push(scoped[1].replace(/:\*$/, " *"));
    else if (OPENCODE_PERMISSIONS[name]) rules[OPENCODE_PERMISSIONS[name]] = "allow";
  }
  if (rules.bash !== "allow" && bashPatterns.length > 0) rules.bash = Object.fromEntries([["*", "deny"], ...bashPatterns.map((p) => [p, "allow"])]);
  for (const tool of policy.brokeredTools) rules[`orka_${tool}`] = "allow";
  return rules;
}
