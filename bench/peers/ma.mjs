// @mastra/core, in process, nothing durable: the 3-tool-call loop against the fake model.
// node ma.mjs <model port> [--no-warm-up] [--tool-over-http] <runs>:<concurrency>… (measure.mjs says what they do) — one JSON line per pair.
import { Agent } from "@mastra/core/agent"; import { createTool } from "@mastra/core/tools";
import { createOpenAI } from "@ai-sdk/openai"; import { z } from "zod";
import { measure, modelURL, noop } from "./measure.mjs";
const openai = createOpenAI({ apiKey: "k", baseURL: `${modelURL}/v1` });
const noopTool = createTool({ id: "noop", description: "no-op", inputSchema: z.object({ n: z.number() }), execute: noop });
const agent = new Agent({ name: "a", instructions: "x", model: openai.chat("fake"), tools: { noop: noopTool } });
await measure("@mastra/core", async () => { const r = await agent.generate("go", { maxSteps: 10 }); if (r.text !== "done") throw new Error("bad " + r.text); });
