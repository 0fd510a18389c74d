import http from "node:http";
import type { AddressInfo } from "node:net";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { API_VERSION } from "../../src/resources/meta.ts";
import type { TaskSpec, TaskStatus } from "../../src/resources/task.ts";
import type { RunningOrka } from "../../src/server.ts";
import { sha256Hex } from "../../src/util/hash.ts";
import { startLlmPeer, toolResultsOf, type LlmPeer } from "../peers/llm-server.ts";
import { EMBEDDED_ADMIN_TOKEN, startEmbeddedOrka } from "../helpers/embedded.ts";
import { startOrkaWithPeer } from "../helpers/orka-with-peer.ts";

// Values no generic "looks like a secret" pattern matches: only knowing them can hide them.
const MODEL_KEY = "mdl-Zq81xR4tW0pLs9";
const TOOL_KEY = "tl-Kq2Vn7Yc5Hb3Ms";
const SEARCH_KEY = "srch-Wm4Tq9Lp2Xv7Rb";

// Issue 12 item 5: an upstream that echoes the credential it was sent (a provider's 401, a Tool
// that reflects its headers) never gets it into anything a user-role token can read.
describe("Secret values echoed by an upstream are redacted", () => {
  let echo: http.Server;
  const echoed: string[] = [];
  const searched: string[] = [];
  let setup: Awaited<ReturnType<typeof startOrkaWithPeer>>;
  let userToken = "";

  beforeAll(async () => {
    echo = http.createServer((req, res) => {
      if (req.method === "HEAD") return void res.writeHead(200).end();
      if (req.url?.startsWith("/search")) {
        // A search API that quotes the key it was sent inside an ordinary 200 answer, with no "Bearer" before it.
        const key = String(req.headers.authorization).replace(/^Bearer /, "");
        searched.push(key);
        return void res.writeHead(200, { "content-type": "application/json" }).end(JSON.stringify({ results: [{ title: "echo", snippet: `you searched with ${key}` }] }));
      }
      echoed.push(String(req.headers.authorization));
      // Quoted twice: as the header came, and bare, the way no "Bearer" pattern would catch it.
      res.writeHead(200, { "content-type": "application/json" }).end(JSON.stringify({ youSent: req.headers, token: String(req.headers.authorization).replace(/^Bearer /, "") }));
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
apiVersion: v1
kind: Secret
metadata: {name: search-cred}
stringData: {api-key: ${SEARCH_KEY}}
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
spec: {providerRef: {name: leaky}, tools: [{name: echo}, {name: web_search}]}
---
apiVersion: core.orka.ai/v1alpha1
kind: Agent
metadata: {name: gated}
spec:
  providerRef: {name: leaky}
  tools: [{name: echo}]
  coordination: {enabled: true, autonomous: true, maxIterations: 2, approvalRequiredTools: [echo]}
`, { ORKA_ALLOW_LOOPBACK_EGRESS: "true", ORKA_SEARCH_PROVIDER: "generic", ORKA_SEARCH_URL: `${echoURL}/search`, ORKA_SEARCH_SECRET: "search-cred" });
    userToken = (await setup.orka.api("POST", "/api/v1/auth/tokens", { name: "reader", namespace: "default" })).body.token;
  });
  afterAll(async () => {
    await setup?.stop();
    echo.close();
  });

  /** Everything about a Task a user-role token can read, as one text. */
  const readable = async (name: string) => {
    const parts = await Promise.all(
      ["", "/events", "/logs", "/result", "/export", "/approvals"].map((path) => setup.orka.api("GET", `/api/v1/tasks/${name}${path}`, undefined, userToken)),
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

  // Nothing but knowing the values catches these: no "Bearer", no "[apiKey]", a 200 answer.
  it("keeps a key quoted in a model's answer, a worker-local tool's answer and a memory proposal out of the model, export, result, events and proposals", async () => {
    const { orka, peer } = setup;
    peer.script("m-quote", [
      { toolCalls: [{ name: "web_search", arguments: { query: "who am I" } }, { name: "propose_memory", arguments: { title: "model key", type: "memory", content: `the model runs as ${MODEL_KEY}` } }] },
      (body) => ({ text: `my key is quoted here: ${MODEL_KEY}; search said ${toolResultsOf(body).join(" ")}` }),
    ]);
    const created = await orka.api("POST", "/api/v1/tasks", { name: "quote", type: "ai", agentRef: "echoer", prompt: "search", ai: { model: "m-quote" } }, userToken);
    expect(created.status, JSON.stringify(created.body)).toBe(201);
    expect((await orka.waitFor("quote")).status.phase).toBe("Succeeded");

    expect(searched).toEqual([SEARCH_KEY]);
    const seenByModel = JSON.stringify(peer.requests.filter((r) => r.body.model === "m-quote").map((r) => r.body.messages));
    expect(seenByModel).toContain("you searched with [REDACTED]");
    expect(seenByModel).not.toContain(SEARCH_KEY);
    const text = await readable("quote");
    expect(text).toContain("my key is quoted here: [REDACTED]");
    for (const key of [MODEL_KEY, SEARCH_KEY]) expect(text).not.toContain(key);
    const proposals = await orka.api("GET", "/api/v1/memory-proposals?namespace=default", undefined, userToken);
    expect(proposals.status).toBe(200);
    expect(JSON.stringify(proposals.body)).toContain("the model runs as [REDACTED]");
    expect(JSON.stringify(proposals.body)).not.toContain(MODEL_KEY);
  });

  it("keeps a key the model put in a gated call's arguments out of the approval a person reads", async () => {
    const { orka, peer } = setup;
    peer.script("m-gated", [{ toolCalls: [{ name: "echo", arguments: { q: `use ${MODEL_KEY}` } }] }, { text: "parked" }]);
    const created = await orka.api("POST", "/api/v1/tasks", { name: "gated-call", type: "ai", agentRef: "gated", prompt: "call echo", ai: { model: "m-gated" } }, userToken);
    expect(created.status, JSON.stringify(created.body)).toBe(201);
    let approvals: { targetTool: string; targetArgsPreview: string }[] = [];
    for (let i = 0; i < 100 && approvals.length === 0; i++) {
      approvals = (await orka.api("GET", "/api/v1/tasks/gated-call/approvals", undefined, userToken)).body.approvals ?? [];
      if (approvals.length === 0) await new Promise((r) => setTimeout(r, 100));
    }
    expect(approvals.map((a) => [a.targetTool, a.targetArgsPreview])).toEqual([["echo", '{"q":"use [REDACTED]"}']]);
    const all = await orka.api("GET", "/api/v1/approvals", undefined, userToken);
    expect(JSON.stringify(all.body)).not.toContain(MODEL_KEY);
    expect(await readable("gated-call")).not.toContain(MODEL_KEY);
    await orka.api("POST", "/api/v1/tasks/gated-call/cancel", {}, userToken);
  });
});

// Through the embedded server, to hold a worker credential of a running attempt and read the stores.
describe("Secret values a worker sends or a finished Task leaves (embedded server)", () => {
  let orka: RunningOrka;
  let peer: LlmPeer;

  beforeAll(async () => {
    peer = await startLlmPeer();
    orka = await startEmbeddedOrka();
    const create = (kind: string, name: string, spec: object) => orka.store.create({ apiVersion: API_VERSION, kind, metadata: { name, namespace: "default" }, spec });
    await create("Secret", "model-cred", { type: "Opaque", data: { "api-key": MODEL_KEY } });
    await create("Provider", "leaky", { type: "openai", baseURL: `${peer.url}/v1`, secretRef: { name: "model-cred", key: "api-key" } });
    await create("Agent", "plain", { providerRef: { name: "leaky" } });
  });
  afterAll(async () => {
    await orka?.close();
    await peer?.close();
  });

  const aiTask = (name: string, model: string) =>
    orka.store.create({ apiVersion: API_VERSION, kind: "Task", metadata: { name, namespace: "default" }, spec: { type: "ai", agentRef: { name: "plain" }, prompt: "hi", ai: { model } } as TaskSpec });
  const statusOf = async (name: string) => (await orka.store.get<TaskSpec, TaskStatus>("Task", "default", name))?.status;
  const waitUntil = async (check: () => boolean | Promise<boolean>) => {
    for (let i = 0; i < 200 && !(await check()); i++) await new Promise((r) => setTimeout(r, 100));
    expect(await check()).toBe(true);
  };

  it("keeps a key out of an artifact and a plan the worker sends", async () => {
    peer.setDelay(5_000, "m-slow");
    peer.script("m-slow", [{ text: "late" }]);
    await aiTask("uploader", "m-slow");
    await waitUntil(() => orka.data.latestAttempt("default", "uploader")?.state === "running");
    // A second credential for the running Task, standing in for its worker's (which only the worker holds).
    const token = "artifact-writer-token-0123456789";
    const running = orka.data.latestAttempt("default", "uploader")!;
    orka.data.createAttempt({ id: "artifact-writer", namespace: "default", task: "uploader", taskUid: running.taskUid, number: running.number + 1, allowedTools: ["update_plan"] }, sha256Hex(token));
    const upload = await fetch(`${orka.url}/internal/v1/artifacts/default/uploader/report.txt`, {
      method: "POST",
      headers: { authorization: `Bearer ${token}`, "content-type": "text/plain" },
      body: `the upstream said ${MODEL_KEY}`,
    });
    const plan = await fetch(`${orka.url}/internal/v1/plans/default/uploader`, {
      method: "POST",
      headers: { authorization: `Bearer ${token}`, "content-type": "application/json" },
      body: JSON.stringify({ summary: `calling with ${MODEL_KEY}`, plan_document: "step 1" }),
    });
    orka.data.finishAttempt("artifact-writer", { state: "succeeded", exitCode: 0 });
    expect(upload.status).toBe(204);
    expect(plan.status).toBe(204);
    const readPlan = await fetch(`${orka.url}/api/v1/tasks/uploader/plan`, { headers: { authorization: `Bearer ${EMBEDDED_ADMIN_TOKEN}` } });
    expect(await readPlan.json()).toMatchObject({ Summary: "calling with [REDACTED]" });
    const download = await fetch(`${orka.url}/api/v1/tasks/uploader/artifacts/report.txt`, { headers: { authorization: `Bearer ${EMBEDDED_ADMIN_TOKEN}` } });
    expect(await download.text()).toBe("the upstream said [REDACTED]");
    await orka.store.delete("Task", "default", "uploader");
  });

  it("drops a finished Task's Secret values: nothing its attempts send is left to scrub, so the server keeps no copy", async () => {
    peer.script("m-fast", [{ text: "done" }]);
    await aiTask("finished", "m-fast");
    await waitUntil(async () => (await statusOf("finished"))?.phase === "Succeeded");
    // Were the values still held, this write would be scrubbed of them.
    orka.data.appendLog("default", "finished", 1, `late ${MODEL_KEY}`);
    expect(orka.data.readLogs("default", "finished").text).toContain(`late ${MODEL_KEY}`);
  });
});

