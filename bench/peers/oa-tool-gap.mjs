// @openai/agents, in process: `runs` loops one at a time against the timed model (model "noop": three
// tool calls, then "done"), for the gap each tool call leaves between two model turns.
// node oa-tool-gap.mjs <model port> <runs> <function|http> — `function`: the tool does nothing;
// `http`: the tool POSTs to the timed model's /noop, as Orka's custom HTTP Tool does, through the same client
// (undici's request). One warm-up loop first.
import { request } from "undici";
import { Agent, run, tool, setDefaultOpenAIClient, setOpenAIAPI, setTracingDisabled } from "@openai/agents";
import OpenAI from "openai"; import { z } from "zod";
const [port, runs, kind] = process.argv.slice(2);
const base = `http://127.0.0.1:${port}`;
setDefaultOpenAIClient(new OpenAI({ apiKey: "k", baseURL: `${base}/v1` }));
setOpenAIAPI("chat_completions"); setTracingDisabled(true);
const execute = kind === "http"
  ? async (args) => (await request(`${base}/noop`, { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify(args) })).body.text()
  : async ({ n }) => `ok ${n}`;
const noop = tool({ name: "noop", description: "no-op", parameters: z.object({ n: z.number(), conversation: z.string() }), execute });
const agent = new Agent({ name: "a", instructions: "x", model: "noop", tools: [noop] });
for (let i = -1; i < Number(runs); i++) {
  const r = await run(agent, i < 0 ? `warm-up-${kind}` : `oa-${kind}-${i}`);
  if (r.finalOutput !== "done") throw new Error("bad " + r.finalOutput);
}
