import http from "node:http";
import type { AddressInfo } from "node:net";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { toolResultsOf } from "../peers/llm-server.ts";
import { startOrkaWithPeer } from "../helpers/orka-with-peer.ts";

// Values no generic "looks like a secret" pattern matches: only knowing them can hide them.
const MODEL_KEY = "mdl-Zq81xR4tW0pLs9";
const TOOL_KEY = "tl-Kq2Vn7Yc5Hb3Ms";

// Issue 12 item 5: an upstream that echoes the credential it was sent (a provider's 401, a Tool
// that reflects its headers) never gets it into anything a user-role token can read.
describe("Secret values echoed by an upstream are redacted", () => {
  let echo: http.Server;
  const echoed: string[] = [];
  let setup: Awaited<ReturnType<typeof startOrkaWithPeer>>;
  let userToken = "";

  beforeAll(async () => {
    echo = http.createServer((req, res) => {
      if (req.method === "HEAD") return void res.writeHead(200).end();
      echoed.push(String(req.headers.authorization));
      res.writeHead(200, { "content-type": "application/json" }).end(JSON.stringify({ youSent: req.headers }));
    });
    await new Promise<void>((resolve) => echo.listen(0, "127.0.0.1", resolve));
    const echoURL = `http://127.0.0.1:${(echo.address() as AddressInfo).port}`;
    setup = await startOrkaWithPeer(`
apiVersion: v1
kind: Secret
metadata: {name: model-cred}
stringData: {api-key: ${MODEL_KEY}}
---
apiVersion: v1
kind: Secret
metadata: {name: tool-cred}
stringData: {token: ${TOOL_KEY}}
---
apiVersion: core.orka.ai/v1alpha1
kind: Provider
metadata: {name: leaky}
spec: {type: openai, baseURL: "PEER_URL/v1", secretRef: {name: model-cred}}
---
apiVersion: core.orka.ai/v1alpha1
kind: Tool
metadata: {name: echo}
spec:
  description: Says back what it was sent
  http: {url: "${echoURL}/echo", authSecretRef: {name: tool-cred, key: token}}
---
apiVersion: core.orka.ai/v1alpha1
kind: Agent
metadata: {name: echoer}
spec: {providerRef: {name: leaky}, tools: [{name: echo}]}
`, { ORKA_ALLOW_LOOPBACK_EGRESS: "true" });
    userToken = (await setup.orka.api("POST", "/api/v1/auth/tokens", { name: "reader", namespace: "default" })).body.token;
  });
  afterAll(async () => {
    await setup?.stop();
    echo.close();
  });

  /** Everything about a Task a user-role token can read, as one text. */
  const readable = async (name: string) => {
    const parts = await Promise.all(
      ["", "/events", "/logs", "/result", "/export"].map((path) => setup.orka.api("GET", `/api/v1/tasks/${name}${path}`, undefined, userToken)),
    );
    expect(parts[0].status).toBe(200);
    return JSON.stringify(parts.map((part) => part.body));
  };

  it("keeps a Tool's echoed credential from the model, events, result and logs", async () => {
    const { orka, peer } = setup;
    peer.script("m-echo", [{ toolCalls: [{ name: "echo", arguments: { q: "x" } }] }, (body) => ({ text: `the tool said ${toolResultsOf(body).join(" ")}` })]);
    const created = await orka.api("POST", "/api/v1/tasks", { name: "echo-tool", type: "ai", agentRef: "echoer", prompt: "call echo", ai: { model: "m-echo" } }, userToken);
    expect(created.status, JSON.stringify(created.body)).toBe(201);
    expect((await orka.waitFor("echo-tool")).status.phase).toBe("Succeeded");

    expect(echoed).toEqual([`Bearer ${TOOL_KEY}`]);
    const seenByModel = JSON.stringify(peer.requests.filter((r) => r.body.model === "m-echo").map((r) => r.body));
    expect(seenByModel).toContain("[REDACTED]");
    expect(seenByModel).not.toContain(TOOL_KEY);
    const text = await readable("echo-tool");
    expect(text).toContain("[REDACTED]");
    expect(text).not.toContain(TOOL_KEY);
    expect(text).not.toContain(MODEL_KEY);
  });

  it("keeps a provider's 401 that quotes the key out of status, events and logs", async () => {
    const { orka, peer } = setup;
    peer.failNext(1, { status: 401, echoCredential: true }, "m-401");
    const created = await orka.api("POST", "/api/v1/tasks", { name: "bad-key", type: "ai", agentRef: "echoer", prompt: "hi", ai: { model: "m-401" } }, userToken);
    expect(created.status, JSON.stringify(created.body)).toBe(201);
    const task = await orka.waitFor("bad-key");
    expect(task.status.phase).toBe("Failed");

    expect(peer.requests.find((r) => r.body.model === "m-401")?.headers.authorization).toBe(`Bearer ${MODEL_KEY}`);
    expect(task.status.message).toContain("Incorrect API key provided");
    const text = await readable("bad-key");
    expect(text).not.toContain(MODEL_KEY);
  });

  it("keeps the key out of a compat endpoint's error", async () => {
    const { orka, peer } = setup;
    peer.failNext(1, { status: 401, echoCredential: true }, "m-compat");
    const response = await fetch(`${orka.url}/openai/v1/chat/completions`, {
      method: "POST",
      headers: { authorization: `Bearer ${userToken}`, "content-type": "application/json" },
      body: JSON.stringify({ model: "leaky/m-compat", messages: [{ role: "user", content: "hi" }] }),
    });
    const body = await response.text();
    expect(peer.requests.find((r) => r.body.model === "m-compat")?.headers.authorization).toBe(`Bearer ${MODEL_KEY}`);
    expect(body).toContain("Incorrect API key provided");
    expect(body).not.toContain(MODEL_KEY);
  });
});
