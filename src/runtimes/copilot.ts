import type { RuntimeAdapter } from "./adapter.ts";
import { adapterRefusal } from "./policy.ts";
import { PINNED_CLIS } from "./versions.ts";

export const copilotAdapter: RuntimeAdapter = {
  runtime: "copilot",
  cli: PINNED_CLIS.copilot,
  wire: "openai-chat",
  refusal: (policy) => adapterRefusal("copilot", policy),
  files: () => [],
  argv: (launch) => [launch.prompt],
  env: () => ({}),
  finalAnswer: (stdout) => stdout.trim(),
};
