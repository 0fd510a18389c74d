// @openai/agents, in process, nothing durable: the 3-tool-call loop against the fake model.
// node oa.mjs <model port> [--no-warm-up] <runs>:<concurrency>… — one JSON line per pair, after one warm-up run unless told not to.
import { Agent, run, tool, setDefaultOpenAIClient, setOpenAIAPI, setTracingDisabled } from "@openai/agents";
import OpenAI from "openai"; import { z } from "zod";
import { measure } from "./measure.mjs";
setDefaultOpenAIClient(new OpenAI({ apiKey: "k", baseURL: `http://127.0.0.1:${process.argv[2]}/v1` }));
setOpenAIAPI("chat_completions"); setTracingDisabled(true);
const noop = tool({ name: "noop", description: "no-op", parameters: z.object({ n: z.number() }), execute: async ({ n }) => `ok ${n}` });
const agent = new Agent({ name: "a", instructions: "x", model: "fake", tools: [noop] });
await measure("@openai/agents", async () => { const r = await run(agent, "go"); if (r.finalOutput !== "done") throw new Error("bad " + r.finalOutput); });
