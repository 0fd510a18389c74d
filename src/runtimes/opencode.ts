import type { RuntimeAdapter } from "./adapter.ts";
import { adapterRefusal } from "./policy.ts";
import { PINNED_CLIS } from "./versions.ts";

export const opencodeAdapter: RuntimeAdapter = {
  runtime: "opencode",
  cli: PINNED_CLIS.opencode,
  wire: "openai-chat",
  refusal: (policy) => adapterRefusal("opencode", policy),
  files: () => [],
  argv: (launch) => [launch.prompt],
  env: () => ({}),
  finalAnswer: (stdout) => stdout.trim(),
};
