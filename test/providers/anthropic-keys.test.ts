import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from "vitest";
import { anthropicModel } from "../../src/providers/anthropic.ts";
import { startLlmPeer, type LlmPeer } from "../peers/llm-server.ts";

// Attempts that call one endpoint share an SDK client in a worker process; each request must still carry
// its own attempt's key, and never another attempt's or one from the environment.
describe("Anthropic calls sharing an SDK client", () => {
  let peer: LlmPeer;
  beforeAll(async () => {
    peer = await startLlmPeer();
    for (const model of ["c-first", "c-second", "c-env"]) peer.script(model, [{ text: `answer of ${model}` }]);
  });
  afterAll(() => peer.close());
  afterEach(() => vi.unstubAllEnvs());

  const ask = (client: ReturnType<typeof anthropicModel>, model: string) => client.complete({ model, messages: [{ role: "user", content: "hi" }], tools: [], maxTokens: 10 });
  const heardFor = (model: string) => peer.requests.filter((r) => (r.body as { model?: string }).model === model).map((r) => ({ authorization: r.headers.authorization, apiKey: r.headers["x-api-key"] }));

  it("sends each caller's own key, interleaved, as a bearer token", async () => {
    const first = anthropicModel({ apiKey: "sk-ant-first-attempt", baseURL: peer.url, timeoutMs: 10_000 });
    const second = anthropicModel({ apiKey: "sk-ant-second-attempt", baseURL: `${peer.url}/v1`, timeoutMs: 10_000 });
    const answers = await Promise.all([ask(first, "c-first"), ask(second, "c-second"), ask(first, "c-first")]);
    expect(answers.map((a) => a.text)).toEqual(["answer of c-first", "answer of c-second", "answer of c-first"]);
    expect(heardFor("c-first")).toEqual([
      { authorization: "Bearer sk-ant-first-attempt", apiKey: undefined },
      { authorization: "Bearer sk-ant-first-attempt", apiKey: undefined },
    ]);
    expect(heardFor("c-second")).toEqual([{ authorization: "Bearer sk-ant-second-attempt", apiKey: undefined }]);
  });

  it("never sends a key or a token from the environment, in place of the caller's or beside it", async () => {
    vi.stubEnv("ANTHROPIC_API_KEY", "sk-ant-from-the-environment");
    vi.stubEnv("ANTHROPIC_AUTH_TOKEN", "token-from-the-environment");
    vi.stubEnv("ANTHROPIC_CUSTOM_HEADERS", "x-api-key: sk-ant-custom\nAuthorization: Bearer sk-ant-custom");
    // A deadline no other test uses: a client made while the variables are set.
    const client = anthropicModel({ apiKey: "sk-ant-the-callers", baseURL: peer.url, timeoutMs: 10_001 });
    await ask(client, "c-env");
    expect(heardFor("c-env")).toEqual([{ authorization: "Bearer sk-ant-the-callers", apiKey: undefined }]);
  });
});
