import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { anthropicModel } from "../../src/providers/anthropic.ts";
import { ModelApiError, type ModelClient } from "../../src/providers/model.ts";
import { openAIModel } from "../../src/providers/openai.ts";
import { startLlmPeer, type LlmPeer } from "../peers/llm-server.ts";

const API_KEY = "sk-peer-0000000000000000000";

// Node's own fetch would wait 300 s for these headers; the SDKs must wait as long as the call's
// deadline (plus a little), and no longer, whatever that deadline is.
describe("vendor SDK transport", () => {
  let peer: LlmPeer;
  beforeAll(async () => {
    peer = await startLlmPeer();
    peer.script("m-silent", [{ hang: true }]);
  });
  afterAll(() => peer.close());

  const clients: [string, () => ModelClient][] = [
    ["openai", () => openAIModel({ apiKey: API_KEY, baseURL: `${peer.url}/v1`, timeoutMs: 100 })],
    ["anthropic", () => anthropicModel({ apiKey: API_KEY, baseURL: peer.url, timeoutMs: 100 })],
  ];
  it.each(clients)("gives the %s SDK a transport that waits just past the deadline, not Node's 300 s, and reports its cut as a provider error worth retrying", async (_name, client) => {
    const started = Date.now();
    const failure = await client().complete({ model: "m-silent", messages: [{ role: "user", content: "hi" }], tools: [], maxTokens: 10 }).catch((err: unknown) => err);
    expect(failure).toBeInstanceOf(ModelApiError);
    expect(failure).toMatchObject({ retryable: true, message: expect.stringMatching(/^provider connection failed: (.+ \(UND_ERR_HEADERS_TIMEOUT\)|Request timed out\.)$/) });
    expect(Date.now() - started).toBeGreaterThanOrEqual(5_000);
    expect(Date.now() - started).toBeLessThan(15_000);
  });
});
