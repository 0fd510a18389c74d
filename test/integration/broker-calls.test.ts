import { rmSync } from "node:fs";
import { createServer, type IncomingMessage, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { hashToken } from "../../src/store/data-store.ts";
import { BrokerRefusal, type BrokerCallResult, type BrokeredCallRunner } from "../../src/mcp/calls.ts";
import { API_VERSION } from "../../src/resources/meta.ts";
import type { TaskSpec, TaskStatus } from "../../src/resources/task.ts";
import type { ToolSpec, ToolStatus } from "../../src/resources/tool.ts";
import type { AttemptConfig } from "../../src/runner/attempt-config.ts";
import { makeAttemptDirs } from "../../src/runner/attempt-dirs.ts";
import { prepareAttemptDirs } from "../../src/runner/local/dirs.ts";
import { customToolDigest } from "../../src/runtimes/tool-digest.ts";
import type { RunningOrka } from "../../src/server.ts";
import { createToolContext } from "../../src/tools/context.ts";
import { brokeredToolRunner } from "../../src/worker/brokered-calls.ts";
import { ControlPlaneClient } from "../../src/worker/client.ts";
import { httpTransport } from "../../src/worker/transport.ts";
import { toolExecutor } from "../../src/worker/tool-executor.ts";
import { EMBEDDED_ADMIN_TOKEN, startEmbeddedOrka } from "../helpers/embedded.ts";
import { startLlmPeer, type LlmPeer } from "../peers/llm-server.ts";

const MODEL_KEY = "sk-broker-test-model-key-0123456789";
const SESSION_TOKEN = "broker-session-token-0123456789abcdef";
const SESSION_TOOLS = ["web_fetch", "remember", "lookup", "dump", "recall_memory"];

/** A local HTTP service that records the calls that reach it (not the Tool controller's HEAD probes): the custom Tool and the page web_fetch reads. */
interface Fixture {
  url: string;
  hits: { path: string; idempotencyKey?: string; body: string }[];
  /** Runs while a /lookup call is held, before it is answered. */
  duringLookup?: () => Promise<void>;
  close(): Promise<void>;
}

async function startFixture(): Promise<Fixture> {
  const fixture: Fixture = { url: "", hits: [], close: async () => {} };
  const server: Server = createServer(async (request: IncomingMessage, response) => {
    let body = "";
    for await (const chunk of request) body += chunk;
    if (request.method === "HEAD") return void response.writeHead(200).end();
    fixture.hits.push({ path: request.url ?? "", idempotencyKey: request.headers["idempotency-key"] as string | undefined, body });
    if (request.url === "/lookup") {
      await fixture.duringLookup?.();
      response.writeHead(200, { "content-type": "application/json" }).end(JSON.stringify({ found: true, hit: fixture.hits.length }));
      return;
    }
    if (request.url === "/dump") return void response.writeHead(200, { "content-type": "text/plain" }).end("é".repeat(800 * 1024));
    response.writeHead(200, { "content-type": "text/html" }).end("<html><head><title>Fixture page</title></head><body><p>The fixture page says hello.</p></body></html>");
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  fixture.url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  fixture.close = () => new Promise((resolve) => server.close(() => resolve()));
  return fixture;
}

// The control plane's half of a coding-agent session's broker, with a real embedded Orka: a Task held in
// Running by a real attempt (its model answers after a minute), and a second credential for that Task
// standing in for the session's worker, whose brokered tools are frozen with it.
describe("brokered tool calls", () => {
  let orka: RunningOrka;
  let peer: LlmPeer;
  let fixture: Fixture;
  let runner: BrokeredCallRunner;
  let executed = 0;
  let cleanupDirs = () => {};
  const admin = (method: string, path: string, body?: unknown) =>
    fetch(`${orka.url}/api/v1/${path}`, {
      method,
      headers: { authorization: `Bearer ${EMBEDDED_ADMIN_TOKEN}`, ...(body ? { "content-type": "application/json" } : {}) },
      body: body ? JSON.stringify(body) : undefined,
    }).then(async (r) => ({ status: r.status, body: (await r.json()) as any }));
  const broker = (path: string, body: unknown, token = SESSION_TOKEN) =>
    fetch(`${orka.url}/internal/v1/broker/default/session-task/${path}`, {
      method: "POST", headers: { authorization: `Bearer ${token}`, "content-type": "application/json" }, body: JSON.stringify(body),
    }).then(async (r) => ({ status: r.status, body: r.status === 204 ? undefined : ((await r.json()) as any) }));
  const create = (kind: string, name: string, spec: object) => orka.store.create({ apiVersion: API_VERSION, kind, metadata: { name, namespace: "default" }, spec });
  const phaseOf = async (name: string) => (await orka.store.get<TaskSpec, TaskStatus>("Task", "default", name))?.status?.phase;
  const waitForPhase = async (name: string, phase: string) => {
    for (let i = 0; i < 200 && (await phaseOf(name)) !== phase; i++) await new Promise((r) => setTimeout(r, 50));
    expect(await phaseOf(name)).toBe(phase);
  };
  const proposals = async () => (await admin("GET", "memory-proposals?namespace=default")).body.items.length as number;
  const lookupHits = () => fixture.hits.filter((h) => h.path === "/lookup").length;
  const refusal = async (call: Promise<BrokerCallResult>) => {
    const err = await call.then(() => undefined, (e: unknown) => e);
    expect(err).toBeInstanceOf(BrokerRefusal);
    return { kind: (err as BrokerRefusal).kind, message: (err as BrokerRefusal).message };
  };
  const signal = () => new AbortController().signal;

  beforeAll(async () => {
    peer = await startLlmPeer();
    peer.setDelay(60_000, "m-hold");
    peer.script("m-hold", [{ text: "late" }]);
    peer.script("m-quick", [{ text: "done" }]);
    fixture = await startFixture();
    // Grants are enforced; only a Task that carries a transaction is checked.
    orka = await startEmbeddedOrka({ workerSlots: 1 }, {
      ORKA_ALLOW_LOOPBACK_EGRESS: "true",
      ORKA_TXN_TOKEN_ISSUER: "https://issuer.test",
      ORKA_TXN_TOKEN_AUDIENCE: "orka",
      ORKA_TXN_TOKEN_MODE: "enforce",
    });
    await create("Secret", "model-cred", { type: "Opaque", data: { "api-key": MODEL_KEY } });
    await create("Provider", "peer", { type: "openai", baseURL: `${peer.url}/v1`, secretRef: { name: "model-cred", key: "api-key" } });
    await create("Agent", "holder", { providerRef: { name: "peer" } });
    const lookupSpec = { description: "Look a thing up", parameters: { type: "object", properties: {} }, enabled: true, http: { url: `${fixture.url}/lookup`, method: "POST", timeout: "30s", authInject: "header" } };
    await create("Tool", "lookup", lookupSpec);
    await create("Tool", "dump", { ...lookupSpec, description: "Dump everything", http: { ...lookupSpec.http, url: `${fixture.url}/dump` } });

    // The one worker slot is taken, so the session's credential is written before its Task's real attempt,
    // which stays the Task's latest (the controller watches that one, alive, waiting for its model).
    await create("Task", "blocker", { type: "ai", agentRef: { name: "holder" }, prompt: "hold", priority: 500, ai: { model: "m-hold" } });
    await waitForPhase("blocker", "Running");
    const task = await create("Task", "session-task", { type: "ai", agentRef: { name: "holder" }, prompt: "hold", priority: 500, ai: { model: "m-hold" } });
    const [lookup, dump] = await Promise.all(["lookup", "dump"].map(async (name) => (await orka.store.get<ToolSpec, ToolStatus>("Tool", "default", name))!));
    orka.data.createAttempt({ id: "session-1", namespace: "default", task: "session-task", taskUid: task.metadata.uid!, number: 0, allowedTools: SESSION_TOOLS }, hashToken(SESSION_TOKEN));
    orka.data.recordSessionTools("session-1", [
      { name: "web_fetch", effect: "read_only" },
      { name: "remember", effect: "consequential" },
      { name: "lookup", effect: "consequential", digest: customToolDigest(lookup) },
      { name: "dump", effect: "consequential", digest: customToolDigest(dump) },
      { name: "recall_memory", effect: "read_only" },
    ]);
    expect((await admin("POST", "tasks/blocker/cancel?namespace=default", {})).status).toBe(200);
    await waitForPhase("session-task", "Running");

    const client = new ControlPlaneClient({ transport: httpTransport(orka.url), token: SESSION_TOKEN, namespace: "default", task: "session-task" });
    const attemptsDir = join(tmpdir(), "orka-broker-tests");
    const attemptId = `b-${process.pid}-${Date.now()}`;
    const dirs = await prepareAttemptDirs(attemptsDir, attemptId);
    makeAttemptDirs(dirs);
    cleanupDirs = () => rmSync(join(attemptsDir, attemptId), { recursive: true, force: true });
    const execute = toolExecutor({
      allowed: SESSION_TOOLS,
      customTools: new Set(["lookup", "dump"]),
      callCustomTool: async (name, args, key) => (await client.callTool(name, args, key)).result,
      context: createToolContext({
        namespace: "default",
        taskName: "session-task",
        dirs,
        settings: { fetch: { egress: { allowLoopback: true }, timeoutMs: 5000 }, search: { provider: "duckduckgo", timeoutMs: 2000 } },
        signal: new AbortController().signal,
        controlPlane: client,
      }),
    });
    const config = { task: { namespace: "default", name: "session-task", uid: task.metadata.uid!, type: "agent" } } as AttemptConfig;
    runner = brokeredToolRunner({ config, client, execute: (call, how) => (executed++, execute(call, how)) });
  }, 30_000);

  afterAll(async () => {
    await orka?.close();
    await peer?.close();
    await fixture?.close();
    cleanupDirs();
  });

  it("runs a read-only built-in without reserving it: the same call id runs again", async () => {
    const page = { url: `${fixture.url}/page` };
    const first = await runner({ name: "web_fetch", arguments: page, callId: "fetch-1" }, signal());
    expect(first.isError).toBe(false);
    expect(first.text).toContain("The fixture page says hello.");
    const again = await runner({ name: "web_fetch", arguments: page, callId: "fetch-1" }, signal());
    expect(again.replayed).toBeUndefined();
    expect(fixture.hits.filter((h) => h.path === "/page")).toHaveLength(2);
  });

  it("runs a consequential built-in once: the same call id is replayed from the ledger", async () => {
    const before = await proposals();
    const call = { name: "remember", arguments: { content: "the broker remembers once" }, callId: "remember-1" };
    const first = await runner(call, signal());
    expect(first).toMatchObject({ isError: false });
    expect(first.replayed).toBeUndefined();
    const runs = executed;
    const second = await runner(call, signal());
    expect(second).toEqual({ ...first, replayed: true });
    expect(executed).toBe(runs);
    expect(await proposals()).toBe(before + 1);
  });

  it("calls a custom HTTP Tool once per call id, with the operation id as its Idempotency-Key", async () => {
    const call = { name: "lookup", arguments: { q: "orka" }, callId: "lookup-1" };
    const first = await runner(call, signal());
    expect(JSON.parse(first.text)).toMatchObject({ found: true });
    const [hit] = fixture.hits.filter((h) => h.path === "/lookup");
    const cleared = await broker("calls", { tool: "lookup", callId: "lookup-1", arguments: { q: "orka" } });
    expect(hit.idempotencyKey).toBe(cleared.body.operationId);
    expect(hit.idempotencyKey).toMatch(/^[0-9a-f]{64}$/);
    expect(cleared.body.replay).toEqual({ text: first.text, isError: false });
    expect(await runner(call, signal())).toEqual({ ...first, replayed: true });
    expect(lookupHits()).toBe(1);
  });

  it("cuts a result to 1 MiB on a character boundary, and replays exactly what the CLI got", async () => {
    const first = await runner({ name: "dump", arguments: {}, callId: "dump-1" }, signal());
    expect(Buffer.byteLength(first.text)).toBeLessThanOrEqual(1024 * 1024);
    expect(first.text).toMatch(/^é+\n\[result truncated: a brokered call answers at most 1 MiB\]$/);
    expect(await runner({ name: "dump", arguments: {}, callId: "dump-1" }, signal())).toEqual({ ...first, replayed: true });
    expect(fixture.hits.filter((h) => h.path === "/dump")).toHaveLength(1);
  });

  it("refuses a call id used again with other arguments, and runs nothing", async () => {
    const hits = lookupHits();
    const refused = await refusal(runner({ name: "lookup", arguments: { q: "something else" }, callId: "lookup-1" }, signal()));
    expect(refused).toEqual({ kind: "not_authorized", message: "call id lookup-1 was already used with other arguments" });
    expect(lookupHits()).toBe(hits);
  });

  it("answers a call that started and never committed as an unknown outcome, and runs nothing", async () => {
    const hits = lookupHits();
    const started = await broker("calls", { tool: "lookup", callId: "crashed-1", arguments: { q: "x" } });
    expect(started).toMatchObject({ status: 200, body: { operationId: expect.stringMatching(/^[0-9a-f]{64}$/) } });
    expect(started.body.replay).toBeUndefined();
    const retried = await runner({ name: "lookup", arguments: { q: "x" }, callId: "crashed-1" }, signal());
    expect(retried.replayed).toBe(true);
    expect(retried.isError).toBe(true);
    expect(retried.text).toMatch(/^tool_execution_outcome_unknown: call crashed-1 of lookup started but its result was never recorded/);
    expect(lookupHits()).toBe(hits);
  });

  it("stops waiting when the call is aborted: nothing is sent for an aborted call, and one aborted mid-call stays unsettled", async () => {
    const hits = lookupHits();
    const aborted = AbortSignal.abort();
    expect(await refusal(runner({ name: "lookup", arguments: { q: "never" }, callId: "aborted-1" }, aborted))).toMatchObject({ kind: "failed" });
    expect(lookupHits()).toBe(hits);

    const controller = new AbortController();
    fixture.duringLookup = async () => {
      fixture.duringLookup = undefined;
      controller.abort();
    };
    const midway = await refusal(runner({ name: "lookup", arguments: { q: "midway" }, callId: "aborted-2" }, controller.signal));
    expect(midway).toEqual({ kind: "failed", message: "the call was cancelled while the tool ran; its result was dropped" });
    expect(lookupHits()).toBe(hits + 1);
    const retried = await runner({ name: "lookup", arguments: { q: "midway" }, callId: "aborted-2" }, signal());
    expect(retried).toMatchObject({ isError: true, replayed: true, text: expect.stringMatching(/^tool_execution_outcome_unknown: /) });
    expect(lookupHits()).toBe(hits + 1);
  });

  it("refuses a tool outside the session, a native name and a session tool the attempt was not given, with nothing run", async () => {
    const [hits, before, runs] = [lookupHits(), await proposals(), executed];
    for (const name of ["code_exec", "Bash", "mcp__orka__remember", "delegate_task"]) {
      expect(await refusal(runner({ name, arguments: {}, callId: `c-${name}` }, signal()))).toEqual({ kind: "not_authorized", message: `tool "${name}" is not allowed in this session` });
    }
    expect([lookupHits(), await proposals(), executed]).toEqual([hits, before, runs]);
  });

  it("validates the call strictly: unknown fields, a call id with whitespace or over 256 characters", async () => {
    const base = { tool: "remember", callId: "ok-1", arguments: { content: "x" } };
    expect((await broker("calls", { ...base, extra: true })).body.error.message).toBe('unknown field "extra": remove it or correct the spelling');
    expect((await broker("calls", { ...base, callId: "has space" })).body.error.message).toBe("callId: callId may not contain whitespace");
    expect((await broker("calls", { ...base, callId: "x".repeat(257) })).status).toBe(400);
    expect((await broker("calls", { ...base, arguments: [] })).status).toBe(400);
    expect((await broker("calls", base, "not-a-worker-token")).status).toBe(401);
  });

  it("refuses a tool that requires approval, which a coding-agent session cannot ask for", async () => {
    const agent = (await orka.store.get("Agent", "default", "holder"))!;
    const gated = await orka.store.update({ ...agent, spec: { ...(agent.spec as object), coordination: { enabled: true, autonomous: true, approvalRequiredTools: ["lookup"] } } });
    try {
      const hits = lookupHits();
      expect(await refusal(runner({ name: "lookup", arguments: { q: "gated" }, callId: "gated-1" }, signal()))).toEqual({
        kind: "not_authorized",
        message: "tool lookup requires approval, which coding-agent sessions cannot ask for",
      });
      expect(lookupHits()).toBe(hits);
    } finally {
      await orka.store.update({ ...gated, spec: { providerRef: { name: "peer" } } });
    }
  });

  it("gives back a replayed result scrubbed of the Task's Secret values", async () => {
    const cleared = await broker("calls", { tool: "remember", callId: "leaky-1", arguments: { content: "x" } });
    const posted = await broker(`calls/${cleared.body.operationId}/result`, { text: `the key is ${MODEL_KEY}`, isError: false });
    expect(posted.status).toBe(204);
    const replay = (await broker("calls", { tool: "remember", callId: "leaky-1", arguments: { content: "x" } })).body.replay;
    expect(replay.text).not.toContain(MODEL_KEY);
    expect(replay.text).toMatch(/^the key is \S+/);
  });

  it("refuses a result over 1 MiB", async () => {
    const cleared = await broker("calls", { tool: "remember", callId: "huge-1", arguments: { content: "x" } });
    const huge = await broker(`calls/${cleared.body.operationId}/result`, { text: "x".repeat(1024 * 1024 + 1), isError: false });
    expect(huge.status).toBe(413);
  });

  it("refuses a custom Tool edited after the session started, and calls nothing", async () => {
    const lookup = (await orka.store.get<ToolSpec, ToolStatus>("Tool", "default", "lookup"))!;
    await orka.store.update({ ...lookup, spec: { ...lookup.spec, description: "Look a thing up, differently" } });
    const hits = lookupHits();
    expect(await refusal(runner({ name: "lookup", arguments: { q: "after edit" }, callId: "edited-1" }, signal()))).toEqual({
      kind: "not_authorized",
      message: "custom Tool lookup changed since the session started",
    });
    expect(lookupHits()).toBe(hits);
  });

  it("refuses a tool the Task's transaction grant does not cover", async () => {
    const task = (await orka.store.get<TaskSpec, TaskStatus>("Task", "default", "session-task"))!;
    const claims = {
      profile: "transaction-token", id: "txn-1", issuer: "https://issuer.test", audience: "orka", subject: "someone", requestingWorkload: "ci",
      scope: "", scopes: [], contextDigest: "sha256:0", context: { allowedTools: JSON.stringify(["web_fetch"]) },
    };
    const granted = await orka.store.update({ ...task, spec: { ...task.spec, transaction: claims } as TaskSpec });
    try {
      const before = await proposals();
      const refused = await refusal(runner({ name: "remember", arguments: { content: "not granted" }, callId: "grant-1" }, signal()));
      expect(refused).toEqual({ kind: "not_authorized", message: 'tool "remember" is not allowed by token context' });
      expect(await proposals()).toBe(before);
    } finally {
      await orka.store.update({ ...granted, spec: { ...task.spec, transaction: undefined } });
    }
  });

  it("drops a result when the Task is cancelled while the call runs, and refuses every later call", async () => {
    const before = await proposals();
    fixture.duringLookup = async () => {
      fixture.duringLookup = undefined;
      expect((await admin("POST", "tasks/session-task/cancel?namespace=default", {})).status).toBe(200);
    };
    // The Tool is edited back to what the session froze, so only the cancel stands in the way.
    const lookup = (await orka.store.get<ToolSpec, ToolStatus>("Tool", "default", "lookup"))!;
    const frozen = orka.data.attemptByTokenHash(hashToken(SESSION_TOKEN))!.sessionTools!.find((t) => t.name === "lookup")!;
    expect(customToolDigest(lookup)).not.toBe(frozen.digest);
    orka.data.recordSessionTools("session-1", [{ name: "lookup", effect: "consequential", digest: customToolDigest(lookup) }, { name: "remember", effect: "consequential" }]);

    const dropped = await refusal(runner({ name: "lookup", arguments: { q: "cancel me" }, callId: "cancelled-1" }, signal()));
    expect(dropped).toEqual({ kind: "failed", message: "the session was revoked while the call ran; its result was dropped" });
    expect(await phaseOf("session-task")).toBe("Cancelled");

    const hits = lookupHits();
    for (const [name, args] of [["lookup", { q: "late" }], ["remember", { content: "late" }]] as const) {
      expect(await refusal(runner({ name, arguments: args, callId: `late-${name}` }, signal()))).toEqual({ kind: "not_authorized", message: "the task is not running: it is Cancelled" });
    }
    // A replay is no way around it either.
    const replayed = await broker("calls", { tool: "remember", callId: "remember-1", arguments: { content: "the broker remembers once" } });
    expect([replayed.status, replayed.body.error.message]).toEqual([403, "the task is not running: it is Cancelled"]);
    expect([lookupHits(), await proposals()]).toEqual([hits, before]);
  });

  it("refuses calls once the session's attempt has ended, or for a Task that finished", async () => {
    orka.data.finishAttempt("session-1", { state: "killed", reason: "session settled" });
    const ended = await broker("calls", { tool: "remember", callId: "ended-1", arguments: { content: "x" } });
    expect([ended.status, ended.body.error.message]).toEqual([403, "the task is not running: the session's attempt has ended"]);

    const finished = await create("Task", "finished-task", { type: "ai", agentRef: { name: "holder" }, prompt: "answer", priority: 500, ai: { model: "m-quick" } });
    await waitForPhase("finished-task", "Succeeded");
    const token = "finished-session-token-0123456789";
    orka.data.createAttempt({ id: "finished-1", namespace: "default", task: "finished-task", taskUid: finished.metadata.uid!, number: 0, allowedTools: ["remember"] }, hashToken(token));
    orka.data.recordSessionTools("finished-1", [{ name: "remember", effect: "consequential" }]);
    const before = await proposals();
    const late = await fetch(`${orka.url}/internal/v1/broker/default/finished-task/calls`, {
      method: "POST", headers: { authorization: `Bearer ${token}`, "content-type": "application/json" },
      body: JSON.stringify({ tool: "remember", callId: "late-1", arguments: { content: "x" } }),
    });
    expect([late.status, ((await late.json()) as any).error.message]).toEqual([403, "the task is not running: it is Succeeded"]);
    // Another Task's credential is no way into this one.
    const crossed = await fetch(`${orka.url}/internal/v1/broker/default/session-task/calls`, {
      method: "POST", headers: { authorization: `Bearer ${token}`, "content-type": "application/json" },
      body: JSON.stringify({ tool: "remember", callId: "cross-1", arguments: { content: "x" } }),
    });
    expect([crossed.status, ((await crossed.json()) as any).error.message]).toEqual([403, "the session's token is not valid for task default/session-task"]);
    expect(await proposals()).toBe(before);
  });
});
