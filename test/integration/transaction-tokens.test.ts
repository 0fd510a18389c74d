import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { COORDINATOR_TOOLS, MEMORY_TOOLS } from "../../src/tools/assignment.ts";
import { startOrkaWithPeer } from "../helpers/orka-with-peer.ts";
import type { OrkaUnderTest } from "../helpers/orka-server.ts";
import { toolResultsOf, type LlmPeer } from "../peers/llm-server.ts";
import { startTokenIssuer, type TokenIssuer } from "../peers/token-issuer.ts";

const SCOPES = "orka:tasks:create orka:tasks:get orka:tasks:list orka:memory:read orka:memory:write orka:tools:read orka:tools:use orka:providers:use";
const CHILD_SCOPE = "orka:tasks:get orka:agents:read";
const AGENTS = `
apiVersion: core.orka.ai/v1alpha1
kind: Agent
metadata: {name: helper}
spec: {providerRef: {name: peer}, model: {name: m-helper}}
---
apiVersion: core.orka.ai/v1alpha1
kind: Agent
metadata: {name: boss}
spec:
  providerRef: {name: peer}
  model: {name: m-boss}
  coordination: {enabled: true, allowedAgents: [{name: helper}]}
---
apiVersion: core.orka.ai/v1alpha1
kind: Agent
metadata: {name: auto}
spec:
  providerRef: {name: peer}
  model: {name: m-auto}
  coordination: {enabled: true, autonomous: true, allowedAgents: [{name: helper}]}
`;

/** The REST API with a transaction token in the Txn-Token header. */
async function txnCall(orka: OrkaUnderTest, token: string, method: string, path: string, body?: unknown, header = "txn-token") {
  const response = await fetch(`${orka.url}${path}`, {
    method,
    headers: { [header]: header === "authorization" ? `Bearer ${token}` : token, ...(body !== undefined ? { "content-type": "application/json" } : {}) },
    body: body !== undefined ? JSON.stringify(body) : undefined,
  });
  const text = await response.text();
  return { status: response.status, body: text ? JSON.parse(text) : undefined };
}

const aiTask = (name: string, extra: Record<string, unknown> = {}) => ({
  name,
  type: "ai",
  prompt: "hello",
  ai: { providerRef: { name: "peer" }, model: "m-plain", tools: ["web_search"] },
  ...extra,
});

describe("transaction tokens in enforce mode", () => {
  let issuer: TokenIssuer;
  let orka: OrkaUnderTest;
  let peer: LlmPeer;
  let stop: () => Promise<void>;
  const mint = (tctx: Record<string, unknown>, scope = SCOPES, options = {}) => issuer.mint(scope, { tctx: { namespace: "default", ...tctx }, ...options });

  beforeAll(async () => {
    issuer = await startTokenIssuer();
    const subjectFile = join(mkdtempSync(join(tmpdir(), "orka-subject-")), "token");
    writeFileSync(subjectFile, "workload-subject-token-value");
    ({ orka, peer, stop } = await startOrkaWithPeer(AGENTS, {
      ORKA_TXN_TOKEN_ISSUER: issuer.url,
      ORKA_TXN_TOKEN_AUDIENCE: issuer.audience,
      ORKA_TXN_TOKEN_MODE: "enforce",
      // A test Tool calls the LLM peer on loopback.
      ORKA_ALLOW_LOOPBACK_EGRESS: "true",
      ORKA_CONTEXT_TOKEN_TTS_ENDPOINT: `${issuer.url}/token`,
      ORKA_CONTEXT_TOKEN_SUBJECT_TOKEN_FILE: subjectFile,
      ORKA_CONTEXT_TOKEN_CHILD_SCOPE: CHILD_SCOPE,
      ORKA_LOG_LEVEL: "info",
    }));
  });
  afterAll(async () => {
    await stop();
    await issuer.close();
  });

  it("refuses forged, expired, mistyped and wrongly signed tokens with 401 invalid token", async () => {
    const good = await mint({});
    expect((await txnCall(orka, good, "GET", "/api/v1/tasks")).status).toBe(200);
    const bad = {
      "alg none": await mint({}, SCOPES, { alg: "none" }),
      HS256: await mint({}, SCOPES, { alg: "HS256" }),
      "wrong typ": await mint({}, SCOPES, { typ: "JWT" }),
      "wrong audience": await mint({}, SCOPES, { claims: { aud: "someone-else" } }),
      expired: await mint({}, SCOPES, { expiresIn: -600 }),
      "no txn": await mint({}, SCOPES, { claims: { txn: undefined } }),
      "unknown kid": await mint({}, SCOPES, { unknownKey: true }),
      "wrong issuer": await mint({}, SCOPES, { claims: { iss: "https://issuer.example" } }),
      "tampered payload": good.replace(/\.([^.]+)\./, (_m, payload: string) => `.${Buffer.from(JSON.stringify({ ...JSON.parse(Buffer.from(payload, "base64url").toString()), scope: "orka:admin" })).toString("base64url")}.`),
    };
    for (const [what, token] of Object.entries(bad)) {
      const response = await txnCall(orka, token, "GET", "/api/v1/tasks");
      expect([what, response.status, response.body.error.message]).toEqual([what, 401, "invalid token"]);
    }
    const asBearer = await txnCall(orka, good, "GET", "/api/v1/tasks", undefined, "authorization");
    expect([asBearer.status, asBearer.body.error.message]).toEqual([
      401,
      "transaction tokens must be sent via the Txn-Token header unless Authorization: Bearer is explicitly enabled",
    ]);
    const garbled = await txnCall(orka, "not a jwt", "GET", "/api/v1/tasks");
    expect([garbled.status, garbled.body.error.message]).toEqual([401, "invalid context token header format"]);

    // The CLI sends --txn-token as the Txn-Token header, which then is the credential (not the admin token).
    const cliRefused = await orka.cli(["--txn-token", bad.expired, "task", "list"]);
    expect([cliRefused.code, cliRefused.stderr]).toEqual([1, expect.stringContaining("invalid token")]);
    const whoami = await orka.cli(["--txn-token", good, "auth", "whoami"]);
    expect(whoami.stdout).toContain("alice@example.com");
  });

  it("needs the grant to cover the auto-added memory tools, and refuses without creating anything", async () => {
    const onlySelected = await mint({ allowedTools: ["web_search"] });
    const refused = await txnCall(orka, onlySelected, "POST", "/api/v1/tasks", aiTask("grant-narrow"));
    expect([refused.status, refused.body.error.message]).toEqual([403, "context token is not authorized for createTask"]);
    expect((await orka.api("GET", "/api/v1/tasks/grant-narrow")).status).toBe(404);
    const audit = await orka.api("GET", "/api/v1/audit?limit=1");
    expect(audit.body.items[0]).toMatchObject({ status: 403, path: "/api/v1/tasks", outcome: "refused" });
    expect(audit.body.items[0].reason).toContain('tool_not_allowed: tool "recall_memory" is not allowed by token context');

    peer.script("m-plain", [{ text: "done" }]);
    const covered = await mint({ allowedTools: ["web_search", ...MEMORY_TOOLS] });
    const created = await txnCall(orka, covered, "POST", "/api/v1/tasks", aiTask("grant-covered"));
    expect(created.status).toBe(201);
    expect((await orka.waitFor("grant-covered")).status.phase).toBe("Succeeded");
    const empty = await mint({ allowedTools: [] });
    expect((await txnCall(orka, empty, "POST", "/api/v1/tasks", aiTask("grant-empty", { ai: { providerRef: { name: "peer" }, model: "m-plain" } }))).status).toBe(403);
  });

  it("makes a coordinator's grant list its injected tools, unless injection is disabled, and request_approval when autonomous", async () => {
    const boss = (name: string, extra = {}) => ({ name, type: "ai", agentRef: "boss", prompt: "plan", ...extra });
    const withoutDelegate = await mint({ allowedTools: [...MEMORY_TOOLS, ...COORDINATOR_TOOLS.filter((t) => t !== "delegate_task")] });
    const refused = await txnCall(orka, withoutDelegate, "POST", "/api/v1/tasks", boss("coord-a"));
    expect([refused.status, refused.body.error.message]).toEqual([403, "context token is not authorized for createTask"]);

    peer.script("m-boss", [{ text: "nothing to delegate" }, { text: "nothing to delegate" }]);
    const disabled = boss("coord-b", { annotations: { "orka.ai/disable-coordination-tool-injection": "true" } });
    expect((await txnCall(orka, await mint({ allowedTools: [...MEMORY_TOOLS] }), "POST", "/api/v1/tasks", disabled)).status).toBe(201);

    const everyCoordinatorTool = [...MEMORY_TOOLS, ...COORDINATOR_TOOLS];
    const autonomous = { name: "coord-c", type: "ai", agentRef: "auto", prompt: "go" };
    const noApproval = await txnCall(orka, await mint({ allowedTools: everyCoordinatorTool }), "POST", "/api/v1/tasks", autonomous);
    expect([noApproval.status, noApproval.body.error.message]).toEqual([403, "context token is not authorized for createTask"]);
    const audit = await orka.api("GET", "/api/v1/audit?limit=1");
    expect(audit.body.items[0].reason).toContain('tool "request_approval" is not allowed by token context');
  });

  it("refuses a call to a tool the Task was not given: no side effect, a rejected-call event", async () => {
    peer.script("m-outside", [
      { toolCalls: [{ name: "file_write", arguments: { path: "planted.txt", content: "should not exist" } }] },
      { toolCalls: [{ name: "file_read", arguments: { path: "planted.txt" } }] },
      { text: "done" },
    ]);
    const token = await mint({ allowedTools: ["file_read", ...MEMORY_TOOLS] });
    const task = aiTask("outside-call", { ai: { providerRef: { name: "peer" }, model: "m-outside", tools: ["file_read"] } });
    expect((await txnCall(orka, token, "POST", "/api/v1/tasks", task)).status).toBe(201);
    expect((await orka.waitFor("outside-call")).status.phase).toBe("Succeeded");
    const requests = peer.requests.filter((r) => r.body.model === "m-outside");
    const results = toolResultsOf(requests[2].body);
    expect(results[0]).toContain('tool "file_write" was not enabled for this task');
    expect(results[1]).toMatch(/not found|no such file|does not exist/i);
    const events = (await orka.api("GET", "/api/v1/tasks/outside-call/events")).body.events as any[];
    expect(events.find((e) => e.type === "ToolCallRejected")).toMatchObject({ toolName: "file_write", summary: "file_write: tool_not_enabled" });
    expect(events.some((e) => e.type === "ToolCallCompleted" && e.toolName === "file_write")).toBe(false);
  });

  it("checks the stamped grant again when an attempt starts: an Agent that gained code_exec fails the Task and nothing runs", async () => {
    const agent = { metadata: { name: "searcher" }, spec: { providerRef: { name: "peer" }, model: { name: "m-searcher" }, tools: [{ name: "web_search" }] } };
    expect((await orka.api("POST", "/api/v1/agents", agent)).status).toBe(201);
    // A Task holding the session keeps the granted Task Pending while its Agent changes.
    peer.setDelay(3000, "m-holder");
    peer.script("m-holder", [{ text: "held" }]);
    const holder = { name: "session-holder", type: "ai", prompt: "hold", ai: { providerRef: { name: "peer" }, model: "m-holder" }, sessionRef: { name: "held", create: true } };
    expect((await orka.api("POST", "/api/v1/tasks", holder)).status).toBe(201);
    await orka.waitFor("session-holder", ["Running"]);

    peer.script("m-searcher", [{ toolCalls: [{ name: "code_exec", arguments: { language: "bash", code: "echo ran" } }] }, { text: "done" }]);
    const token = await mint({ allowedTools: ["web_search", ...MEMORY_TOOLS] });
    const task = { name: "grant-recheck", type: "ai", agentRef: "searcher", prompt: "search", sessionRef: { name: "held" } };
    expect((await txnCall(orka, token, "POST", "/api/v1/tasks", task)).status).toBe(201);
    const current = (await orka.api("GET", "/api/v1/agents/searcher")).body;
    const widened = await orka.api("PUT", "/api/v1/agents/searcher", {
      metadata: { name: "searcher", resourceVersion: current.metadata.resourceVersion },
      spec: { ...current.spec, tools: [{ name: "web_search" }, { name: "code_exec" }] },
    });
    expect(widened.status).toBe(200);
    expect((await orka.api("GET", "/api/v1/tasks/grant-recheck")).body.status.phase).toBe("Pending");

    const failed = await orka.waitFor("grant-recheck", ["Succeeded", "Failed", "Cancelled"], 30_000);
    peer.setDelay(0, "m-holder");
    expect([failed.status.phase, failed.status.message]).toEqual(["Failed", 'context token is not authorized for startTask: tool "code_exec" is not allowed by token context']);
    expect(failed.status.attempts ?? 0).toBe(0);
    expect(peer.requests.filter((r) => r.body.model === "m-searcher")).toHaveLength(0);
    const events = (await orka.api("GET", "/api/v1/tasks/grant-recheck/events")).body.events as any[];
    expect(events.filter((e) => e.toolName === "code_exec")).toEqual([]);
    const audit = (await orka.api("GET", "/api/v1/audit?limit=20")).body.items as any[];
    expect(audit.find((e) => e.reason.startsWith("startTask:"))).toMatchObject({ status: 403, namespace: "default", outcome: "refused", reason: expect.stringContaining('tool "code_exec"') });
  });

  it("keeps a token in its tctx namespace on the public API", async () => {
    const token = await mint({ namespace: "team-b" });
    const elsewhere = await txnCall(orka, token, "GET", "/api/v1/tasks?namespace=default");
    expect([elsewhere.status, elsewhere.body.error.message]).toEqual([403, "context token is not authorized for listTasks"]);
    const created = await txnCall(orka, token, "POST", "/api/v1/tasks", { name: "elsewhere", namespace: "default", type: "container", command: ["true"] });
    expect(created.status).toBe(403);
    expect((await orka.api("GET", "/api/v1/tasks/elsewhere")).status).toBe(404);
    const own = await txnCall(orka, token, "GET", "/api/v1/tasks");
    expect(own.status).toBe(200);
    const missingScope = await txnCall(orka, await mint({}, "orka:tasks:get"), "GET", "/api/v1/tasks");
    expect([missingScope.status, missingScope.body.error.message]).toEqual([403, "context token is not authorized for listTasks"]);
  });

  it("lets only a review scope review memory proposals; proposing changes no memory", async () => {
    const token = await mint({});
    // A proposer cannot accept its own proposal: a status in the body is refused as an unknown field.
    const selfAccepted = await txnCall(orka, token, "POST", "/api/v1/memory-proposals", { type: "memory", title: "Deploys", content: "Deploys happen on Tuesdays", status: "accepted" });
    expect([selfAccepted.status, selfAccepted.body.error.message]).toEqual([400, expect.stringContaining('"status"')]);
    const proposal = await txnCall(orka, token, "POST", "/api/v1/memory-proposals", { type: "memory", title: "Deploys", content: "Deploys happen on Tuesdays" });
    expect([proposal.status, proposal.body.status]).toEqual([201, "pending"]);
    const review = await txnCall(orka, token, "POST", `/api/v1/memory-proposals/${proposal.body.id}/review`, { status: "accepted" });
    expect([review.status, review.body.error.message]).toEqual([403, "context token is not authorized for reviewMemoryProposal"]);
    expect((await orka.api("GET", "/api/v1/memories")).body.items).toHaveLength(0);
    const reviewer = await mint({}, `${SCOPES} orka:memory:review`);
    expect((await txnCall(orka, reviewer, "POST", `/api/v1/memory-proposals/${proposal.body.id}/review`, { status: "accepted" })).status).toBe(204);
    expect((await txnCall(orka, reviewer, "POST", `/api/v1/memory-proposals/${proposal.body.id}/apply`, {})).status).toBe(200);
    expect((await orka.api("GET", "/api/v1/memories")).body.items).toHaveLength(1);
  });

  it("stamps provenance from the verified token, refuses client-supplied provenance, and never keeps the raw token", async () => {
    const token = await mint({ allowedTools: [] });
    const forged = await txnCall(orka, token, "POST", "/api/v1/tasks", { name: "forged", type: "container", command: ["true"], transaction: { id: "mine" } });
    expect([forged.status, forged.body.error.message]).toEqual([400, "transaction cannot be set by clients"]);
    const created = await txnCall(orka, token, "POST", "/api/v1/tasks", { name: "stamped", type: "container", command: ["true"] });
    expect(created.status).toBe(201);
    const { spec, metadata } = created.body;
    expect(spec.requestedBy).toMatchObject({ subject: "alice@example.com", issuer: issuer.url, username: "alice@example.com" });
    expect(spec.transaction).toMatchObject({ profile: "transaction-token", issuer: issuer.url, audience: "orka", subject: "alice@example.com", requestingWorkload: "ci-pipeline", scopes: SCOPES.split(" ") });
    expect(spec.transaction.context).toEqual({ namespace: "default", allowedTools: "[]" });
    expect(spec.transaction.contextDigest).toMatch(/^sha256:[0-9a-f]{64}$/);
    expect(metadata.labels).toMatchObject({ "orka.ai/transaction-id": spec.transaction.id, "orka.ai/auth-profile": "transaction-token" });
    expect(metadata.annotations).toMatchObject({ "orka.ai/transaction-subject": "alice@example.com", "orka.ai/context-token-profile": "transaction-token" });
    await orka.waitFor("stamped");
    const events = await orka.api("GET", "/api/v1/tasks/stamped/events");
    for (const text of [JSON.stringify(created.body), JSON.stringify(events.body), orka.output()]) expect(text).not.toContain(token.split(".")[2]);
  });

  it("gives a delegated child a narrower token by exchange, and leaves nothing when the child scope is not a subset", async () => {
    const grant = [...MEMORY_TOOLS, ...COORDINATOR_TOOLS];
    // The container child proves its token is mounted without ever printing it.
    const probe = 'test "$(wc -c < "$ORKA_TRANSACTION_TOKEN_FILE")" -gt 100 && echo token-mounted';
    peer.script("m-boss", [
      {
        toolCalls: [
          { name: "delegate_task", arguments: { agent: "helper", prompt: "sub job" } },
          { name: "create_container_task", arguments: { command: ["sh", "-c", probe] } },
        ],
      },
      { text: "delegated" },
    ]);
    peer.script("m-helper", [{ text: "sub done" }]);
    const wide = await mint({ allowedTools: grant }, `${SCOPES} ${CHILD_SCOPE}`);
    expect((await txnCall(orka, wide, "POST", "/api/v1/tasks", { name: "boss-wide", type: "ai", agentRef: "boss", prompt: "go" })).status).toBe(201);
    expect((await orka.waitFor("boss-wide")).status.phase).toBe("Succeeded");
    const children = (await orka.api("GET", "/api/v1/tasks?labelSelector=orka.ai/parent-task=boss-wide")).body.items as any[];
    expect(children.map((c) => c.spec.type).sort()).toEqual(["ai", "container"]);
    const container = children.find((c) => c.spec.type === "container");
    await orka.waitFor(container.metadata.name);
    expect((await orka.api("GET", `/api/v1/tasks/${container.metadata.name}/result`)).body.result.trim()).toBe("token-mounted");
    const child = children.find((c) => c.spec.type === "ai");
    expect(child.spec.transaction.scopes).toEqual(CHILD_SCOPE.split(" "));
    const secretName = child.metadata.annotations["orka.ai/transaction-token-secret"];
    const secret = await orka.api("GET", `/api/v1/secrets/${secretName}`);
    expect(secret.status).toBe(200);
    const exchange = issuer.exchanges.map((e) => e.form).find((form) => JSON.parse(form.request_details).operation === "delegateTask")!;
    expect(exchange).toMatchObject({
      grant_type: "urn:ietf:params:oauth:grant-type:token-exchange",
      requested_token_type: "urn:ietf:params:oauth:token-type:txn_token",
      subject_token: "workload-subject-token-value",
      scope: CHILD_SCOPE,
    });
    expect(JSON.parse(exchange.request_details)).toMatchObject({ operation: "delegateTask", parentTask: "boss-wide", namespace: "default", agent: "helper" });

    peer.script("m-boss", [{ toolCalls: [{ name: "delegate_task", arguments: { agent: "helper", prompt: "sub job" } }] }, { text: "could not" }]);
    const exchangesBefore = issuer.exchanges.length;
    const narrow = await mint({ allowedTools: grant });
    expect((await txnCall(orka, narrow, "POST", "/api/v1/tasks", { name: "boss-narrow", type: "ai", agentRef: "boss", prompt: "go" })).status).toBe(201);
    await orka.waitFor("boss-narrow");
    const result = toolResultsOf(peer.requests.filter((r) => r.body.model === "m-boss").at(-1)!.body).at(-1)!;
    expect(result).toContain('child transaction scope "orka:agents:read" is not present in parent transaction scopes');
    expect((await orka.api("GET", "/api/v1/tasks?labelSelector=orka.ai/parent-task=boss-narrow")).body.items).toHaveLength(0);
    const secrets = (await orka.api("GET", "/api/v1/secrets")).body.items as any[];
    expect(secrets.filter((s) => s.name.startsWith("boss-narrow-txn-"))).toHaveLength(0);
    expect(issuer.exchanges.length).toBe(exchangesBefore);

    // A token service whose reply is not a transaction token: the delegation fails and leaves nothing.
    issuer.exchangeReplyOverride = { token_type: "Bearer" };
    try {
      peer.script("m-boss", [{ toolCalls: [{ name: "delegate_task", arguments: { agent: "helper", prompt: "sub job" } }] }, { text: "could not" }]);
      expect((await txnCall(orka, wide, "POST", "/api/v1/tasks", { name: "boss-badtts", type: "ai", agentRef: "boss", prompt: "go" })).status).toBe(201);
      await orka.waitFor("boss-badtts");
      const refusal = toolResultsOf(peer.requests.filter((r) => r.body.model === "m-boss").at(-1)!.body).at(-1)!;
      expect(refusal).toContain("token_type must be N_A");
      expect(refusal).not.toContain("eyJ"); // no token in the error
      expect((await orka.api("GET", "/api/v1/tasks?labelSelector=orka.ai/parent-task=boss-badtts")).body.items).toHaveLength(0);
      expect(((await orka.api("GET", "/api/v1/secrets")).body.items as any[]).filter((s) => s.name.startsWith("boss-badtts-txn-"))).toHaveLength(0);
    } finally {
      issuer.exchangeReplyOverride = undefined;
    }
  });

  it("lets the compatible endpoints run tools only with orka:tools:use and granted tools, and lists only granted tools", async () => {
    peer.script("m-compat", [{ text: "plain answer" }]);
    const chat = (token: string, headers: Record<string, string> = {}) =>
      fetch(`${orka.url}/openai/v1/chat/completions`, {
        method: "POST",
        headers: { "txn-token": token, "content-type": "application/json", ...headers },
        body: JSON.stringify({ model: "peer/m-compat", messages: [{ role: "user", content: "hi" }] }),
      });
    const noToolScope = await mint({}, SCOPES.replace(" orka:tools:use", ""));
    const refused = await chat(noToolScope);
    expect([refused.status, ((await refused.json()) as any).error.message]).toEqual([403, "context token is not authorized for createChatCompletion"]);
    expect((await chat(noToolScope, { "x-orka-tools": "disabled" })).status).toBe(200);
    const partial = await chat(await mint({ allowedTools: ["web_search", "web_fetch"] }));
    expect(partial.status).toBe(403);
    const granted = await chat(await mint({ allowedTools: ["web_search", "code_exec", "file_read", "web_fetch", "file_write"] }));
    expect(granted.status).toBe(200);

    const tools = await txnCall(orka, await mint({ allowedTools: ["web_search", "file_read"] }), "GET", "/api/v1/tools");
    expect((tools.body.items as any[]).map((t) => t.name).sort()).toEqual(["file_read", "web_search"]);
  });

  it("binds credentials to tctx.secret at creation, and gives a structured error when a credential is used without the scope", async () => {
    const workspaceTask = (name: string, secret: string) => ({
      name,
      type: "container",
      command: ["true"],
      workspace: { intent: "read", gitRepo: "https://github.com/team/app.git", readCredentialRef: secret },
    });
    const token = await mint({ secret: "repo-cred" }, `${SCOPES} orka:secrets:credentials:read`);
    const other = await txnCall(orka, token, "POST", "/api/v1/tasks", workspaceTask("ws-other", "other-cred"));
    expect([other.status, other.body.error.message]).toEqual([403, "context token is not authorized for createTask"]);
    const noScope = await txnCall(orka, await mint({ secret: "repo-cred" }), "POST", "/api/v1/tasks", workspaceTask("ws-noscope", "repo-cred"));
    expect(noScope.status).toBe(403);
    expect((await txnCall(orka, token, "POST", "/api/v1/tasks", workspaceTask("ws-bound", "repo-cred"))).status).toBe(201);

    // A Tool that gains a credential after the Task was admitted: the use is checked again.
    await orka.cli(["apply", "-f", "-"], `
apiVersion: core.orka.ai/v1alpha1
kind: Tool
metadata: {name: lookup}
spec: {description: Look something up, http: {url: "${peer.url}/lookup"}}
---
apiVersion: v1
kind: Secret
metadata: {name: lookup-cred}
stringData: {key: lookup-secret-value}
`);
    peer.setDelay(1500, "m-cred");
    peer.script("m-cred", [{ toolCalls: [{ name: "lookup", arguments: { q: "x" } }] }, { text: "done" }]);
    const toolToken = await mint({ allowedTools: ["lookup", ...MEMORY_TOOLS] });
    const task = aiTask("cred-use", { ai: { providerRef: { name: "peer" }, model: "m-cred", tools: ["lookup"] } });
    expect((await txnCall(orka, toolToken, "POST", "/api/v1/tasks", task)).status).toBe(201);
    const tool = await orka.api("GET", "/api/v1/tools/lookup");
    const updated = await orka.api("PUT", "/api/v1/tools/lookup", {
      metadata: { name: "lookup", resourceVersion: tool.body.metadata?.resourceVersion },
      spec: { description: "Look something up", http: { url: `${peer.url}/lookup`, authSecretRef: { name: "lookup-cred", key: "key" } } },
    });
    expect(updated.status).toBe(200);
    expect((await orka.waitFor("cred-use")).status.phase).toBe("Succeeded");
    peer.setDelay(0, "m-cred");
    const result = JSON.parse(toolResultsOf(peer.requests.filter((r) => r.body.model === "m-cred").at(-1)!.body)[0]);
    expect(result).toMatchObject({ errorType: "authorization_failed" });
    expect(result.suggestion).toContain("orka:secrets:credentials:read");
    // The controller's availability probe may reach the Tool; the credential never does.
    expect(JSON.stringify(peer.requests.filter((r) => r.path === "/lookup"))).not.toContain("lookup-secret-value");
  });
});

describe("transaction tokens in audit mode", () => {
  let issuer: TokenIssuer;
  let orka: OrkaUnderTest;
  let peer: LlmPeer;
  let stop: () => Promise<void>;

  beforeAll(async () => {
    issuer = await startTokenIssuer();
    ({ orka, peer, stop } = await startOrkaWithPeer(AGENTS, { ORKA_TXN_TOKEN_ISSUER: issuer.url, ORKA_TXN_TOKEN_AUDIENCE: issuer.audience, ORKA_TXN_TOKEN_MODE: "audit" }));
  });
  afterAll(async () => {
    await stop();
    await issuer.close();
  });

  it("lets the same requests through, and logs and counts each failure", async () => {
    const token = await issuer.mint(SCOPES, { tctx: { namespace: "default", allowedTools: ["web_search"] } });
    const created = await txnCall(orka, token, "POST", "/api/v1/tasks", aiTask("audited"));
    expect(created.status).toBe(201);
    const coordinator = await txnCall(orka, token, "POST", "/api/v1/tasks", { name: "audited-boss", type: "ai", agentRef: "boss", prompt: "x" });
    expect(coordinator.status).toBe(201);
    const audit = (await orka.api("GET", "/api/v1/audit?limit=10")).body.items as any[];
    // Creation's records; each Task's start, rechecked, may add its own (tested below).
    const allowed = audit.filter((e) => e.outcome === "allowed-in-audit-mode" && e.path === "/api/v1/tasks");
    expect(allowed).toHaveLength(2);
    expect(allowed.map((e) => e.reason).join("\n")).toContain('tool "delegate_task" is not allowed by token context');
    expect(allowed[0]).toMatchObject({ status: 200, path: "/api/v1/tasks", principal: "alice@example.com" });
    expect(orka.output()).toContain("transaction grant failure allowed in audit mode");
    const bad = await issuer.mint(SCOPES, { alg: "none" });
    expect((await txnCall(orka, bad, "GET", "/api/v1/tasks")).status).toBe(401);
  });

  it("rechecks the grant when an attempt starts and records what an Agent gained since creation, letting the Task run", async () => {
    const agent = { metadata: { name: "audit-searcher" }, spec: { providerRef: { name: "peer" }, model: { name: "m-audit-searcher" }, tools: [{ name: "web_search" }] } };
    expect((await orka.api("POST", "/api/v1/agents", agent)).status).toBe(201);
    // A Task holding the session keeps the granted Task Pending while its Agent changes.
    peer.setDelay(3000, "m-audit-holder");
    peer.script("m-audit-holder", [{ text: "held" }]);
    const holder = { name: "audit-holder", type: "ai", prompt: "hold", ai: { providerRef: { name: "peer" }, model: "m-audit-holder" }, sessionRef: { name: "audit-held", create: true } };
    expect((await orka.api("POST", "/api/v1/tasks", holder)).status).toBe(201);
    await orka.waitFor("audit-holder", ["Running"]);

    // The peer counts turns over the whole conversation, and the session already holds the holder's turn.
    peer.script("m-audit-searcher", [{ text: "searched" }, { text: "searched" }]);
    const token = await issuer.mint(SCOPES, { tctx: { namespace: "default", allowedTools: ["web_search", ...MEMORY_TOOLS] } });
    const task = { name: "audit-recheck", type: "ai", agentRef: "audit-searcher", prompt: "search", sessionRef: { name: "audit-held" } };
    expect((await txnCall(orka, token, "POST", "/api/v1/tasks", task)).status).toBe(201);
    const current = (await orka.api("GET", "/api/v1/agents/audit-searcher")).body;
    const widened = await orka.api("PUT", "/api/v1/agents/audit-searcher", {
      metadata: { name: "audit-searcher", resourceVersion: current.metadata.resourceVersion },
      spec: { ...current.spec, tools: [{ name: "web_search" }, { name: "code_exec" }] },
    });
    expect(widened.status).toBe(200);
    expect((await orka.api("GET", "/api/v1/tasks/audit-recheck")).body.status.phase).toBe("Pending");

    const done = await orka.waitFor("audit-recheck", ["Succeeded", "Failed", "Cancelled"], 30_000);
    peer.setDelay(0, "m-audit-holder");
    expect(done.status.phase).toBe("Succeeded");
    const audit = (await orka.api("GET", "/api/v1/audit?limit=50")).body.items as any[];
    expect(audit.filter((e) => e.path === "tasks/audit-recheck")).toEqual([
      expect.objectContaining({
        status: 200,
        outcome: "allowed-in-audit-mode",
        principal: "alice@example.com",
        reason: expect.stringMatching(/^startTask: tool_not_allowed: tool "code_exec" is not allowed by token context/),
      }),
    ]);
  });

  it("keeps a token bound by tctx.namespace to that namespace, as every namespace-bound caller is", async () => {
    const token = await issuer.mint(SCOPES, { tctx: { namespace: "default" } });
    const elsewhere = await txnCall(orka, token, "GET", "/api/v1/tasks?namespace=team-b");
    expect([elsewhere.status, elsewhere.body.error.message]).toEqual([403, 'namespace "team-b" not allowed, restricted to "default"']);
    expect((await txnCall(orka, token, "GET", "/api/v1/tasks")).status).toBe(200);
  });
});
