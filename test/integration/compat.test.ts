import Anthropic from "@anthropic-ai/sdk";
import { existsSync, mkdtempSync, readdirSync, rmSync } from "node:fs";
import http from "node:http";
import type { AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import OpenAI from "openai";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { LlmPeer } from "../peers/llm-server.ts";
import type { OrkaUnderTest } from "../helpers/orka-server.ts";
import { startOrkaWithPeer } from "../helpers/orka-with-peer.ts";

const CORE_FIVE = ["web_search", "code_exec", "file_read", "web_fetch", "file_write"];
const toolNames = (body: any): string[] => (body.tools ?? []).map((t: any) => t.function?.name ?? t.name);

// The OpenAI- and Anthropic-compatible endpoints, driven by the official SDKs as a client would.
describe("compatible endpoints", () => {
  let orka: OrkaUnderTest;
  let peer: LlmPeer;
  let page: http.Server;
  let pageURL = "";
  let openai: OpenAI;
  let anthropic: Anthropic;
  let stop: () => Promise<void>;
  // The runner's attempt directories: a compat request with server-side tools runs as one of its attempts.
  const workDir = mkdtempSync(join(tmpdir(), "orka-compat-work-"));
  const compatAttempts = () => (existsSync(workDir) ? readdirSync(workDir).filter((name) => name.startsWith("compat-")) : []);
  const until = async (what: string, done: () => boolean) => {
    for (let i = 0; i < 200 && !done(); i++) await new Promise((r) => setTimeout(r, 25));
    if (!done()) throw new Error(`timed out waiting until ${what}`);
  };

  beforeAll(async () => {
    page = http.createServer((_req, res) => res.writeHead(200, { "content-type": "text/plain" }).end("The launch code is 4-8-15-16-23-42."));
    await new Promise<void>((r) => page.listen(0, "127.0.0.1", r));
    pageURL = `http://127.0.0.1:${(page.address() as AddressInfo).port}/notes.txt`;
    ({ orka, peer, stop } = await startOrkaWithPeer(
      `
apiVersion: core.orka.ai/v1alpha1
kind: Provider
metadata: {name: default}
spec: {type: openai, baseURL: "PEER_URL/v1", secretRef: {name: key}, defaultModel: m-default}
---
apiVersion: core.orka.ai/v1alpha1
kind: Provider
metadata: {name: claude}
spec: {type: anthropic, baseURL: "PEER_URL", secretRef: {name: key}, defaultModel: c-default}
`,
      { ORKA_ALLOW_LOOPBACK_EGRESS: "true", ORKA_WORK_DIR: workDir },
    ));
    openai = new OpenAI({ apiKey: orka.token, baseURL: `${orka.url}/openai/v1`, maxRetries: 0 });
    anthropic = new Anthropic({ apiKey: orka.token, baseURL: `${orka.url}/anthropic`, maxRetries: 0 });
  });
  afterAll(async () => {
    await stop();
    page.close();
    rmSync(workDir, { recursive: true, force: true });
  });
  const requestsFor = (model: string) => peer.requests.filter((r) => r.body.model === model);

  it("lists models and answers a plain OpenAI completion", async () => {
    const models = await openai.models.list();
    expect(models.data.map((m) => m.id).sort()).toEqual(["claude/c-default", "default/m-default", "m-default"]);
    peer.script("m-plain", [{ text: "Hello from upstream." }]);
    const completion = await openai.chat.completions.create({ model: "m-plain", messages: [{ role: "system", content: "Be brief." }, { role: "user", content: "hi" }] });
    expect(completion.object).toBe("chat.completion");
    expect(completion.id).toMatch(/^chatcmpl-[0-9a-f]{8}$/);
    expect(completion.choices[0]).toMatchObject({ index: 0, finish_reason: "stop", message: { role: "assistant", content: "Hello from upstream." } });
    expect(completion.usage).toMatchObject({ prompt_tokens: 10, completion_tokens: 5, total_tokens: 15 });
    expect(toolNames(requestsFor("m-plain")[0].body)).toEqual(CORE_FIVE);
  });

  it("runs a tool call server-side and returns only the final answer", async () => {
    peer.script("m-tools", [{ toolCalls: [{ name: "web_fetch", arguments: { url: pageURL } }] }, { text: "The code is 4-8-15-16-23-42." }]);
    const completion = await openai.chat.completions.create({
      model: "default/m-tools",
      messages: [{ role: "user", content: "What is the launch code?" }],
    });
    expect(completion.choices[0].message.content).toBe("The code is 4-8-15-16-23-42.");
    expect(completion.choices[0].message.tool_calls).toBeUndefined();
    const [first, second] = requestsFor("m-tools");
    expect(toolNames(first.body)).toEqual(CORE_FIVE);
    expect(JSON.stringify(second.body.messages)).toContain("4-8-15-16-23-42");
  });

  it("tells the model a client-only tool is not available in tool mode", async () => {
    peer.script("m-client-tool", [{ toolCalls: [{ name: "client_side", arguments: {} }] }, { text: "ok" }]);
    await openai.chat.completions.create({ model: "m-client-tool", messages: [{ role: "user", content: "x" }] });
    expect(JSON.stringify(requestsFor("m-client-tool")[1].body.messages)).toContain('{\\"success\\":false,\\"error\\":\\"tool \\\\\\"client_side\\\\\\" is not available in this request\\"}');
  });

  it("passes tool calls back to the client with X-Orka-Tools: disabled, running nothing", async () => {
    peer.script("m-pass", [{ toolCalls: [{ name: "lookup", arguments: { q: "x" } }] }]);
    const completion = await openai.chat.completions.create(
      { model: "m-pass", messages: [{ role: "user", content: "x" }], tools: [{ type: "function", function: { name: "lookup", parameters: { type: "object", properties: { q: { type: "string" } } } } }] },
      { headers: { "X-Orka-Tools": "disabled" } },
    );
    const call = completion.choices[0].message.tool_calls![0];
    expect(completion.choices[0].finish_reason).toBe("tool_calls");
    expect(call.type === "function" && [call.function.name, JSON.parse(call.function.arguments)]).toEqual(["lookup", { q: "x" }]);
    expect(toolNames(requestsFor("m-pass")[0].body)).toEqual(["lookup"]);
  });

  it("streams OpenAI chunks, with usage only when asked, ending in [DONE]", async () => {
    peer.script("m-stream", [{ toolCalls: [{ name: "web_fetch", arguments: { url: pageURL } }] }, { text: "Streamed answer that is long enough to be split into several chunks." }]);
    const stream = await openai.chat.completions.create({ model: "m-stream", messages: [{ role: "user", content: "go" }], stream: true, stream_options: { include_usage: true } });
    let text = "";
    let finish: string | null = null;
    let usage: unknown;
    for await (const chunk of stream) {
      text += chunk.choices[0]?.delta.content ?? "";
      finish = chunk.choices[0]?.finish_reason ?? finish;
      usage = chunk.usage ?? usage;
    }
    expect(text).toBe("Streamed answer that is long enough to be split into several chunks.");
    expect(finish).toBe("stop");
    expect(usage).toMatchObject({ total_tokens: 30 });
    const raw = await fetch(`${orka.url}/openai/v1/chat/completions`, {
      method: "POST",
      headers: { authorization: `Bearer ${orka.token}`, "content-type": "application/json" },
      body: JSON.stringify({ model: "m-plain", messages: [{ role: "user", content: "hi" }], stream: true }),
    });
    const frames = (await raw.text()).trim().split("\n\n");
    expect(frames.at(-1)).toBe("data: [DONE]");
    expect(frames.some((f) => f.includes('"usage"'))).toBe(false);
  });

  it("refuses bad OpenAI requests in OpenAI's error shape", async () => {
    const post = (body: unknown, token = orka.token) =>
      fetch(`${orka.url}/openai/v1/chat/completions`, { method: "POST", headers: { authorization: `Bearer ${token}`, "content-type": "application/json" }, body: JSON.stringify(body) });
    const cases: [unknown, number, string, string | null][] = [
      [{ model: "m", messages: [] }, 400, "messages is required and must be non-empty", "messages"],
      [{ model: "m", messages: [{ role: "user", content: "x" }], n: 2 }, 400, "n > 1 is not supported", "n"],
      [{ model: "m", messages: [{ role: "user", content: "x" }], max_tokens: 8 }, 400, "max_tokens must be at least 16, got 8", "max_tokens"],
      [{ model: "nobody/x", messages: [{ role: "user", content: "x" }] }, 404, 'unknown model "nobody/x": use an Agent name, provider/model, or a model of the Provider named "default"', null],
    ];
    for (const [body, status, message, param] of cases) {
      const response = await post(body);
      expect(response.status).toBe(status);
      expect(((await response.json()) as any).error).toMatchObject({ message, param });
    }
    const unauthorized = await post({ model: "m", messages: [{ role: "user", content: "x" }] }, "wrong");
    expect([unauthorized.status, ((await unauthorized.json()) as any).error]).toEqual([401, { message: "invalid token", type: "authentication_error", param: null, code: null }]);
  });

  it("answers a model that refused as a failed completion (502), in each protocol's shape, streaming or not", async () => {
    const refused = "model call to default (openai, model m-refuses) failed: provider returned HTTP 400: no such model";
    const send = (path: string, body: Record<string, unknown>) =>
      fetch(`${orka.url}${path}`, { method: "POST", headers: { authorization: `Bearer ${orka.token}`, "content-type": "application/json" }, body: JSON.stringify(body) });
    const openAIBody = { model: "m-refuses", messages: [{ role: "user", content: "x" }] };
    const anthropicBody = { model: "default/m-refuses", max_tokens: 64, messages: [{ role: "user", content: "x" }] };

    peer.failNext(1, { status: 400, message: "no such model" }, "m-refuses");
    const openAI = await send("/openai/v1/chat/completions", openAIBody);
    expect([openAI.status, ((await openAI.json()) as any).error]).toEqual([502, { message: `completion failed: ${refused}`, type: "server_error", param: null, code: null }]);

    peer.failNext(1, { status: 400, message: "no such model" }, "m-refuses");
    const streamed = await (await send("/openai/v1/chat/completions", { ...openAIBody, stream: true })).text();
    expect(streamed).toContain(JSON.stringify({ error: { message: `completion failed: ${refused}`, type: "server_error", param: null, code: null } }));

    peer.failNext(1, { status: 400, message: "no such model" }, "m-refuses");
    const anthropicAnswer = await send("/anthropic/v1/messages", anthropicBody);
    expect([anthropicAnswer.status, ((await anthropicAnswer.json()) as any).error.message]).toEqual([502, `completion failed: ${refused}`]);

    peer.failNext(1, { status: 400, message: "no such model" }, "m-refuses");
    const anthropicStream = await (await send("/anthropic/v1/messages", { ...anthropicBody, stream: true })).text();
    expect(anthropicStream).toContain(JSON.stringify({ type: "error", error: { type: "api_error", message: `completion failed: ${refused}` } }));
  });

  it("answers Anthropic messages with x-api-key or Bearer, and server-side tools", async () => {
    peer.script("c-tools", [{ toolCalls: [{ name: "code_exec", arguments: { language: "python", code: "print(6*7)" } }] }, { text: "It is 42." }]);
    const message = await anthropic.messages.create({ model: "claude/c-tools", max_tokens: 200, system: "Use tools.", messages: [{ role: "user", content: "6*7?" }] });
    expect(message).toMatchObject({ type: "message", role: "assistant", stop_reason: "end_turn", content: [{ type: "text", text: "It is 42." }] });
    expect(message.id).toMatch(/^msg_/);
    const toolResult = (requestsFor("c-tools")[1].body.messages as any[]).at(-1).content[0];
    expect(toolResult.type).toBe("tool_result");
    expect(JSON.parse(toolResult.content)).toEqual({ output: "42\n", exit_code: 0 });
    const bearer = new Anthropic({ authToken: orka.token, apiKey: null, baseURL: `${orka.url}/anthropic`, maxRetries: 0 });
    peer.script("c-plain", [{ text: "plain" }]);
    expect((await bearer.messages.create({ model: "claude/c-plain", max_tokens: 50, messages: [{ role: "user", content: "x" }] })).content).toEqual([{ type: "text", text: "plain" }]);
  });

  it("streams Anthropic events in order across two rounds", async () => {
    peer.script("c-stream", [{ toolCalls: [{ name: "file_write", arguments: { path: "a.txt", content: "x" } }] }, { text: "Wrote the file." }]);
    const stream = anthropic.messages.stream({ model: "claude/c-stream", max_tokens: 100, messages: [{ role: "user", content: "write" }] });
    const events: string[] = [];
    stream.on("streamEvent", (event) => events.push(event.type));
    const final = await stream.finalMessage();
    expect(final.content).toHaveLength(1);
    expect(final.content[0]).toMatchObject({ type: "text", text: "Wrote the file." });
    expect(events[0]).toBe("message_start");
    expect(events.slice(-2)).toEqual(["message_delta", "message_stop"]);
    expect(events.filter((e) => e === "content_block_start")).toHaveLength(1);
  });

  it("passes Anthropic tool_use back with X-Orka-Tools: disabled, and refuses bad requests in Anthropic's shape", async () => {
    peer.script("c-pass", [{ toolCalls: [{ name: "lookup", arguments: { q: "y" } }] }]);
    const message = await anthropic.messages.create(
      { model: "claude/c-pass", max_tokens: 100, messages: [{ role: "user", content: "x" }], tools: [{ name: "lookup", input_schema: { type: "object" } }] },
      { headers: { "X-Orka-Tools": "disabled" } },
    );
    expect(message.stop_reason).toBe("tool_use");
    expect(message.content[0]).toMatchObject({ type: "tool_use", name: "lookup", input: { q: "y" } });
    const missing = await fetch(`${orka.url}/anthropic/v1/messages`, {
      method: "POST",
      headers: { "x-api-key": orka.token, "content-type": "application/json" },
      body: JSON.stringify({ model: "claude/c-pass", messages: [{ role: "user", content: "x" }] }),
    });
    expect([missing.status, await missing.json()]).toEqual([400, { type: "error", error: { type: "invalid_request_error", message: "max_tokens: max_tokens is required" } }]);
    await expect(new Anthropic({ apiKey: "bad", baseURL: `${orka.url}/anthropic`, maxRetries: 0 }).messages.create({ model: "x", max_tokens: 5, messages: [{ role: "user", content: "x" }] })).rejects.toMatchObject({ status: 401 });
  });

  const rawStream = (path: string, body: unknown, signal?: AbortSignal) =>
    fetch(`${orka.url}${path}`, { method: "POST", headers: { authorization: `Bearer ${orka.token}`, "content-type": "application/json" }, body: JSON.stringify(body), signal }).then((r) => r.text());

  it("refuses a client's own tools in tool mode with a 400 that names X-Orka-Tools: disabled", async () => {
    const tools = [{ type: "function" as const, function: { name: "client_side", parameters: { type: "object" } } }];
    for (const stream of [false, true]) {
      const refused = openai.chat.completions.create({ model: "m-refused-tools", messages: [{ role: "user", content: "x" }], tools, stream });
      await expect(refused).rejects.toBeInstanceOf(OpenAI.BadRequestError);
      await expect(refused).rejects.toMatchObject({ status: 400, param: "tools", message: expect.stringContaining("send the header X-Orka-Tools: disabled") });
      const claude = anthropic.messages.create({ model: "claude/c-refused-tools", max_tokens: 50, messages: [{ role: "user", content: "x" }], tools: [{ name: "client_side", input_schema: { type: "object" } }], stream });
      await expect(claude).rejects.toBeInstanceOf(Anthropic.BadRequestError);
      await expect(claude).rejects.toMatchObject({ status: 400, message: expect.stringContaining("X-Orka-Tools: disabled") });
    }
    expect(requestsFor("m-refused-tools")).toHaveLength(0);
    expect(requestsFor("c-refused-tools")).toHaveLength(0);
  });

  it("refuses response_format and image parts with a 400 instead of dropping them", async () => {
    const user = (content: any) => [{ role: "user" as const, content }];
    await expect(openai.chat.completions.create({ model: "m-format", messages: user("x"), response_format: { type: "json_object" } })).rejects.toMatchObject({
      status: 400,
      param: "response_format",
      message: expect.stringContaining("only {type: text} is supported"),
    });
    const image = [{ type: "text", text: "what is this?" }, { type: "image_url", image_url: { url: "data:image/png;base64,iVBORw0KGgo=" } }];
    await expect(openai.chat.completions.create({ model: "m-format", messages: user(image) })).rejects.toMatchObject({
      status: 400,
      param: "messages.0.content.1",
      message: expect.stringContaining("only text content parts are supported"),
    });
    const claudeImage = [{ type: "image", source: { type: "base64", media_type: "image/png", data: "iVBORw0KGgo=" } }, { type: "text", text: "what is this?" }];
    await expect(anthropic.messages.create({ model: "claude/c-format", max_tokens: 50, messages: user(claudeImage) })).rejects.toMatchObject({
      status: 400,
      message: expect.stringContaining("only text content blocks are supported"),
    });
    expect(requestsFor("m-format")).toHaveLength(0);
    expect(requestsFor("c-format")).toHaveLength(0);
    peer.script("m-text-format", [{ text: "plain text" }]);
    const plain = await openai.chat.completions.create({ model: "m-text-format", messages: user("x"), response_format: { type: "text" } });
    expect(plain.choices[0].message.content).toBe("plain text");
  });

  it("refuses Anthropic content blocks it does not read with a 400, wherever they are, instead of dropping them", async () => {
    const cases: { where: string; request: Record<string, unknown> }[] = [
      { where: "thinking", request: { messages: [{ role: "user", content: "x" }, { role: "assistant", content: [{ type: "thinking", thinking: "hmm", signature: "s" }, { type: "text", text: "y" }] }, { role: "user", content: "z" }] } },
      { where: "search result", request: { messages: [{ role: "user", content: [{ type: "search_result", source: "s", title: "t", content: [] }, { type: "text", text: "x" }] }] } },
      { where: "image in a tool result", request: { messages: [{ role: "user", content: [{ type: "tool_result", tool_use_id: "t1", content: [{ type: "image", source: { type: "base64", media_type: "image/png", data: "iVBORw0KGgo=" } }] }] }] } },
      { where: "system", request: { system: [{ type: "document", text: "x" }], messages: [{ role: "user", content: "x" }] } },
    ];
    for (const { where, request } of cases) {
      const refused = await fetch(`${orka.url}/anthropic/v1/messages`, {
        method: "POST",
        headers: { "x-api-key": orka.token, "content-type": "application/json", "x-orka-tools": "disabled" },
        body: JSON.stringify({ model: "claude/c-blocks", max_tokens: 50, ...request }),
      });
      expect(refused.status, where).toBe(400);
      expect(((await refused.json()) as { error: { message: string } }).error.message, where).toContain("only text content blocks are supported, with tool_use and tool_result in a conversation");
    }
    expect(requestsFor("c-blocks")).toHaveLength(0);
  });

  it("refuses as a model an Agent whose Provider is in another namespace, naming the field, rather than using a local namesake", async () => {
    const agent = { metadata: { name: "elsewhere" }, spec: { providerRef: { name: "claude", namespace: "other-team" }, model: { name: "c-elsewhere" } } };
    expect((await orka.api("POST", "/api/v1/agents", agent)).status).toBe(201);
    await expect(openai.chat.completions.create({ model: "elsewhere", messages: [{ role: "user", content: "x" }] })).rejects.toMatchObject({
      status: 400,
      param: "spec.providerRef.namespace",
      message: expect.stringContaining('Agent "elsewhere" uses a Provider in namespace "other-team" (spec.providerRef.namespace)'),
    });
    await expect(anthropic.messages.create({ model: "elsewhere", max_tokens: 50, messages: [{ role: "user", content: "x" }] })).rejects.toMatchObject({ status: 400 });
    expect(requestsFor("c-elsewhere")).toHaveLength(0);
    expect((await openai.models.list()).data.map((m) => m.id)).not.toContain("elsewhere");
  });

  it("keeps retry notices and tool progress out of streamed answers, as SSE comments", async () => {
    peer.script("m-noisy", [{ toolCalls: [{ name: "web_fetch", arguments: { url: pageURL } }] }, { text: "Only the answer." }]);
    peer.failNext(1, { status: 500, retryAfterSeconds: 0 }, "m-noisy");
    let text = "";
    for await (const chunk of await openai.chat.completions.create({ model: "m-noisy", messages: [{ role: "user", content: "go" }], stream: true })) text += chunk.choices[0]?.delta.content ?? "";
    expect(text).toBe("Only the answer.");

    peer.script("m-noisy-raw", [{ toolCalls: [{ name: "web_fetch", arguments: { url: pageURL } }] }, { text: "Only the answer." }]);
    peer.failNext(1, { status: 500, retryAfterSeconds: 0 }, "m-noisy-raw");
    const raw = await rawStream("/openai/v1/chat/completions", { model: "m-noisy-raw", messages: [{ role: "user", content: "go" }], stream: true });
    expect(raw).toMatch(/^: default: provider returned HTTP 500: injected HTTP 500, retry 1 in \d+ ms$/m);
    expect(raw).toContain("\n: [Tool web_fetch completed]\n");

    peer.script("c-noisy", [{ toolCalls: [{ name: "file_write", arguments: { path: "n.txt", content: "x" } }] }, { text: "Only the answer." }]);
    peer.failNext(1, { status: 529, retryAfterSeconds: 0 }, "c-noisy");
    const final = await anthropic.messages.stream({ model: "claude/c-noisy", max_tokens: 100, messages: [{ role: "user", content: "write" }] }).finalMessage();
    expect(final.content).toHaveLength(1);
    expect(final.content[0]).toMatchObject({ type: "text", text: "Only the answer." });
  });

  it("validates a streaming request before the stream starts, so the SDKs raise NotFound and BadRequest", async () => {
    const openaiStream = openai.chat.completions.create({ model: "nobody/x", messages: [{ role: "user", content: "x" }], stream: true });
    await expect(openaiStream).rejects.toBeInstanceOf(OpenAI.NotFoundError);
    const claudeStream = anthropic.messages.stream({ model: "nobody/x", max_tokens: 50, messages: [{ role: "user", content: "x" }] });
    await expect(claudeStream.finalMessage()).rejects.toBeInstanceOf(Anthropic.NotFoundError);
    const raw = await rawStream("/anthropic/v1/messages", { model: "nobody/x", max_tokens: 50, messages: [{ role: "user", content: "x" }], stream: true });
    expect(JSON.parse(raw)).toMatchObject({ type: "error", error: { type: "not_found_error" } });
  });

  it("reports the real input_tokens when streaming Anthropic, as without streaming", async () => {
    const turns = [{ toolCalls: [{ name: "file_write", arguments: { path: "u.txt", content: "x" } }] }, { text: "counted" }];
    peer.script("c-usage", turns);
    const plain = await anthropic.messages.create({ model: "claude/c-usage", max_tokens: 100, messages: [{ role: "user", content: "x" }] });
    const streamed = await anthropic.messages.stream({ model: "claude/c-usage", max_tokens: 100, messages: [{ role: "user", content: "x" }] }).finalMessage();
    expect(plain.usage.input_tokens).toBe(20);
    expect(streamed.usage).toMatchObject({ input_tokens: plain.usage.input_tokens, output_tokens: plain.usage.output_tokens });
  });

  it("lists the Agents that work as model names", async () => {
    const agents = [
      { metadata: { name: "helper" }, spec: { providerRef: { name: "claude" }, model: { name: "c-helper" }, systemPrompt: { inline: "You help." } } },
      { metadata: { name: "stray" }, spec: { providerRef: { name: "no-such-provider" } } },
    ];
    for (const agent of agents) expect((await orka.api("POST", "/api/v1/agents", agent)).status).toBe(201);
    const ids = (await openai.models.list()).data.map((m) => m.id);
    expect(ids).toContain("helper");
    expect(ids).not.toContain("stray");
    expect((await anthropic.models.list()).data.map((m) => m.id)).toContain("helper");
    peer.script("c-helper", [{ text: "helped" }]);
    expect((await openai.chat.completions.create({ model: "helper", messages: [{ role: "user", content: "x" }] })).choices[0].message.content).toBe("helped");
    expect(requestsFor("c-helper")[0].body.system).toBe("You help.");
  });

  it("runs a request with server-side tools as an attempt of the runner, removed when it ends, and a pass-through as none", async () => {
    await until("earlier attempts are gone", () => compatAttempts().length === 0);
    const during: string[][] = [];
    peer.script("m-runner", [
      () => {
        during.push(compatAttempts());
        return { toolCalls: [{ name: "file_write", arguments: { path: "where.txt", content: "x" } }] };
      },
      () => {
        during.push(compatAttempts().filter((name) => existsSync(join(workDir, name, "workspace", "where.txt"))));
        return { text: "written" };
      },
    ]);
    const completion = await openai.chat.completions.create({ model: "m-runner", messages: [{ role: "user", content: "write" }] });
    expect(completion.choices[0].message.content).toBe("written");
    expect(during[0]).toHaveLength(1);
    expect(during[1]).toEqual(during[0]);
    await until("the attempt's directories are removed", () => compatAttempts().length === 0);

    let duringPassThrough: string[] | undefined;
    peer.script("m-runner-pass", [
      () => {
        duringPassThrough = compatAttempts();
        return { text: "direct" };
      },
    ]);
    const direct = await openai.chat.completions.create({ model: "m-runner-pass", messages: [{ role: "user", content: "x" }] }, { headers: { "X-Orka-Tools": "disabled" } });
    expect(direct.choices[0].message.content).toBe("direct");
    expect(duringPassThrough).toEqual([]);
  });

  it("kills the attempt when the client leaves, and removes its directories", async () => {
    await until("earlier attempts are gone", () => compatAttempts().length === 0);
    peer.script("m-leave", [{ hang: true }]);
    const client = new AbortController();
    const request = rawStream("/openai/v1/chat/completions", { model: "m-leave", messages: [{ role: "user", content: "x" }], stream: true }, client.signal).catch(() => "left");
    await until("the model is asked", () => requestsFor("m-leave").length === 1);
    expect(compatAttempts()).toHaveLength(1);
    client.abort();
    expect(await request).toBe("left");
    // The model call would hang for minutes: only a killed attempt ends this soon.
    await until("the attempt is killed and its directories removed", () => compatAttempts().length === 0);
  });

  it("refuses a request with server-side tools past ORKA_WORKER_SLOTS running ones with a 429 before any stream starts", async () => {
    await until("earlier attempts are gone", () => compatAttempts().length === 0);
    peer.script("m-busy", [{ hang: true }]);
    const client = new AbortController();
    const busy = Array.from({ length: 4 }, () => rawStream("/openai/v1/chat/completions", { model: "m-busy", messages: [{ role: "user", content: "x" }], stream: true }, client.signal).catch(() => "left"));
    try {
      await until("four requests run", () => requestsFor("m-busy").length === 4);
      for (const stream of [false, true]) {
        const refused = openai.chat.completions.create({ model: "m-busy", messages: [{ role: "user", content: "x" }], stream });
        await expect(refused).rejects.toMatchObject({ status: 429, message: expect.stringContaining("ORKA_WORKER_SLOTS") });
      }
      peer.script("m-plain-while-busy", [{ text: "still here" }]);
      const passThrough = await openai.chat.completions.create({ model: "m-plain-while-busy", messages: [{ role: "user", content: "x" }] }, { headers: { "X-Orka-Tools": "disabled" } });
      expect(passThrough.choices[0].message.content).toBe("still here");
    } finally {
      client.abort();
      await Promise.all(busy);
    }
    await until("the busy attempts are gone", () => compatAttempts().length === 0);
  });

  it("ends a left request's attempt at once even inside a tool call that hangs, without killing the shared worker process", async () => {
    await until("earlier attempts are gone", () => compatAttempts().length === 0);
    const silent = http.createServer(() => undefined);
    await new Promise<void>((r) => silent.listen(0, "127.0.0.1", r));
    try {
      const silentURL = `http://127.0.0.1:${(silent.address() as AddressInfo).port}/never`;
      peer.script("m-hang-fetch", [{ toolCalls: [{ name: "web_fetch", arguments: { url: silentURL } }] }, { text: "never" }]);
      const workers = orka.workerPids();
      const client = new AbortController();
      let asked = false;
      silent.on("request", () => (asked = true));
      const request = rawStream("/openai/v1/chat/completions", { model: "m-hang-fetch", messages: [{ role: "user", content: "x" }], stream: true }, client.signal).catch(() => "left");
      await until("web_fetch is waiting on the silent server", () => asked);
      client.abort();
      expect(await request).toBe("left");
      // The worker process kills a whole process that holds on to a stopped attempt for 5 s: this must end well before.
      const left = Date.now();
      for (let i = 0; i < 80 && compatAttempts().length > 0; i++) await new Promise((r) => setTimeout(r, 25));
      expect(compatAttempts()).toEqual([]);
      expect(Date.now() - left).toBeLessThan(2_500);
      expect(orka.workerPids()).toEqual(workers);
    } finally {
      silent.closeAllConnections();
      silent.close();
    }
  });
});
