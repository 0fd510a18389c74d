import type { RuntimeType } from "../resources/agent.ts";
import type { PinnedCli } from "./adapter.ts";

/**
 * The coding CLIs Orka runs, each at the version its adapter was written and tested against. A new
 * version changes flags, config keys or request shapes without notice, so moving one is a code
 * change: update the version here, then rerun test/runtimes/real-clis.test.ts.
 */
export const PINNED_CLIS: Record<RuntimeType, PinnedCli> = {
  claude: { packageName: "@anthropic-ai/claude-code", version: "2.1.332", bin: "claude" },
  codex: { packageName: "@openai/codex", version: "0.171.0", bin: "codex" },
  copilot: { packageName: "@github/copilot", version: "1.0.102", bin: "copilot" },
  opencode: { packageName: "opencode-ai", version: "1.18.33", bin: "opencode" },
};
