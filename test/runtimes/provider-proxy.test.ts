import Anthropic from "@anthropic-ai/sdk";
import OpenAI from "openai";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { ModelEndpoint } from "../../src/providers/index.ts";
import { startProviderProxy, type ProviderProxy } from "../../src/runtimes/provider-proxy.ts";
import { startLlmPeer, type LlmPeer } from "../peers/llm-server.ts";

const PROVIDER_KEY = "sk-ant-provider-key-abcdefghijklmnop";
const MODEL = "pinned-model";

describe("provider proxy", () => {
  let peer: LlmPeer;
  let anthropicProxy: ProviderProxy;
  let responsesProxy: ProviderProxy;
  const endpoint = (type: ModelEndpoint["type"], baseURL: string): ModelEndpoint => ({ name: "upstream", type, model: MODEL, baseURL, apiKey: PROVIDER_KEY });

  beforeAll(async () => {
    peer = await startLlmPeer();
    anthropicProxy = await startProviderProxy({ endpoint: endpoint("anthropic", peer.url), wire: "anthropic-messages" });
    responsesProxy = await startProviderProxy({ endpoint: endpoint("openai", `${peer.url}/v1`), wire: "openai-responses" });
  });
  afterAll(async () => {
    await anthropicProxy.close();
    await responsesProxy.close();
    await peer.close();
  });

  const post = (proxy: ProviderProxy, path: string, body: unknown, headers: Record<string, string> = { "x-api-key": proxy.token }) =>
    fetch(`${proxy.baseURL}${path}`, { method: "POST", headers: { "content-type": "application/json", ...headers }, body: typeof body === "string" ? body : JSON.stringify(body) });

  it("streams an Anthropic answer through unchanged, with the session token in, the Provider key out", async () => {
    peer.script(MODEL, [{ text: "streamed through the proxy" }]);
    const before = peer.requests.length;
    const client = new Anthropic({ authToken: anthropicProxy.token, apiKey: null, baseURL: anthropicProxy.baseURL });
    const message = await client.messages.stream({ model: MODEL, max_tokens: 100, messages: [{ role: "user", content: "hi" }] }).finalMessage();
    expect(message.content[0]).toMatchObject({ type: "text", text: "streamed through the proxy" });
    const upstream = peer.requests.slice(before);
    expect(upstream).toHaveLength(1);
    expect(upstream[0].headers["x-api-key"]).toBe(PROVIDER_KEY);
    expect(upstream[0].headers.authorization).toBeUndefined();
    expect(upstream[0].headers["anthropic-version"]).toBeDefined();
  });

  it("serves the OpenAI Responses API under /v1 with the key as a bearer", async () => {
    peer.script(MODEL, [{ text: "responses through the proxy" }]);
    const before = peer.requests.length;
    const client = new OpenAI({ apiKey: responsesProxy.token, baseURL: responsesProxy.baseURL });
    const response = await client.responses.create({ model: MODEL, input: "hi" });
    expect(response.output_text).toBe("responses through the proxy");
    expect(peer.requests.slice(before).map((r) => [r.path, r.headers.authorization])).toEqual([["/v1/responses", `Bearer ${PROVIDER_KEY}`]]);
  });

  it("refuses a missing or wrong token with 401 and forwards nothing", async () => {
    const before = peer.requests.length;
    const body = { model: MODEL, max_tokens: 10, messages: [] };
    expect((await post(anthropicProxy, "/v1/messages", body, {})).status).toBe(401);
    expect((await post(anthropicProxy, "/v1/messages", body, { "x-api-key": `${anthropicProxy.token}x` })).status).toBe(401);
    // The Provider's own key is not a session token either.
    expect((await post(anthropicProxy, "/v1/messages", body, { authorization: `Bearer ${PROVIDER_KEY}` })).status).toBe(401);
    expect(peer.requests.length).toBe(before);
  });

  it("refuses another model with 403 naming the pinned one", async () => {
    const before = peer.requests.length;
    const answer = await post(anthropicProxy, "/v1/messages", { model: "claude-haiku-4-5", max_tokens: 10, messages: [] });
    expect(answer.status).toBe(403);
    expect(((await answer.json()) as { error: { message: string } }).error.message).toBe('this session may use model "pinned-model" only, not "claude-haiku-4-5"');
    expect(peer.requests.length).toBe(before);
  });

  it("answers 404 outside the wire's paths, and 400 for a body that is not JSON with a model", async () => {
    const before = peer.requests.length;
    expect((await post(anthropicProxy, "/v1/complete", { model: MODEL })).status).toBe(404);
    expect((await post(responsesProxy, "/chat/completions", { model: MODEL }, { authorization: `Bearer ${responsesProxy.token}` })).status).toBe(404);
    expect((await fetch(`${anthropicProxy.baseURL}/v1/messages`, { headers: { "x-api-key": anthropicProxy.token } })).status).toBe(404);
    expect((await post(anthropicProxy, "/v1/messages", "not json")).status).toBe(400);
    expect((await post(anthropicProxy, "/v1/messages", [MODEL])).status).toBe(400);
    expect(peer.requests.length).toBe(before);
  });

  it("refuses a body over 8 MiB with 413", async () => {
    const answer = await post(anthropicProxy, "/v1/messages", { model: MODEL, padding: "x".repeat(8 * 1024 * 1024) });
    expect(answer.status).toBe(413);
  });

  it("scrubs the Provider key from an upstream error that quotes it", async () => {
    peer.failNext(1, { status: 401, echoCredential: true });
    const answer = await post(anthropicProxy, "/v1/messages", { model: MODEL, max_tokens: 10, messages: [{ role: "user", content: "hi" }] });
    expect(answer.status).toBe(401);
    const text = await answer.text();
    expect(text).toContain("Incorrect API key provided");
    expect(text).not.toContain(PROVIDER_KEY);
  });

  it("answers 502 without the key when the Provider cannot be reached", async () => {
    const dead = await startProviderProxy({ endpoint: endpoint("anthropic", "http://127.0.0.1:1"), wire: "anthropic-messages" });
    try {
      const answer = await post(dead, "/v1/messages", { model: MODEL });
      expect(answer.status).toBe(502);
      expect(await answer.text()).not.toContain(PROVIDER_KEY);
    } finally {
      await dead.close();
    }
  });

  it("will not start for a Provider of another wire, or without a key", async () => {
    await expect(startProviderProxy({ endpoint: endpoint("openai", peer.url), wire: "anthropic-messages" })).rejects.toThrow(/use a Provider of type anthropic/);
    await expect(startProviderProxy({ endpoint: { ...endpoint("anthropic", peer.url), apiKey: undefined }, wire: "anthropic-messages" })).rejects.toThrow(/API key for upstream not found/);
  });
});
