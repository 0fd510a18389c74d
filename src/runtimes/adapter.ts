import type { ReasoningEffort, RuntimeType } from "../resources/agent.ts";

/**
 * A coding CLI Orka can run as a session: how to launch it and how to read its answer. One module per
 * CLI (`claude.ts`, `codex.ts`, `copilot.ts`, `opencode.ts`); the session launcher knows nothing of any one CLI.
 */
export interface RuntimeAdapter {
  runtime: RuntimeType;
  /** The npm package that ships the CLI, at the version Orka is tested with (see `versions.ts`). */
  cli: PinnedCli;
  /** The model API the CLI speaks, which the session's provider proxy serves to it. */
  wire: ProviderWire;
  /** Why this CLI cannot enforce the policy exactly (the Task fails before launch), or undefined. */
  refusal(policy: SessionPolicy): string | undefined;
  /** Files the CLI reads (its MCP server list, settings), written into the session's private root before launch. */
  files(launch: RuntimeLaunch): SessionFile[];
  /** The arguments after the command. */
  argv(launch: RuntimeLaunch): string[];
  /** Variables added to the environment the launcher builds from nothing. */
  env(launch: RuntimeLaunch): Record<string, string>;
  /** The final answer in what the CLI printed on stdout (it printed in the format `argv` asked for). */
  finalAnswer(stdout: string): string;
}

export interface PinnedCli {
  /** npm package name, e.g. `@anthropic-ai/claude-code`. */
  packageName: string;
  version: string;
  /** The executable the package installs (`node_modules/.bin/<bin>`). */
  bin: string;
}

export type ProviderWire = "anthropic-messages" | "openai-responses" | "openai-chat";

/** The Task's effective runtime policy, as the controller worked it out at admission. */
export interface SessionPolicy {
  /** The CLI's own tools it may use (`Read`, `Bash(git:*)`, …), sorted and unique; "unrestricted" when neither Task nor Agent lists any. */
  nativeTools: string[] | "unrestricted";
  /** Names the Task denies (`agentRuntime.disallowedTools`). */
  disallowedTools: string[];
  allowBash: boolean;
  maxTurns: number;
  /** The Orka tools the broker offers (names as Orka knows them, e.g. `web_fetch`). */
  brokeredTools: string[];
  intent: "read" | "write";
  /** Whether the Agent sets a system prompt / reasoning effort (some CLIs cannot take one). */
  systemPrompt?: string;
  reasoningEffort?: ReasoningEffort;
  model: string;
  /** A model's limits, which some CLIs need declared (opencode). */
  modelLimits?: { contextWindow: number; maxTokens: number };
}

// Declared with the Agent's fields (which validate them), so the resource schema needs nothing from here.
export { REASONING_EFFORTS, type ReasoningEffort } from "../resources/agent.ts";

/** Where a session lives: a private root (mode 0700) holding everything the CLI may write. */
export interface SessionPaths {
  root: string;
  home: string;
  tmp: string;
  /** The checkout (or empty directory) the CLI works in, and its working directory. */
  workspace: string;
  xdg: { config: string; cache: string; data: string; state: string };
}

/** Everything an adapter needs to launch its CLI for one prompt. */
export interface RuntimeLaunch {
  policy: SessionPolicy;
  prompt: string;
  paths: SessionPaths;
  /** The session's MCP broker: Streamable HTTP on loopback, one server named `orka`. */
  mcp: { url: string; bearer: string };
  /** The session's provider proxy: the CLI's model base URL and the token it authenticates with (never the Provider key). */
  provider: { baseURL: string; token: string };
}

/** The session's broker as an `mcpServers` entry of the JSON form claude and copilot read. */
export function brokerServerEntry(launch: RuntimeLaunch) {
  return { type: "http", url: launch.mcp.url, headers: { Authorization: `Bearer ${launch.mcp.bearer}` } };
}

/** A file to write before launch, at `path` (absolute, inside the session's private root), mode 0600. */
export interface SessionFile {
  path: string;
  content: string;
}
