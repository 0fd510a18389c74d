import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from "vitest";
import { openAIModel } from "../../src/providers/openai.ts";
import { startLlmPeer, type LlmPeer } from "../peers/llm-server.ts";

// Attempts that call one endpoint share an SDK client in a worker process; each request must still carry
// its own attempt's key, in the header its API expects, and never another attempt's.
describe("OpenAI-compatible calls sharing an SDK client", () => {
  let peer: LlmPeer;
  beforeAll(async () => {
    peer = await startLlmPeer();
    for (const model of ["m-first", "m-second", "m-azure-a", "m-azure-b", "m-env", "m-azure-env"]) peer.script(model, [{ text: `answer of ${model}` }]);
  });
  afterAll(() => peer.close());
  afterEach(() => vi.unstubAllEnvs());

  const ask = (client: ReturnType<typeof openAIModel>, model: string) => client.complete({ model, messages: [{ role: "user", content: "hi" }], tools: [], maxTokens: 10 });
  const heardFor = (model: string) => peer.requests.filter((r) => (r.body as { model?: string }).model === model).map((r) => ({ authorization: r.headers.authorization, apiKey: r.headers["api-key"] }));

  it("sends each caller's own key, interleaved, as a bearer token", async () => {
    const first = openAIModel({ apiKey: "sk-first-attempt", baseURL: `${peer.url}/v1`, timeoutMs: 10_000 });
    const second = openAIModel({ apiKey: "sk-second-attempt", baseURL: `${peer.url}/v1`, timeoutMs: 10_000 });
    const answers = await Promise.all([ask(first, "m-first"), ask(second, "m-second")]);
    expect(answers.map((a) => a.text)).toEqual(["answer of m-first", "answer of m-second"]);
    expect(heardFor("m-first")).toEqual([{ authorization: "Bearer sk-first-attempt", apiKey: undefined }]);
    expect(heardFor("m-second")).toEqual([{ authorization: "Bearer sk-second-attempt", apiKey: undefined }]);
  });

  it("sends each Azure caller's key in api-key, with no bearer token", async () => {
    const deployment = { deployment: "shared" };
    const first = openAIModel({ apiKey: "azure-key-a", baseURL: peer.url, azure: deployment, timeoutMs: 10_000 });
    const second = openAIModel({ apiKey: "azure-key-b", baseURL: peer.url, azure: deployment, timeoutMs: 10_000 });
    await Promise.all([ask(first, "m-azure-a"), ask(second, "m-azure-b")]);
    expect(heardFor("m-azure-a")).toEqual([{ authorization: undefined, apiKey: "azure-key-a" }]);
    expect(heardFor("m-azure-b")).toEqual([{ authorization: undefined, apiKey: "azure-key-b" }]);
  });

  it("never sends a key from the environment, in place of the caller's or beside it", async () => {
    vi.stubEnv("OPENAI_API_KEY", "sk-from-the-environment");
    vi.stubEnv("OPENAI_CUSTOM_HEADERS", "api-key: sk-custom\nAuthorization: Bearer sk-custom");
    // A deadline no other test uses: a client made while the variable is set.
    const client = openAIModel({ apiKey: "sk-the-callers", baseURL: `${peer.url}/v1`, timeoutMs: 10_001 });
    await ask(client, "m-env");
    expect(heardFor("m-env")).toEqual([{ authorization: "Bearer sk-the-callers", apiKey: undefined }]);
    const azure = openAIModel({ apiKey: "azure-the-callers", baseURL: peer.url, azure: { deployment: "shared" }, timeoutMs: 10_001 });
    await ask(azure, "m-azure-env");
    expect(heardFor("m-azure-env")).toEqual([{ authorization: undefined, apiKey: "azure-the-callers" }]);
  });
});
