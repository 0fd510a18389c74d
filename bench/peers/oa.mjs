// @openai/agents, in process, nothing durable: the 3-tool-call loop against the fake model.
// node oa.mjs <model port> [--no-warm-up] [--tool-over-http] <runs>:<concurrency>… (measure.mjs says what they do) — one JSON line per pair.
import { Agent, run, tool, setDefaultOpenAIClient, setOpenAIAPI, setTracingDisabled } from "@openai/agents";
import OpenAI from "openai"; import { z } from "zod";
import { measure, modelURL, noop } from "./measure.mjs";
setDefaultOpenAIClient(new OpenAI({ apiKey: "k", baseURL: `${modelURL}/v1` }));
setOpenAIAPI("chat_completions"); setTracingDisabled(true);
const noopTool = tool({ name: "noop", description: "no-op", parameters: z.object({ n: z.number() }), execute: noop });
const agent = new Agent({ name: "a", instructions: "x", model: "fake", tools: [noopTool] });
await measure("@openai/agents", async () => { const r = await run(agent, "go"); if (r.finalOutput !== "done") throw new Error("bad " + r.finalOutput); });
