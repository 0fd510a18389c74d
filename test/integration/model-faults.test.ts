import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { OrkaUnderTest } from "../helpers/orka-server.ts";
import { startOrkaWithPeer } from "../helpers/orka-with-peer.ts";
import { toolResultsOf, type LlmPeer } from "../peers/llm-server.ts";

const API_KEY = "sk-peer-0000000000000000000";
const MODEL_TIMEOUT_MS = 400;

/** `{"a":{"a":…{}}}`, `depth` levels deep, as text: deeper than JSON.stringify can write. */
const nestedText = (depth: number) => `${'{"a":'.repeat(depth)}{}${"}".repeat(depth)}`;

// What a misbehaving model or provider does to an ai Task: bad tool calls, non-JSON replies, hung
// calls and HTTP errors, in both wire formats, through the real server and worker.
describe("model faults", () => {
  let orka: OrkaUnderTest;
  let peer: LlmPeer;
  let stop: () => Promise<void>;

  beforeAll(async () => {
    ({ orka, peer, stop } = await startOrkaWithPeer(
      `
apiVersion: core.orka.ai/v1alpha1
kind: Provider
metadata: {name: claude}
spec: {type: anthropic, baseURL: "PEER_URL", secretRef: {name: key}, timeout: 10s}
---
apiVersion: core.orka.ai/v1alpha1
kind: Provider
metadata: {name: patient}
spec: {type: openai, baseURL: "PEER_URL/v1", secretRef: {name: key}, timeout: 5s}
---
apiVersion: core.orka.ai/v1alpha1
kind: Agent
metadata: {name: writer}
spec: {providerRef: {name: peer}, model: {timeout: 10s}, tools: [{name: file_write}]}
---
# Only these two keep the short default deadline, so a loaded machine does not time out the others.
apiVersion: core.orka.ai/v1alpha1
kind: Agent
metadata: {name: hasty-writer}
spec: {providerRef: {name: peer}}
---
apiVersion: core.orka.ai/v1alpha1
kind: Agent
metadata: {name: claude-writer}
spec: {providerRef: {name: claude}, tools: [{name: file_write}]}
---
apiVersion: core.orka.ai/v1alpha1
kind: Agent
metadata: {name: with-fallback}
spec: {providerRef: {name: peer}, model: {name: m-hung, fallbacks: [{providerRef: claude, model: c-backup}]}}
---
apiVersion: core.orka.ai/v1alpha1
kind: Agent
metadata: {name: slow-but-allowed}
spec: {providerRef: {name: peer}, model: {name: m-slow-agent, timeout: 5s}}
---
apiVersion: core.orka.ai/v1alpha1
kind: Provider
metadata: {name: quoting}
spec:
  type: scripted
  scripted:
    turns:
      - toolCalls: [{name: file_write, arguments: {path: dollars.txt, content: "$& and $\`"}}]
      - toolCalls: [{name: file_read, arguments: {path: dollars.txt}}]
      - text: "read: {{toolResult}}"
---
apiVersion: core.orka.ai/v1alpha1
kind: Agent
metadata: {name: quoter}
spec: {providerRef: {name: quoting}, tools: [{name: file_write}, {name: file_read}]}
`,
      { ORKA_MODEL_TIMEOUT_MS: String(MODEL_TIMEOUT_MS) },
    ));
  });
  afterAll(() => stop());

  const run = async (name: string, agent: string, model?: string) => {
    const created = await orka.api("POST", "/api/v1/tasks", { name, type: "ai", agentRef: agent, prompt: `prompt of ${name}`, ...(model ? { ai: { model } } : {}) });
    expect(created.status, JSON.stringify(created.body)).toBe(201);
    return orka.waitFor(name);
  };
  const requestsFor = (model: string) => peer.requests.filter((r) => r.body.model === model);
  const events = async (task: string) => (await orka.api("GET", `/api/v1/tasks/${task}/events?limit=500`)).body.events as { type: string; summary: string; toolName?: string }[];

  it.each([
    ["openai", "writer"],
    ["anthropic", "claude-writer"],
  ])("answers a %s model's absurd tool calls with tool errors and goes on", async (format, agent) => {
    const model = `m-bad-calls-${format}`;
    const longName = "x".repeat(5000);
    const calls = [
      { name: longName, arguments: {} },
      { name: "file_write", arguments: {}, rawArguments: `{"path": "deep.txt", "content": "x", "extra": ${nestedText(5000)}}` },
      { name: "file_write", arguments: {}, rawArguments: nestedText(5000) },
      ...(format === "openai" ? [{ name: "file_write", arguments: {}, rawArguments: '{"path": "a.txt", "content": ' }] : []),
    ];
    peer.script(model, [{ toolCalls: calls }, (body) => ({ text: `saw ${toolResultsOf(body).length} results` })]);
    const task = await run(`bad-calls-${format}`, agent, model);
    expect(task.status.message).toBe("task completed successfully");
    const results = toolResultsOf(requestsFor(model)[1].body);
    expect(results).toHaveLength(calls.length);
    expect(results[0]).toMatch(/^Error executing tool: tool "x{10,}/);
    expect(results[0]).toContain("was not enabled for this task");
    expect(results[1]).toBe("Error executing tool: tool arguments are nested 5002 levels deep; at most 64 are allowed");
    expect(results[2]).toBe("Error executing tool: tool arguments are nested 5001 levels deep; at most 64 are allowed");
    if (format === "openai") expect(results[3]).toBe("Error executing tool: tool arguments are not valid JSON; send a JSON object");
    const recorded = await events(task.metadata.name);
    const rejected = recorded.find((e) => e.type === "ToolCallRejected")!;
    expect(rejected.summary.length).toBeLessThanOrEqual(4000);
    expect(rejected.toolName!.startsWith("xxxx")).toBe(true);
  });

  it.each([
    ["openai", "writer", "peer"],
    ["anthropic", "claude-writer", "claude"],
  ])("turns a %s provider's HTML reply into a provider error, retried like any other", async (format, agent, provider) => {
    const model = `m-html-${format}`;
    peer.script(model, [{ raw: { contentType: "text/html; charset=utf-8", body: `<html><body><h1>Welcome to nginx!</h1> key ${API_KEY}</body></html>` } }]);
    const task = await run(`html-${format}`, agent, model);
    expect(task.status.phase).toBe("Failed");
    expect(task.status.message).toBe(
      `model call to ${provider} (${format}, model ${model}) failed: provider returned HTTP 200 with a non-JSON body (text/html; charset=utf-8): <html><body><h1>Welcome to nginx!</h1> key [REDACTED]</body></html>`,
    );
    expect(requestsFor(model)).toHaveLength(4);
    const retried = (await events(task.metadata.name)).filter((e) => e.type === "ModelRequestRetried");
    expect(retried).toHaveLength(3);
  });

  it("says what failed in an ai Task's words: the model call, the provider, the HTTP status and its message, redacted", async () => {
    peer.script("m-500", [{ text: "never" }]);
    peer.failNext(4, { status: 500, message: `upstream exploded; it was sent Bearer ${API_KEY}` }, "m-500");
    const task = await run("http-500", "writer", "m-500");
    expect(task.status.phase).toBe("Failed");
    expect(task.status.message).toBe("model call to peer (openai, model m-500) failed: provider returned HTTP 500: upstream exploded; it was sent Bearer [REDACTED]");

    peer.script("c-400", [{ text: "never" }]);
    peer.failNext(1, { status: 400, message: "max_tokens: must be at most 8192" }, "c-400");
    const bad = await run("http-400", "claude-writer", "c-400");
    expect(bad.status.message).toBe("model call to claude (anthropic, model c-400) failed: provider returned HTTP 400: max_tokens: must be at most 8192");
  });

  it("redacts the API key before clipping a provider's message or body, so no part of a key across the cut is kept", async () => {
    peer.script("m-long-401", [{ text: "never" }]);
    peer.failNext(1, { status: 401, message: `${"x".repeat(1185)}${API_KEY}${"y".repeat(100)}` }, "m-long-401");
    const refused = await run("long-401", "writer", "m-long-401");
    expect(refused.status.message).toBe(`model call to peer (openai, model m-long-401) failed: provider returned HTTP 401: ${"x".repeat(1185)}[REDACTED]yyyy…`);

    peer.script("m-long-html", [{ raw: { contentType: "text/html", body: `${"x".repeat(280)}${API_KEY}${"y".repeat(100)}` } }]);
    const html = await run("long-html", "hasty-writer", "m-long-html");
    expect(html.status.message).toBe(`model call to peer (openai, model m-long-html) failed: provider returned HTTP 200 with a non-JSON body (text/html): ${"x".repeat(280)}[REDACTED]${"y".repeat(9)}…`);
  });

  it("retries a connection the provider drops without an answer, and names a dropped connection in the ai Task's words", async () => {
    peer.script("m-reset", [{ text: "answered after the reset" }]);
    peer.failNext(1, { destroySocket: true }, "m-reset");
    const task = await run("reset-once", "writer", "m-reset");
    expect(task.status.phase).toBe("Succeeded");
    expect((await orka.api("GET", "/api/v1/tasks/reset-once/result")).body.result).toBe("answered after the reset");
    expect(requestsFor("m-reset")).toHaveLength(2);
    const notices = (await events("reset-once")).filter((e) => e.type === "ModelRequestRetried").map((e) => e.summary);
    expect(notices).toHaveLength(1);
    expect(notices[0]).toMatch(/^peer: provider connection failed: .+ \((ECONNRESET|UND_ERR_SOCKET)\), retry 1 in \d+ ms$/);

    peer.script("m-reset-always", [{ text: "never" }]);
    peer.failNext(4, { destroySocket: true }, "m-reset-always");
    const failed = await run("reset-always", "writer", "m-reset-always");
    expect(failed.status.phase).toBe("Failed");
    expect(failed.status.message).toMatch(/^model call to peer \(openai, model m-reset-always\) failed: provider connection failed: .+ \((ECONNRESET|UND_ERR_SOCKET)\)$/);
    expect(requestsFor("m-reset-always")).toHaveLength(4);
  });

  it("quotes a tool result in a scripted answer as written, `$` patterns included", async () => {
    const task = await run("dollars", "quoter");
    expect(task.status.phase).toBe("Succeeded");
    const result = (await orka.api("GET", "/api/v1/tasks/dollars/result")).body.result as string;
    expect(result).toMatch(/^read: /);
    expect(result).toContain("$& and $`");
    expect(result).not.toContain("{{toolResult}}");
  });

  it("gives up on a hung model call after the configured deadline, retries it, then falls back", async () => {
    peer.script("m-hung", [{ hang: true }]);
    peer.script("c-backup", [{ text: "from the fallback" }]);
    const started = Date.now();
    const task = await run("hung-fallback", "with-fallback");
    expect(task.status.phase).toBe("Succeeded");
    expect((await orka.api("GET", "/api/v1/tasks/hung-fallback/result")).body.result).toBe("from the fallback");
    expect(requestsFor("m-hung")).toHaveLength(4);
    expect(Date.now() - started).toBeLessThan(45_000);
    const notices = (await events("hung-fallback")).filter((e) => e.type === "ModelRequestRetried").map((e) => e.summary);
    expect(notices[0]).toMatch(new RegExp(`^peer: provider did not answer within ${MODEL_TIMEOUT_MS} ms, retry 1 in \\d+ ms$`));

    peer.script("m-hung-alone", [{ hang: true }]);
    const alone = await run("hung-alone", "hasty-writer", "m-hung-alone");
    expect(alone.status.message).toBe(`model call to peer (openai, model m-hung-alone) failed: provider did not answer within ${MODEL_TIMEOUT_MS} ms`);
  });

  it("lets a Provider's or an Agent's timeout override the default deadline, and refuses one no timer can keep", async () => {
    for (const timeout of ["0", "25h"]) {
      const refused = await orka.api("POST", "/api/v1/providers", { metadata: { name: "bad-deadline" }, spec: { type: "openai", timeout } });
      expect([refused.status, refused.body.error.message]).toEqual([400, "spec.timeout: must be a duration from 1ms to 24h, such as 90s or 5m"]);
    }

    peer.setDelay(1500, "m-slow");
    peer.script("m-slow", [{ text: "slow but fine" }]);
    const created = await orka.api("POST", "/api/v1/tasks", { name: "slow-provider", type: "ai", prompt: "p", ai: { providerRef: { name: "patient" }, model: "m-slow" } });
    expect(created.status, JSON.stringify(created.body)).toBe(201);
    expect((await orka.waitFor("slow-provider")).status.phase).toBe("Succeeded");

    peer.setDelay(1500, "m-slow-agent");
    peer.script("m-slow-agent", [{ text: "slow but fine" }]);
    expect((await run("slow-agent", "slow-but-allowed")).status.phase).toBe("Succeeded");
    expect(requestsFor("m-slow-agent")).toHaveLength(1);
  });
});
