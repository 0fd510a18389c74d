// Built-in tool overhead: one no-op-sized tool call through the worker's executor, and one
// code_exec start (bubblewrap sandbox up, `true`, torn down). Prints medians; asserts nothing.
import { rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { makeAttemptDirs } from "../src/runner/attempt-dirs.ts";
import { prepareAttemptDirs } from "../src/runner/local/dirs.ts";
import { createToolContext } from "../src/tools/context.ts";
import { BUILTIN_TOOLS } from "../src/tools/registry.ts";
import { toolExecutor } from "../src/worker/tool-executor.ts";
import { measure } from "./timing.ts";

const attemptsDir = join(tmpdir(), "orka-bench-tools");
const dirs = await prepareAttemptDirs(attemptsDir, `bench-${process.pid}`);
const execute = toolExecutor({
  allowed: BUILTIN_TOOLS.map((t) => t.name),
  customTools: new Set(),
  callCustomTool: async () => "",
  // As an ai attempt's worker does: the directories are made before the first built-in tool runs.
  prepareDirs: () => makeAttemptDirs(dirs),
  context: createToolContext({
    namespace: "bench",
    taskName: "bench",
    dirs,
    settings: { fetch: { egress: { allowLoopback: false }, timeoutMs: 1000 }, search: { provider: "duckduckgo", timeoutMs: 1000 } },
    signal: new AbortController().signal,
  }),
});

await execute({ id: "w", name: "file_write", arguments: JSON.stringify({ path: "tiny.txt", content: "x" }) });
await measure("no-op tool call (file_read of 1 byte, validated and confined)", 2000, () =>
  execute({ id: "r", name: "file_read", arguments: '{"path":"tiny.txt"}' }),
);
await measure("code_exec start (bash `true` in the sandbox)", 30, () =>
  execute({ id: "c", name: "code_exec", arguments: '{"language":"bash","code":"true"}' }),
);
rmSync(join(attemptsDir, `bench-${process.pid}`), { recursive: true, force: true });
