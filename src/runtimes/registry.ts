import type { RuntimeType } from "../resources/agent.ts";
import type { RuntimeAdapter } from "./adapter.ts";
import { claudeAdapter } from "./claude.ts";
import { codexAdapter } from "./codex.ts";
import { copilotAdapter } from "./copilot.ts";
import { opencodeAdapter } from "./opencode.ts";

const ADAPTERS: Record<RuntimeType, RuntimeAdapter> = {
  claude: claudeAdapter,
  codex: codexAdapter,
  copilot: copilotAdapter,
  opencode: opencodeAdapter,
};

/** How to launch a runtime's CLI and read its answer. */
export function runtimeAdapter(runtime: RuntimeType): RuntimeAdapter {
  return ADAPTERS[runtime];
}
