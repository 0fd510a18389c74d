import Anthropic from "@anthropic-ai/sdk";
import OpenAI from "openai";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startLlmPeer, type LlmPeer } from "./llm-server.ts";

// The peer must be faithful enough for the official SDKs, streaming included.
describe("LLM peer through the official SDKs", () => {
  let peer: LlmPeer;
  beforeAll(async () => {
    peer = await startLlmPeer();
    peer.script("m", [{ toolCalls: [{ name: "lookup", arguments: { q: "x" } }] }, { text: "final answer here" }]);
  });
  afterAll(() => peer.close());

  it("streams OpenAI chat completions with tool calls", async () => {
    const client = new OpenAI({ apiKey: "k", baseURL: `${peer.url}/v1` });
    const stream = client.chat.completions.stream({ model: "m", messages: [{ role: "user", content: "hi" }], tools: [{ type: "function", function: { name: "lookup", parameters: { type: "object" } } }] });
    const completion = await stream.finalChatCompletion();
    const call = completion.choices[0].message.tool_calls![0];
    expect(call.type === "function" && call.function.name).toBe("lookup");
    expect(call.type === "function" && JSON.parse(call.function.arguments)).toEqual({ q: "x" });
  });

  it("streams OpenAI Responses with a function call, and counts a run of model items as one turn", async () => {
    const client = new OpenAI({ apiKey: "k", baseURL: `${peer.url}/v1` });
    const first = await client.responses.stream({ model: "m", input: "hi", tools: [{ type: "function", name: "lookup", parameters: { type: "object" }, strict: false }] }).finalResponse();
    const call = first.output.find((item) => item.type === "function_call");
    expect(call && call.type === "function_call" && [call.name, JSON.parse(call.arguments)]).toEqual(["lookup", { q: "x" }]);
    const second = await client.responses.create({
      model: "m",
      input: [{ role: "user", content: "hi" }, { type: "function_call", call_id: call!.call_id, name: "lookup", arguments: "{}" }, { type: "function_call_output", call_id: call!.call_id, output: "found" }],
    });
    expect(second.output_text).toBe("final answer here");
  });

  it("streams Anthropic messages with text", async () => {
    const client = new Anthropic({ apiKey: "k", baseURL: peer.url });
    const stream = client.messages.stream({
      model: "m",
      max_tokens: 100,
      messages: [
        { role: "user", content: "hi" },
        { role: "assistant", content: [{ type: "tool_use", id: "t1", name: "lookup", input: { q: "x" } }] },
        { role: "user", content: [{ type: "tool_result", tool_use_id: "t1", content: "found" }] },
      ],
    });
    const message = await stream.finalMessage();
    expect(message.content[0]).toMatchObject({ type: "text", text: "final answer here" });
    expect(message.stop_reason).toBe("end_turn");
  });

  it("injects failures in each vendor's error shape", async () => {
    peer.failNext(1, { status: 429, message: "slow down" });
    const client = new Anthropic({ apiKey: "k", baseURL: peer.url, maxRetries: 0 });
    await expect(client.messages.create({ model: "m", max_tokens: 10, messages: [{ role: "user", content: "hi" }] })).rejects.toMatchObject({ status: 429 });
  });
});
