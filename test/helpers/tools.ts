import { createToolContext } from "../../src/tools/context.ts";
import { BUILTIN_TOOLS } from "../../src/tools/registry.ts";
import { toolExecutor } from "../../src/worker/tool-executor.ts";
import type { ControlPlane, ToolSettings } from "../../src/tools/define.ts";
import { freshAttemptDirs } from "./stand-in-control-plane.ts";

/** Runs built-in tools through the executor the worker uses, in fresh attempt directories. */
export async function toolHarness(settings: Partial<ToolSettings> = {}, controlPlane?: ControlPlane) {
  const { remove, ...dirs } = await freshAttemptDirs("tools");
  const controller = new AbortController();
  const execute = toolExecutor({
    allowed: BUILTIN_TOOLS.map((t) => t.name),
    customTools: new Set(),
    callCustomTool: async () => {
      throw new Error("no custom tools here");
    },
    context: createToolContext({
      namespace: "default",
      taskName: "tool-test",
      dirs,
      settings: {
        fetch: { egress: { allowLoopback: true }, timeoutMs: 2000 },
        search: { provider: "duckduckgo", timeoutMs: 2000 },
        ...settings,
      },
      signal: controller.signal,
      controlPlane,
    }),
  });
  let calls = 0;
  return {
    ...dirs,
    /** Calls a tool; resolves with its parsed JSON result, rejects with the tool error. */
    async call(name: string, args: Record<string, unknown>): Promise<any> {
      const text = await execute({ id: `call-${++calls}`, name, arguments: JSON.stringify(args) });
      return JSON.parse(text);
    },
    /** Calls a tool as a resumed attempt would: with an idempotency key, as interrupted or not; the raw text. */
    resumeCall(name: string, args: Record<string, unknown>, how: { key: string; interrupted: boolean }): Promise<string> {
      return execute({ id: `call-${++calls}`, name, arguments: JSON.stringify(args) }, how);
    },
    close() {
      controller.abort();
      remove();
    },
  };
}
