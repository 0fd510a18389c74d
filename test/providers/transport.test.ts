import http from "node:http";
import type { AddressInfo } from "node:net";
import { gzipSync } from "node:zlib";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { anthropicModel } from "../../src/providers/anthropic.ts";
import { ModelApiError, type ModelClient } from "../../src/providers/model.ts";
import { openAIModel } from "../../src/providers/openai.ts";
import { sdkTransport } from "../../src/providers/transport.ts";
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

/** What a local server heard: each request's path, method, authorization header and body. */
interface Heard {
  path: string;
  method: string;
  authorization?: string;
  body: string;
}

/** A server on loopback that records each request and answers it with `answer`. */
async function startServer(answer: (req: http.IncomingMessage, res: http.ServerResponse) => void) {
  const heard: Heard[] = [];
  const server = http.createServer((req, res) => {
    let body = "";
    req.on("data", (chunk: Buffer) => (body += chunk.toString()));
    req.on("end", () => {
      heard.push({ path: req.url ?? "", method: req.method ?? "", authorization: req.headers.authorization, body });
      answer(req, res);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    heard,
    onConnection: (listener: (socket: import("node:net").Socket) => void) => server.on("connection", listener),
    close: () => (server.closeAllConnections(), new Promise((resolve) => server.close(resolve))),
  };
}

// The SDKs are not given a call's signal (they would compose it with their own through AbortSignal.any or a
// finalizer on every call): it reaches their transport in the request's fetch options, and must end the request.
describe("a model call's signal", () => {
  // Deadlines far past the test's: only the call's signal can end these calls in time.
  const clients: [string, (url: string) => ModelClient][] = [
    ["openai", (url) => openAIModel({ apiKey: API_KEY, baseURL: `${url}/v1`, timeoutMs: 60_000 })],
    ["anthropic", (url) => anthropicModel({ apiKey: API_KEY, baseURL: url, timeoutMs: 60_000 })],
  ];
  const request = { model: "m", messages: [{ role: "user" as const, content: "hi" }], tools: [], maxTokens: 10 };
  const PROMPTLY_MS = 2_000;

  /** Starts a call to `server`, aborts its signal once `ready` says so, and checks the call failed with the reason, promptly, its connection closed. */
  async function abortedOnceUnderWay(client: ModelClient, server: Awaited<ReturnType<typeof startServer>>, ready: () => Promise<void>): Promise<void> {
    const connectionClosed = new Promise<void>((resolve) => server.onConnection((socket) => socket.on("close", () => resolve())));
    const caller = new AbortController();
    const call = client.complete({ ...request, signal: caller.signal }).catch((err: unknown) => err);
    await ready();
    const stopped = new Error("the attempt was stopped");
    const abortedAt = Date.now();
    caller.abort(stopped);
    expect(await call).toBe(stopped);
    await connectionClosed;
    expect(Date.now() - abortedAt).toBeLessThan(PROMPTLY_MS);
  }

  it.each(clients)("ends a %s call waiting for its answer when it aborts: the connection is closed and the call fails with the signal's reason", async (_name, client) => {
    const silent = await startServer(() => undefined); // never answers
    try {
      await abortedOnceUnderWay(client(silent.url), silent, () => expect.poll(() => silent.heard.length).toBe(1));
    } finally {
      await silent.close();
    }
  });

  it.each(clients)("ends a %s call reading its answer's body when it aborts, the same way", async (_name, client) => {
    let bodyStarted = false;
    const halfway = await startServer((_req, res) => {
      res.writeHead(200, { "content-type": "application/json" });
      res.write('{"id":', () => (bodyStarted = true)); // and never more
    });
    try {
      // The headers and the first bytes are on their way; a moment later the client is reading the body.
      const reading = async () => {
        await expect.poll(() => bodyStarted).toBe(true);
        await new Promise((resolve) => setTimeout(resolve, 200));
      };
      await abortedOnceUnderWay(client(halfway.url), halfway, reading);
    } finally {
      await halfway.close();
    }
  });

  it.each(clients)("sends nothing for a %s call whose signal has already aborted", async (_name, client) => {
    const server = await startServer((_req, res) => res.writeHead(500).end());
    try {
      const stopped = new Error("stopped before the call");
      expect(await client(server.url).complete({ ...request, signal: AbortSignal.abort(stopped) }).catch((err: unknown) => err)).toBe(stopped);
      expect(server.heard).toEqual([]);
    } finally {
      await server.close();
    }
  });
});

// The SDKs' fetch is built on undici's request (cheaper per call than undici's fetch); it must keep fetch's contract.
describe("the SDKs' fetch", () => {
  const { fetch } = sdkTransport(10_000);
  const post = { method: "POST", headers: { "content-type": "application/json", authorization: "Bearer sk-secret" }, body: JSON.stringify({ ask: "hi" }) };
  const servers: { close: () => Promise<unknown> }[] = [];
  const server = async (answer: Parameters<typeof startServer>[0]) => {
    const started = await startServer(answer);
    servers.push(started);
    return started;
  };
  afterAll(async () => {
    await Promise.all(servers.map((s) => s.close()));
  });

  it("answers with the status, headers (a repeated one kept) and body the server sent", async () => {
    const peer = await server((_req, res) => {
      res.setHeader("set-cookie", ["a=1", "b=2"]);
      res.writeHead(201, { "content-type": "application/json", "x-request-id": "r-1" }).end(JSON.stringify({ ok: true }));
    });
    const response = await fetch(`${peer.url}/v1/chat`, post);
    expect(response.status).toBe(201);
    expect(response.headers.get("x-request-id")).toBe("r-1");
    expect(response.headers.getSetCookie()).toEqual(["a=1", "b=2"]);
    expect(await response.json()).toEqual({ ok: true });
    expect(peer.heard).toEqual([{ path: "/v1/chat", method: "POST", authorization: "Bearer sk-secret", body: JSON.stringify({ ask: "hi" }) }]);
  });

  it("answers a status without a body (204) with no body, and the connection serves the next call", async () => {
    const peer = await server((req, res) => (req.url === "/empty" ? res.writeHead(204).end() : res.writeHead(200).end("next")));
    const empty = await fetch(`${peer.url}/empty`, post);
    expect(empty.status).toBe(204);
    expect(empty.body).toBeNull();
    expect(await (await fetch(`${peer.url}/next`, post)).text()).toBe("next");
  });

  it("decodes a gzip body the server chose to send", async () => {
    const peer = await server((_req, res) => res.writeHead(200, { "content-type": "application/json", "content-encoding": "gzip" }).end(gzipSync(JSON.stringify({ zipped: true }))));
    expect(await (await fetch(`${peer.url}/v1/chat`, post)).json()).toEqual({ zipped: true });
  });

  it("decodes a compressed error body too, so the provider's message reaches the SDK", async () => {
    const peer = await server((_req, res) => res.writeHead(429, { "content-type": "application/json", "content-encoding": "gzip" }).end(gzipSync(JSON.stringify({ error: { message: "slow down" } }))));
    const response = await fetch(`${peer.url}/v1/chat`, post);
    expect([response.status, await response.json()]).toEqual([429, { error: { message: "slow down" } }]);
  });

  it("fails as fetch does after 20 redirects, and on a status no Response can hold, letting go of that connection", async () => {
    const redirecting = await server((req, res) => res.writeHead(307, { location: `/hop/${Number(req.url!.split("/")[2]) + 1}` }).end());
    await expect(fetch(`${redirecting.url}/hop/0`, post)).rejects.toMatchObject({ name: "TypeError", message: "fetch failed" });
    expect(redirecting.heard).toHaveLength(21);
    const odd = await server((_req, res) => res.writeHead(600).write("a body that never ends"));
    let closed = false;
    odd.onConnection((socket) => socket.on("close", () => (closed = true)));
    await expect(fetch(`${odd.url}/odd`, post)).rejects.toMatchObject({ name: "TypeError", message: "fetch failed" });
    await expect.poll(() => closed, { timeout: 2000 }).toBe(true);
  });

  it("follows a 307 with the same body, and keeps the credential from another origin a redirect points to", async () => {
    const elsewhere = await server((_req, res) => res.writeHead(200).end("moved"));
    const peer = await server((req, res) => {
      if (req.url === "/old") res.writeHead(307, { location: "/new" }).end();
      else if (req.url === "/away") res.writeHead(307, { location: `${elsewhere.url}/landed` }).end();
      else res.writeHead(200).end("same origin");
    });
    expect(await (await fetch(`${peer.url}/old`, post)).text()).toBe("same origin");
    expect(peer.heard[1]).toEqual({ path: "/new", method: "POST", authorization: "Bearer sk-secret", body: post.body });
    expect(await (await fetch(`${peer.url}/away`, post)).text()).toBe("moved");
    expect(elsewhere.heard).toEqual([{ path: "/landed", method: "POST", authorization: undefined, body: post.body }]);
  });

  it("fails with the signal's reason when the caller aborts, and with a TypeError naming undici's cause when the connection is refused", async () => {
    const peer = await server(() => undefined); // never answers
    const caller = new AbortController();
    const pending = fetch(`${peer.url}/hang`, { ...post, signal: caller.signal });
    await expect.poll(() => peer.heard.length).toBe(1);
    caller.abort();
    await expect(pending).rejects.toMatchObject({ name: "AbortError" });
    await expect(fetch(`${peer.url}/late`, { ...post, signal: caller.signal })).rejects.toMatchObject({ name: "AbortError" });
    const closed = await server(() => undefined);
    await closed.close();
    await expect(fetch(`${closed.url}/gone`, post)).rejects.toMatchObject({ name: "TypeError", message: "fetch failed", cause: { code: "ECONNREFUSED" } });
  });

  it("sends a body only fetch knows how to encode (URL-encoded form fields) as fetch does", async () => {
    const peer = await server((req, res) => res.writeHead(200).end(req.headers["content-type"]));
    const response = await fetch(`${peer.url}/form`, { method: "POST", body: new URLSearchParams({ purpose: "batch", name: "a b" }) });
    expect(await response.text()).toBe("application/x-www-form-urlencoded;charset=UTF-8");
    expect(peer.heard).toEqual([{ path: "/form", method: "POST", authorization: undefined, body: "purpose=batch&name=a+b" }]);
  });
});
