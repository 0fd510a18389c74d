import http from "node:http";
import type { AddressInfo } from "node:net";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startLlmPeer, type LlmPeer } from "../peers/llm-server.ts";
import { startOrkaServer, type OrkaUnderTest } from "../helpers/orka-server.ts";

const MEMORY = ["recall_memory", "remember", "propose_memory", "search_transcript"];
const toolNames = (body: any): string[] =>
  (body.tools ?? []).map((t: any) => t.function?.name ?? t.name);

// The AI worker: the real providers (official SDKs) against the LLM peer, in both wire formats.
describe.each(["openai", "anthropic"] as const)("AI worker with the official provider SDKs over the %s wire format", (format) => {
  let orka: OrkaUnderTest;
  let peer: LlmPeer;
  let toolServer: http.Server;
  const toolCalls: { url: string; body: any; auth?: string }[] = [];
  let toolURL = "";

  beforeAll(async () => {
    peer = await startLlmPeer();
    toolServer = http.createServer((req, res) => {
      let raw = "";
      req.on("data", (c) => (raw += c));
      req.on("end", () => {
        if (req.method === "HEAD") return void res.writeHead(200).end(); // availability probes
        toolCalls.push({ url: req.url ?? "", body: raw ? JSON.parse(raw) : undefined, auth: req.headers.authorization });
        if (req.url?.startsWith("/fail")) {
          res.writeHead(502).end("upstream broke with key tool-secret-value-42");
          return;
        }
        res.writeHead(200, { "content-type": "application/json" }).end(JSON.stringify({ forecast: "sunny", city: req.url }));
      });
    });
    await new Promise<void>((r) => toolServer.listen(0, "127.0.0.1", r));
    toolURL = `http://127.0.0.1:${(toolServer.address() as AddressInfo).port}`;
    orka = await startOrkaServer({ ORKA_ALLOW_LOOPBACK_EGRESS: "true" }); // the Tool endpoint is on loopback
    const apply = await orka.cli(["apply", "-f", "-"], `
apiVersion: v1
kind: Secret
metadata: {name: model-key}
stringData: {api-key: sk-peer-key-000000000000000000}
---
apiVersion: v1
kind: Secret
metadata: {name: weather-key}
stringData: {token: tool-secret-value-42}
---
apiVersion: core.orka.ai/v1alpha1
kind: Provider
metadata: {name: peer}
spec: {type: ${format}, baseURL: "${peer.url}/v1", secretRef: {name: model-key}}
---
apiVersion: core.orka.ai/v1alpha1
kind: Provider
metadata: {name: backup}
spec: {type: ${format}, baseURL: "${peer.url}/v1", secretRef: {name: model-key}}
---
apiVersion: core.orka.ai/v1alpha1
kind: Tool
metadata: {name: weather}
spec:
  description: Weather for a city
  parameters: {type: object, properties: {city: {type: string}, days: {type: integer}}, required: [city]}
  http: {url: "${toolURL}/weather/{{city}}", method: POST, authSecretRef: {name: weather-key, key: token}}
---
apiVersion: core.orka.ai/v1alpha1
kind: Tool
metadata: {name: broken}
spec:
  description: Always fails
  http: {url: "${toolURL}/fail", authSecretRef: {name: weather-key, key: token}}
---
apiVersion: core.orka.ai/v1alpha1
kind: Tool
metadata: {name: hidden}
spec:
  description: Disabled on the agent
  http: {url: "${toolURL}/hidden"}
---
apiVersion: core.orka.ai/v1alpha1
kind: Agent
metadata: {name: plain}
spec:
  providerRef: {name: peer}
  model: {name: plain-model, fallbacks: [{providerRef: backup, model: backup-model}]}
  systemPrompt: {inline: You are helpful.}
  tools: [{name: weather}, {name: hidden, enabled: false}, {name: no-such-tool}]
`);
    expect(apply.code, apply.stderr).toBe(0);
  });
  afterAll(async () => {
    await orka.stop();
    await peer.close();
    toolServer.close();
  });

  const run = async (name: string, model: string, ai: Record<string, unknown> = {}) => {
    const created = await orka.api("POST", "/api/v1/tasks", { name, type: "ai", agentRef: "plain", prompt: `prompt of ${name}`, ai: { model, ...ai } });
    expect(created.status, JSON.stringify(created.body)).toBe(201);
    return orka.waitFor(name);
  };
  const requestsFor = (model: string) => peer.requests.filter((r) => r.body.model === model);

  it("runs the loop: tool calls in order, HTTP Tool with interpolated URL, body and auth, then the answer", async () => {
    peer.script("m-loop", [
      { toolCalls: [{ name: "weather", arguments: { city: "Oslo", days: 2 } }, { name: "weather", arguments: { city: "Rome" } }] },
      { text: "Oslo and Rome are sunny." },
    ]);
    const task = await run("loop", "m-loop");
    expect(task.status.phase).toBe("Succeeded");
    expect((await orka.api("GET", "/api/v1/tasks/loop/result")).body.result).toBe("Oslo and Rome are sunny.");
    const calls = toolCalls.filter((c) => c.url.startsWith("/weather"));
    expect(calls.map((c) => c.url)).toEqual(["/weather/Oslo", "/weather/Rome"]);
    expect(calls[0].body).toEqual({ days: 2 });
    expect(calls[0].auth).toBe("Bearer tool-secret-value-42");
    const second = requestsFor("m-loop")[1].body as any;
    const toolResults = format === "openai"
      ? second.messages.filter((m: any) => m.role === "tool").map((m: any) => m.content)
      : second.messages.at(-1).content.map((b: any) => b.content);
    expect(toolResults).toHaveLength(2);
    expect(JSON.parse(toolResults[0])).toEqual({ forecast: "sunny", city: "/weather/Oslo" });
    const system = format === "openai" ? second.messages[0].content : second.system;
    expect(system).toMatch(/^You are helpful\.\n\n## Memory proposals\n/);
  });

  it("offers exactly the selected tools: disabled and unknown entries are absent", async () => {
    peer.script("m-tools", [{ text: "ok" }]);
    await run("tools", "m-tools", { tools: ["broken"] });
    expect(toolNames(requestsFor("m-tools")[0].body)).toEqual(["weather", "broken", ...MEMORY]);
    const warnings = (await orka.api("GET", "/api/v1/tasks/tools/events?type=Warning")).body.events.map((e: any) => e.summary);
    expect(warnings).toContain('tool "no-such-tool" is neither a built-in tool nor a Tool in this namespace; skipped');
  });

  it("answers a call to an unlisted tool with the 'not enabled' text and goes on", async () => {
    peer.script("m-unlisted", [{ toolCalls: [{ name: "hidden", arguments: {} }] }, { text: "recovered" }]);
    const task = await run("unlisted", "m-unlisted");
    expect(task.status.phase).toBe("Succeeded");
    const body = requestsFor("m-unlisted")[1].body as any;
    expect(JSON.stringify(body.messages)).toContain('Error executing tool: tool \\"hidden\\" was not enabled for this task');
    expect(toolCalls.some((c) => c.url.startsWith("/hidden"))).toBe(false);
  });

  it("turns a tool's HTTP error into a redacted tool message, not a failed Task", async () => {
    peer.script("m-broken", [{ toolCalls: [{ name: "weather", arguments: {} }, { name: "broken", arguments: {} }] }, { text: "done anyway" }]);
    const task = await run("broken-tool", "m-broken", { tools: ["broken"] });
    expect(task.status.phase).toBe("Succeeded");
    const sent = JSON.stringify(requestsFor("m-broken")[1].body);
    expect(sent).toContain("invalid arguments: city:");
    expect(sent).toContain("tool returned HTTP 502: upstream broke with key [REDACTED]");
    expect(sent).not.toContain("tool-secret-value-42");
  });

  it("fails after two empty answers, nudging once without tools", async () => {
    peer.script("m-empty", [{ text: "" }, { text: "" }]);
    const task = await run("empty", "m-empty");
    expect(task.status.phase).toBe("Failed");
    expect(task.status.message).toContain("model returned an empty final response after one retry");
    const [first, second] = requestsFor("m-empty");
    expect(toolNames(first.body)).toEqual(["weather", ...MEMORY]);
    expect(toolNames(second.body)).toEqual([]);
  });

  it("stops a plain Agent at 10 tool turns: 'max iterations reached without completion'", async () => {
    peer.script("m-endless", Array.from({ length: 12 }, () => ({ toolCalls: [{ name: "weather", arguments: { city: "Loop" } }] })));
    const task = await run("endless", "m-endless");
    expect(task.status.phase).toBe("Failed");
    expect(task.status.message).toContain("max iterations reached without completion");
    expect(requestsFor("m-endless")).toHaveLength(10);
  });

  it("retries 429 and 5xx, then falls back to the next provider", async () => {
    peer.script("m-retry", [{ text: "after retries" }]);
    peer.failNext(2, { status: 429, retryAfterSeconds: 0 }, "m-retry");
    expect((await run("retry", "m-retry")).status.phase).toBe("Succeeded");
    expect(requestsFor("m-retry")).toHaveLength(3);

    peer.script("m-down", []);
    peer.script("backup-model", [{ text: "from the fallback" }]);
    peer.failNext(4, { status: 503 }, "m-down");
    expect((await run("fallback", "m-down")).status.phase).toBe("Succeeded");
    expect(requestsFor("m-down")).toHaveLength(4);
    expect((await orka.api("GET", "/api/v1/tasks/fallback/result")).body.result).toBe("from the fallback");
  });

  it("assembles the system prompt from skills then the prompt, and honours temperature and maxTokens", async () => {
    await orka.api("POST", "/api/v1/skills", { metadata: { name: "style" }, spec: { description: "House style", content: { inline: "Always answer in haiku." } } });
    await orka.api("POST", "/api/v1/agents", {
      metadata: { name: "poet" },
      spec: { providerRef: { name: "peer" }, model: { name: "m-poet", temperature: 0.3, maxTokens: 321 }, skills: [{ name: "style" }], systemPrompt: { inline: "You are a poet." } },
    });
    peer.script("m-poet", [{ text: "five seven five" }]);
    await orka.api("POST", "/api/v1/tasks", { name: "poem", type: "ai", agentRef: "poet", prompt: "a poem", ai: { maxTokens: 123 } });
    expect((await orka.waitFor("poem")).status.phase).toBe("Succeeded");
    const body = requestsFor("m-poet")[0].body as any;
    const system = format === "openai" ? body.messages[0].content : body.system;
    expect(system).toMatch(/^Always answer in haiku\.\n\nYou are a poet\.\n\n## Memory proposals/);
    expect(body.temperature).toBe(0.3);
    expect(body.max_tokens).toBe(123);
    expect(body.messages.at(-1)).toEqual({ role: "user", content: "a poem" });
  });

  it("uses the core file and code tools end to end, in one private workspace", async () => {
    await orka.api("POST", "/api/v1/agents", { metadata: { name: "coder" }, spec: { providerRef: { name: "peer" }, tools: [{ name: "file_write" }, { name: "code_exec" }, { name: "file_read" }] } });
    peer.script("m-coder", [
      { toolCalls: [{ name: "file_write", arguments: { path: "nums.txt", content: "3\n4\n5\n" } }] },
      { toolCalls: [{ name: "code_exec", arguments: { language: "python", code: "n = [int(x) for x in open('nums.txt')]\nopen('sum.txt', 'w').write(str(sum(n)))\nprint(sum(n))" } }] },
      { toolCalls: [{ name: "file_read", arguments: { path: "/workspace/sum.txt" } }, { name: "file_read", arguments: { path: "/etc/passwd" } }] },
      { text: "The sum is 12." },
    ]);
    await orka.api("POST", "/api/v1/tasks", { name: "coding", type: "ai", agentRef: "coder", prompt: "sum the numbers", ai: { model: "m-coder" } });
    expect((await orka.waitFor("coding")).status.phase).toBe("Succeeded");
    const requests = requestsFor("m-coder");
    expect(toolNames(requests[0].body)).toEqual(["file_write", "code_exec", "file_read", ...MEMORY]);
    const last = JSON.stringify(requests[3].body);
    expect(last).toContain("access denied: path outside allowed directories");
    const completed = (await orka.api("GET", "/api/v1/tasks/coding/events?type=ToolCallCompleted")).body.events.map((e: any) => e.content);
    expect(JSON.parse(completed[1])).toEqual({ output: "12\n", exit_code: 0 });
    expect(JSON.parse(completed[2])).toMatchObject({ content: "12", path: "/workspace/sum.txt" });
  });

  it("retries once with half the history when the context is too long, and fails on a second refusal", async () => {
    const tooLong = format === "openai" ? "This model's maximum context length is 8192 tokens" : "prompt is too long: 300000 tokens > 200000 maximum";
    peer.script("m-long", [{ toolCalls: [{ name: "weather", arguments: { city: "Oslo" } }] }, { text: "fits now" }]);
    peer.failNext(1, { status: 400, message: tooLong }, "m-long");
    // The first request fails, the same turn is asked again (shorter), then the loop goes on.
    expect((await run("long-context", "m-long")).status.phase).toBe("Succeeded");
    const truncated = (await orka.api("GET", "/api/v1/tasks/long-context/events?type=ContextTruncated")).body.events;
    expect(truncated).toHaveLength(1);
    expect(truncated[0].summary).toMatch(/^context too long: kept \d+ of \d+ messages$/);

    peer.script("m-longer", [{ text: "never" }]);
    peer.failNext(2, { status: 400, message: tooLong }, "m-longer");
    const failed = await run("too-long", "m-longer");
    expect(failed.status.phase).toBe("Failed");
    expect(requestsFor("m-longer")).toHaveLength(2);
  });

  it("keeps credentials a model pastes into tool arguments out of the ToolCallStarted event", async () => {
    const pasted = { city: "https://bob:hunter2-password@example.com/o/r", note: "ghp_0123456789abcdefghijklmnopqrstuv" };
    peer.script("m-paste", [{ toolCalls: [{ name: "weather", arguments: pasted }] }, { text: "done" }]);
    expect((await run("pasted", "m-paste")).status.phase).toBe("Succeeded");
    const started = (await orka.api("GET", "/api/v1/tasks/pasted/events?type=ToolCallStarted")).body.events.map((e: any) => e.content).join("\n");
    expect(started).toContain("example.com/o/r");
    expect(started).not.toContain("hunter2");
    expect(started).not.toContain("ghp_0123456789");
  });

  it("refuses an incomplete answer", async () => {
    peer.script("m-cut", [{ text: "half an ans", finish: format === "openai" ? "length" : "max_tokens" }]);
    const task = await run("cut", "m-cut");
    expect(task.status.message).toContain("model response was incomplete");
  });

  it("records the run as execution events and streams them, ending with stream_complete", async () => {
    const response = await fetch(`${orka.url}/api/v1/tasks/loop/stream`, { headers: { authorization: `Bearer ${orka.token}` } });
    const text = await response.text();
    const types = [...text.matchAll(/"type":"(\w+)"/g)].map((m) => m[1]);
    expect(types).toEqual(expect.arrayContaining(["WorkerStarted", "ModelRequestStarted", "ToolCallStarted", "ToolCallCompleted", "ResultSubmitted", "TaskSucceeded"]));
    expect(text).toMatch(/event: stream_complete\ndata: \{"lastSeq":\d+,"type":"Succeeded"\}/);
    expect(text).toMatch(/id: 1\nevent: execution_event/);
  });
});
