// @mastra/core, in process, nothing durable: the 3-tool-call loop against the fake model.
// node ma.mjs <model port> [--no-warm-up] <runs>:<concurrency>… — one JSON line per pair, after one warm-up run unless told not to.
import { Agent } from "@mastra/core/agent"; import { createTool } from "@mastra/core/tools";
import { createOpenAI } from "@ai-sdk/openai"; import { z } from "zod";
import { measure } from "./measure.mjs";
const openai = createOpenAI({ apiKey: "k", baseURL: `http://127.0.0.1:${process.argv[2]}/v1` });
const noop = createTool({ id: "noop", description: "no-op", inputSchema: z.object({ n: z.number() }), execute: async () => `ok` });
const agent = new Agent({ name: "a", instructions: "x", model: openai.chat("fake"), tools: { noop } });
await measure("@mastra/core", async () => { const r = await agent.generate("go", { maxSteps: 10 }); if (r.text !== "done") throw new Error("bad " + r.text); });
