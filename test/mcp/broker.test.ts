import { request as httpRequest } from "node:http";
import { networkInterfaces } from "node:os";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { BROKER_LIMITS, isLoopbackAddress, startMcpBroker, type BrokerSession, type McpBroker } from "../../src/mcp/broker.ts";
import { BrokerRefusal, type BrokerCall, type BrokerCallResult, type BrokeredCallRunner } from "../../src/mcp/calls.ts";
import type { BrokeredTool } from "../../src/runner/attempt-config.ts";
import { sha256Hex } from "../../src/util/hash.ts";

const webFetch: BrokeredTool = {
  name: "web_fetch",
  description: "Fetch a web page.",
  inputSchema: { type: "object", properties: { url: { type: "string" } }, required: ["url"] },
  effect: "read_only",
};
const notify: BrokeredTool = { name: "notify_team", description: "Post to the team.", inputSchema: { type: "object", properties: {} }, effect: "consequential", digest: "sha256:abc" };

/** A `run` the test drives: it records calls and answers with `answer`, or holds them until released. */
function scriptedRunner(answer: (call: BrokerCall, signal: AbortSignal) => Promise<BrokerCallResult> = async () => ({ text: '{"ok":true}', isError: false })) {
  const calls: BrokerCall[] = [];
  const run: BrokeredCallRunner = (call, signal) => {
    calls.push(call);
    return answer(call, signal);
  };
  return { calls, run };
}

/** A runner that holds every call until the test releases it (or its signal aborts). */
function holdingRunner() {
  const held: { call: BrokerCall; signal: AbortSignal; release: () => void }[] = [];
  const runner = scriptedRunner(
    (call, signal) =>
      new Promise((resolve, reject) => {
        held.push({ call, signal, release: () => resolve({ text: "released", isError: false }) });
        signal.addEventListener("abort", () => reject(new Error("the call was aborted")), { once: true });
      }),
  );
  return { ...runner, held, releaseAll: () => held.forEach((h) => h.release()) };
}

async function connect(session: { url: string; bearer: string }): Promise<Client> {
  const client = new Client({ name: "broker-test", version: "1.0.0" });
  await client.connect(new StreamableHTTPClientTransport(new URL(session.url), { requestInit: { headers: { Authorization: `Bearer ${session.bearer}` } } }));
  return client;
}

interface RpcAnswer {
  status: number;
  headers: Headers;
  body: { id?: unknown; result?: Record<string, unknown>; error?: { code: number; message: string } } | undefined;
}

/** One raw POST, as a CLI would send it. */
async function rpc(session: { url: string; bearer: string }, body: unknown, init: { method?: string; bearer?: string } = {}): Promise<RpcAnswer> {
  const response = await fetch(session.url, {
    method: init.method ?? "POST",
    headers: { "Content-Type": "application/json", Accept: "application/json, text/event-stream", Authorization: `Bearer ${init.bearer ?? session.bearer}` },
    body: init.method === "GET" ? undefined : typeof body === "string" ? body : JSON.stringify(body),
  });
  const text = await response.text();
  return { status: response.status, headers: response.headers, body: text ? JSON.parse(text) : undefined };
}

const toolsCall = (id: unknown, name: string, args: unknown = {}) => ({ jsonrpc: "2.0", id, method: "tools/call", params: { name, arguments: args } });

async function until(condition: () => boolean, ms = 5_000): Promise<void> {
  for (const deadline = Date.now() + ms; !condition(); await new Promise((done) => setTimeout(done, 10))) {
    if (Date.now() > deadline) throw new Error("condition not met in time");
  }
}

let broker: McpBroker;
let cleanups: (() => Promise<unknown> | void)[];
beforeEach(async () => {
  broker = await startMcpBroker();
  cleanups = [];
});
afterEach(async () => {
  for (const cleanup of cleanups.reverse()) await cleanup();
  await broker.close();
});

function open(tools: BrokeredTool[], run: BrokeredCallRunner): BrokerSession {
  return broker.open({ tools, run });
}

describe("the MCP broker speaking MCP to the SDK's client", () => {
  it("introduces itself and lists exactly the session's tools", async () => {
    const session = open([webFetch, notify], scriptedRunner().run);
    const client = await connect(session);
    cleanups.push(() => client.close());
    expect(client.getServerVersion()).toMatchObject({ name: "orka-prompt-broker" });
    expect(client.getServerCapabilities()).toEqual({ tools: { listChanged: false } });
    const { tools } = await client.listTools();
    expect(tools).toEqual([
      { name: "web_fetch", description: "Fetch a web page.", inputSchema: webFetch.inputSchema },
      { name: "notify_team", description: "Post to the team.", inputSchema: { type: "object", properties: {} } },
    ]);
  });

  it("answers a call with the tool's text, its JSON object as structuredContent, and the call id", async () => {
    const runner = scriptedRunner(async () => ({ text: '{"status":200,"body":"hello"}', isError: false }));
    const session = open([webFetch], runner.run);
    const client = await connect(session);
    cleanups.push(() => client.close());
    const result = await client.callTool({ name: "web_fetch", arguments: { url: "http://127.0.0.1:1/page" } });
    expect(result).toEqual({ content: [{ type: "text", text: '{"status":200,"body":"hello"}' }], isError: false, structuredContent: { status: 200, body: "hello" } });
    expect(runner.calls).toHaveLength(1);
    expect(runner.calls[0]).toMatchObject({ name: "web_fetch", arguments: { url: "http://127.0.0.1:1/page" } });
    expect(runner.calls[0].callId).toMatch(/^rpc-[0-9a-f]{64}$/);
  });

  it("passes an error result through and gives no structuredContent for text that is not a JSON object", async () => {
    const session = open([webFetch], scriptedRunner(async () => ({ text: "[1,2]", isError: true })).run);
    const answer = await rpc(session, toolsCall(1, "web_fetch"));
    expect(answer.body?.result).toEqual({ content: [{ type: "text", text: "[1,2]" }], isError: true });
  });

  it("uses a usable string id as the call id and hashes any other id with the call", async () => {
    const runner = scriptedRunner();
    const session = open([webFetch], runner.run);
    const hashed = (id: unknown, args: unknown = {}) => `rpc-${sha256Hex(JSON.stringify([id, "web_fetch", args]))}`;
    await rpc(session, toolsCall("call-7f3a", "web_fetch"));
    await rpc(session, toolsCall("has space", "web_fetch"));
    await rpc(session, toolsCall(42, "web_fetch"));
    await rpc(session, toolsCall("x".repeat(257), "web_fetch"));
    // A client that reconnects numbers from 0 again: the same number with other arguments is another call.
    await rpc(session, toolsCall(42, "web_fetch", { url: "http://other.example" }));
    expect(runner.calls.map((call) => call.callId)).toEqual(["call-7f3a", hashed("has space"), hashed(42), hashed("x".repeat(257)), hashed(42, { url: "http://other.example" })]);
    expect(hashed(42)).not.toBe(hashed(42, { url: "http://other.example" }));
  });

  it("takes MCP's _meta beside the call's params and does not pass it to the tool", async () => {
    const runner = scriptedRunner();
    const session = open([webFetch], runner.run);
    const answer = await rpc(session, { jsonrpc: "2.0", id: "c1", method: "tools/call", params: { name: "web_fetch", arguments: { url: "http://x" }, _meta: { "claudecode/toolUseId": "toolu_1" } } });
    expect(answer.body?.result).toMatchObject({ isError: false });
    expect(runner.calls).toEqual([{ name: "web_fetch", arguments: { url: "http://x" }, callId: "c1" }]);
  });

  it("marks a replayed result in _meta", async () => {
    const session = open([notify], scriptedRunner(async () => ({ text: "posted", isError: false, replayed: true })).run);
    const answer = await rpc(session, toolsCall("c1", "notify_team"));
    expect(answer.body?.result).toEqual({ content: [{ type: "text", text: "posted" }], isError: false, _meta: { "orka.replayed": true } });
  });

  it("answers initialize with the version the client asked for (2025-06-18 when it speaks no such version), ping with {}, and an initialized notification with 202", async () => {
    const session = open([webFetch], scriptedRunner().run);
    const init = await rpc(session, { jsonrpc: "2.0", id: 0, method: "initialize", params: { protocolVersion: "2025-06-18", capabilities: {}, clientInfo: { name: "claude-code", version: "2" } } });
    expect(init.body?.result).toMatchObject({ protocolVersion: "2025-06-18", capabilities: { tools: { listChanged: false } }, serverInfo: { name: "orka-prompt-broker" } });
    const unsupported = await rpc(session, { jsonrpc: "2.0", id: 0, method: "initialize", params: { protocolVersion: "1999-01-01", capabilities: {}, clientInfo: { name: "old", version: "1" } } });
    expect(unsupported.body?.result).toMatchObject({ protocolVersion: "2025-06-18" });
    expect((await rpc(session, { jsonrpc: "2.0", id: 1, method: "ping" })).body?.result).toEqual({});
    const initialized = await rpc(session, { jsonrpc: "2.0", method: "notifications/initialized" });
    expect(initialized.status).toBe(202);
    const unknown = await rpc(session, { jsonrpc: "2.0", id: 2, method: "resources/list" });
    expect(unknown.body?.error?.code).toBe(-32601);
  });
});

describe("the broker's transport checks", () => {
  it("refuses a wrong or missing bearer with 401, an unknown route with 404, and GET with 403", async () => {
    const runner = scriptedRunner();
    const session = open([webFetch], runner.run);
    expect((await rpc(session, toolsCall(1, "web_fetch"), { bearer: "not-the-bearer" })).status).toBe(401);
    const noBearer = await fetch(session.url, { method: "POST", headers: { "Content-Type": "application/json" }, body: JSON.stringify(toolsCall(1, "web_fetch")) });
    expect(noBearer.status).toBe(401);
    const otherRoute = { url: session.url.replace(/[^/]+$/, "A".repeat(32)), bearer: session.bearer };
    expect((await rpc(otherRoute, toolsCall(1, "web_fetch"))).status).toBe(404);
    expect((await rpc(session, undefined, { method: "GET" })).status).toBe(403);
    expect(runner.calls).toEqual([]);
  });

  it("does not take the bearer of another session", async () => {
    const first = open([webFetch], scriptedRunner().run);
    const second = open([webFetch], scriptedRunner().run);
    const refused = await rpc(first, toolsCall(1, "web_fetch"), { bearer: second.bearer });
    expect(refused.status).toBe(401);
    expect(JSON.stringify(refused.body)).not.toContain(second.bearer);
    expect(JSON.stringify(refused.body)).not.toContain(first.bearer);
  });

  it.each([
    ["127.0.0.1", true],
    ["127.200.3.4", true],
    ["::1", true],
    ["::ffff:127.0.0.1", true],
    ["192.0.2.2", false],
    ["::ffff:10.0.0.1", false],
    ["fe80::1", false],
    ["1.127.0.0", false],
    [undefined, false],
  ])("counts %s as loopback: %s", (address, loopback) => {
    expect(isLoopbackAddress(address)).toBe(loopback);
  });

  const outsideAddress = Object.values(networkInterfaces())
    .flat()
    .find((entry) => entry && entry.family === "IPv4" && !entry.internal)?.address;

  it.skipIf(!outsideAddress)("refuses a peer connecting from a non-loopback address with 403", async () => {
    const runner = scriptedRunner();
    const session = open([webFetch], runner.run);
    const url = new URL(session.url);
    const status = await new Promise<number>((resolve, reject) => {
      const req = httpRequest({ host: url.hostname, port: url.port, path: url.pathname, method: "POST", localAddress: outsideAddress, headers: { Authorization: `Bearer ${session.bearer}`, "Content-Type": "application/json", Accept: "application/json, text/event-stream" } }, (res) => {
        res.resume();
        resolve(res.statusCode ?? 0);
      });
      req.on("error", reject);
      req.end(JSON.stringify(toolsCall(1, "web_fetch")));
    });
    expect(status).toBe(403);
    expect(runner.calls).toEqual([]);
  });

  it("refuses a body over 320 KiB with -32600 (HTTP 200, no-store) without running anything", async () => {
    const runner = scriptedRunner();
    const session = open([webFetch], runner.run);
    const answer = await rpc(session, toolsCall(1, "web_fetch", { url: "x".repeat(BROKER_LIMITS.bodyBytes) }));
    expect(answer.status).toBe(200);
    expect(answer.headers.get("cache-control")).toBe("no-store");
    expect(answer.body?.error?.code).toBe(-32600);
    expect(answer.body?.error?.message).toMatch(/at most 327680/);
    expect(runner.calls).toEqual([]);
  });

  it("refuses arguments over 256 KiB with -32602", async () => {
    const runner = scriptedRunner();
    const session = open([webFetch], runner.run);
    const answer = await rpc(session, toolsCall(5, "web_fetch", { url: "x".repeat(BROKER_LIMITS.argumentBytes) }));
    expect(answer.body).toMatchObject({ id: 5, error: { code: -32602 } });
    expect(runner.calls).toEqual([]);
  });

  it.each([
    ["a batch", [toolsCall(1, "web_fetch")], -32600],
    ["not JSON", "{", -32600],
    ["no jsonrpc version", { id: 1, method: "tools/call", params: { name: "web_fetch" } }, -32600],
    ["an unknown envelope field", { ...toolsCall(1, "web_fetch"), extra: true }, -32600],
    ["a tools/call without an id", { jsonrpc: "2.0", method: "tools/call", params: { name: "web_fetch" } }, -32600],
    ["an unknown params field", { jsonrpc: "2.0", id: 1, method: "tools/call", params: { name: "web_fetch", arguments: {}, task: "x" } }, -32602],
    ["arguments that are not an object", toolsCall(1, "web_fetch", ["http://x"]), -32602],
    ["no tool name", { jsonrpc: "2.0", id: 1, method: "tools/call", params: { arguments: {} } }, -32602],
  ])("refuses %s", async (_what, body, code) => {
    const runner = scriptedRunner();
    const session = open([webFetch], runner.run);
    const answer = await rpc(session, body);
    expect(answer.status).toBe(200);
    expect(answer.body?.error?.code).toBe(code);
    expect(runner.calls).toEqual([]);
  });

  it("answers a session's third concurrent request with 429 while two calls are held", async () => {
    const runner = holdingRunner();
    const session = open([webFetch], runner.run);
    const first = rpc(session, toolsCall(1, "web_fetch"));
    const second = rpc(session, toolsCall(2, "web_fetch"));
    await until(() => runner.held.length === 2);
    const third = await rpc(session, toolsCall(3, "web_fetch"));
    expect(third.status).toBe(429);
    expect(third.headers.get("retry-after")).toBe("1");
    runner.releaseAll();
    expect((await first).body?.result).toMatchObject({ content: [{ type: "text", text: "released" }] });
    await second;
    expect((await rpc(session, { jsonrpc: "2.0", id: 4, method: "ping" })).status).toBe(200);
  });

  it("answers the seventeenth concurrent request across the broker with 429", async () => {
    const runner = holdingRunner();
    const sessions = Array.from({ length: 8 }, () => open([webFetch], runner.run));
    const pending = sessions.flatMap((session) => [rpc(session, toolsCall(1, "web_fetch")), rpc(session, toolsCall(2, "web_fetch"))]);
    await until(() => runner.held.length === 16);
    const ninth = open([webFetch], runner.run);
    expect((await rpc(ninth, toolsCall(1, "web_fetch"))).status).toBe(429);
    runner.releaseAll();
    await Promise.all(pending);
    expect(runner.held).toHaveLength(16);
  });
});

describe("authorizing and running calls", () => {
  it("refuses a tool the session does not offer with -32001, without calling run", async () => {
    const runner = scriptedRunner();
    const session = open([webFetch], runner.run);
    for (const name of ["Bash", "code_exec", "mcp__orka__web_fetch"]) {
      const answer = await rpc(session, toolsCall(1, name));
      expect(answer.body?.error).toMatchObject({ code: -32001, message: expect.stringMatching(/^MCP tool call is not authorized/) });
    }
    expect(runner.calls).toEqual([]);
  });

  it("after close answers calls with -32001 without calling run, and lists no tools", async () => {
    const runner = scriptedRunner();
    const session = open([webFetch], runner.run);
    const client = await connect(session);
    cleanups.push(() => client.close());
    session.close();
    await expect(client.callTool({ name: "web_fetch", arguments: { url: "http://x" } })).rejects.toMatchObject({ code: -32001 });
    expect((await client.listTools()).tools).toEqual([]);
    expect(runner.calls).toEqual([]);
  });

  it("aborts the signal of a call in flight when the session closes, and answers -32002", async () => {
    const runner = holdingRunner();
    const session = open([webFetch], runner.run);
    const pending = rpc(session, toolsCall("c1", "web_fetch"));
    await until(() => runner.held.length === 1);
    expect(runner.held[0].signal.aborted).toBe(false);
    session.close();
    expect(runner.held[0].signal.aborted).toBe(true);
    expect((await pending).body?.error).toMatchObject({ code: -32002, message: expect.stringMatching(/^MCP broker call failed/) });
  });

  it("aborts the signal of a call whose client went away", async () => {
    const runner = holdingRunner();
    const session = open([webFetch], runner.run);
    const gone = new AbortController();
    const pending = fetch(session.url, {
      method: "POST",
      signal: gone.signal,
      headers: { "Content-Type": "application/json", Accept: "application/json, text/event-stream", Authorization: `Bearer ${session.bearer}` },
      body: JSON.stringify(toolsCall("c1", "web_fetch")),
    }).catch(() => "client gave up");
    await until(() => runner.held.length === 1);
    gone.abort();
    expect(await pending).toBe("client gave up");
    await until(() => runner.held[0].signal.aborted);
  });

  it("drops a result that comes after the session closed", async () => {
    let session: BrokerSession | undefined;
    const runner = scriptedRunner(async () => {
      session?.close();
      return { text: "too late", isError: false };
    });
    session = open([webFetch], runner.run);
    const answer = await rpc(session, toolsCall("c1", "web_fetch"));
    expect(answer.body?.error).toMatchObject({ code: -32002, message: expect.stringContaining("result was dropped") });
  });

  it.each([
    ["a refusal", new BrokerRefusal("not_authorized", "the Task is no longer running"), -32001, /not authorized: the Task is no longer running/],
    ["a failed call", new BrokerRefusal("failed", "the tool could not run"), -32002, /call failed: the tool could not run/],
    ["any other error", new Error("connection reset"), -32002, /call failed: connection reset/],
  ])("maps %s of run to its JSON-RPC error", async (_what, error, code, message) => {
    const session = open([webFetch], scriptedRunner(async () => Promise.reject(error)).run);
    const answer = await rpc(session, toolsCall(1, "web_fetch"));
    expect(answer.body?.error?.code).toBe(code);
    expect(answer.body?.error?.message).toMatch(message);
  });

  it("refuses a result over 1 MiB with -32002", async () => {
    const session = open([webFetch], scriptedRunner(async () => ({ text: "y".repeat(BROKER_LIMITS.resultBytes + 1), isError: false })).run);
    const answer = await rpc(session, toolsCall(1, "web_fetch"));
    expect(answer.body?.error).toMatchObject({ code: -32002, message: expect.stringMatching(/at most 1048576/) });
  });
});
