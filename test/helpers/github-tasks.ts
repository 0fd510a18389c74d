import { toolResultsOf, type LlmPeer } from "../peers/llm-server.ts";
import type { OrkaUnderTest } from "./orka-server.ts";

export interface ToolCallSpec {
  name: string;
  arguments: Record<string, unknown>;
}

export interface RunOptions {
  /** Creates the Task; the admin's REST call unless a test sends it another way (with a transaction token). */
  create?: (body: Record<string, unknown>) => Promise<{ status: number; body: any }>;
  /** Runs in the model's first turn, after the attempt started and before the calls are made. */
  beforeCalls?: () => Promise<void>;
}

let runs = 0;

/**
 * Runs an `ai` Task whose scripted model makes `calls` in one turn and then answers, and returns what
 * each call gave the model: the parsed JSON result, or the error text (`Error executing tool: …`).
 */
export async function runToolCalls(
  orka: OrkaUnderTest,
  peer: LlmPeer,
  calls: ToolCallSpec[],
  spec: Record<string, unknown> & { tools?: string[] } = {},
  { create = (body) => orka.api("POST", "/api/v1/tasks", body), beforeCalls }: RunOptions = {},
): Promise<{ task: any; results: any[] }> {
  const name = `gh-run-${++runs}-${Math.random().toString(36).slice(2, 7)}`;
  const model = `m-${name}`;
  let results: string[] = [];
  peer.script(model, [
    async () => {
      await beforeCalls?.();
      return { toolCalls: calls };
    },
    (body) => {
      results = toolResultsOf(body);
      return { text: "done" };
    },
  ]);
  const { tools = calls.map((c) => c.name), ...rest } = spec;
  const created = await create({ name, type: "ai", prompt: "use the tools", ai: { providerRef: { name: "peer" }, model, tools }, ...rest });
  if (created.status !== 201) throw new Error(`task not created: ${JSON.stringify(created.body)}`);
  const task = await orka.waitFor(name, ["Succeeded", "Failed"], 30_000);
  return { task, results: results.map((r) => (r.startsWith("{") || r.startsWith("[") ? JSON.parse(r) : r)) };
}
