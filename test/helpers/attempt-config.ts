import type { AttemptConfig } from "../../src/runner/attempt-config.ts";
import type { AttemptDirs } from "../../src/runner/runner.ts";

/** A plain ai attempt of Task `default/t` whose scripted model answers `answer` at once, with `tools` offered. */
export function scriptedAiAttempt(options: { controllerURL: string; dirs: AttemptDirs; answer: string; tools: string[] }): AttemptConfig {
  return {
    attemptId: "a-1",
    attempt: 1,
    journal: { run: 1, resume: false },
    task: { name: "t", namespace: "default", uid: "u", type: "ai" },
    controllerURL: options.controllerURL,
    token: "attempt-token",
    ...options.dirs,
    toolSettings: { fetch: { egress: { allowLoopback: false }, timeoutMs: 1000 }, search: { provider: "duckduckgo", timeoutMs: 1000 } },
    ai: {
      endpoint: { name: "offline", type: "scripted", model: "scripted", script: { turns: [{ text: options.answer }] } },
      fallbacks: [],
      prompt: "hi",
      systemPrompt: "",
      skills: [],
      tools: options.tools,
      customTools: [],
      turnBudget: 10,
      modelCalls: { retryBaseMs: 1, timeoutMs: 10_000 },
      memories: [],
    },
    coordination: { enabled: false, maxDepth: 3, maxChildren: 5, allowedAgents: [], depth: 0 },
    autonomous: { mode: false, iteration: 0, maxIterations: 0 },
    approvalRequiredTools: [],
  };
}
