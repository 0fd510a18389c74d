import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startOrkaServer, type OrkaUnderTest } from "../helpers/orka-server.ts";

// The codes and messages of the REST API of a real server.
describe("REST API of a real server: status codes and error messages", () => {
  let orka: OrkaUnderTest;
  let teamToken: string;
  beforeAll(async () => {
    orka = await startOrkaServer({ ORKA_ALLOW_LOOPBACK_EGRESS: "true" }); // a Tool probes this server itself
    teamToken = (await orka.api("POST", "/api/v1/auth/tokens", { name: "team-a", namespace: "team-a" })).body.token;
  });
  afterAll(() => orka.stop());

  it("needs a bearer token: 401 missing authorization header / invalid token", async () => {
    expect(await orka.api("GET", "/api/v1/tasks", undefined, "")).toEqual({ status: 401, body: { error: { code: 401, message: "missing authorization header" } } });
    expect(await orka.api("GET", "/api/v1/tasks", undefined, "wrong")).toEqual({ status: 401, body: { error: { code: 401, message: "invalid token" } } });
    expect((await orka.api("GET", "/api/v1/auth/validate")).body).toEqual({ authenticated: true });
    expect((await fetch(`${orka.url}/healthz`)).status).toBe(200);
    expect((await fetch(`${orka.url}/readyz`)).status).toBe(200);
  });

  it("keeps a namespace-bound token in its namespace", async () => {
    const created = await orka.api("POST", "/api/v1/tasks", { name: "mine", type: "container", command: ["true"] }, teamToken);
    expect(created.status).toBe(201);
    expect(created.body.metadata.namespace).toBe("team-a");
    expect(created.body.spec.requestedBy).toEqual({ username: "team-a", roles: ["user"] });
    for (const [method, path, body] of [
      ["GET", "/api/v1/tasks?namespace=default"],
      ["POST", "/api/v1/tasks", { name: "x", namespace: "default", type: "container", command: ["true"] }],
      ["GET", "/api/v1/agents?namespace=default"],
      ["GET", "/api/v1/secrets?namespace=default"],
      ["DELETE", "/api/v1/tasks/mine?namespace=default"],
    ] as const) {
      expect(await orka.api(method, path, body, teamToken)).toEqual({
        status: 403,
        body: { error: { code: 403, message: 'namespace "default" not allowed, restricted to "team-a"' } },
      });
    }
    expect((await orka.api("GET", "/api/v1/tasks?namespace=default")).body.items.some((t: any) => t.metadata.name === "x")).toBe(false);
    expect((await orka.api("POST", "/api/v1/secrets", { name: "s", stringData: { a: "b" } }, teamToken)).status).toBe(403);
    expect((await orka.api("POST", "/api/v1/providers", { metadata: { name: "p" }, spec: { type: "openai", baseURL: "http://10.0.0.1/v1" } }, teamToken)).body.error.message).toBe(
      "spec.baseURL can only be set with an admin or operator token",
    );
  });

  it("lets an operator token manage Secrets and operator-only fields in its own namespace only", async () => {
    const operator = (await orka.api("POST", "/api/v1/auth/tokens", { name: "ops-a", namespace: "team-a", role: "operator" })).body.token;
    expect((await orka.api("POST", "/api/v1/auth/tokens", { name: "x", namespace: "team-a", role: "root" })).status).toBe(400);
    expect((await orka.api("POST", "/api/v1/secrets", { name: "ops-key", stringData: { "api-key": "v" } }, operator)).status).toBe(201);
    expect((await orka.api("POST", "/api/v1/providers", { metadata: { name: "local" }, spec: { type: "openai", baseURL: "http://10.0.0.1/v1" } }, operator)).status).toBe(201);
    expect((await orka.api("POST", "/api/v1/secrets?namespace=default", { name: "ops-key", stringData: { a: "b" } }, operator)).status).toBe(403);
    expect((await orka.api("POST", "/api/v1/secrets", { name: "user-key", stringData: { a: "b" } }, teamToken)).body.error.message).toBe("creating a secret needs an admin or operator token");
    expect((await orka.api("POST", "/api/v1/auth/tokens", { name: "y", namespace: "team-a" }, operator)).status).toBe(403);
  });

  it("refuses bad Task bodies with a 400 naming the field at fault, and creates nothing", async () => {
    const cases: [unknown, number, string][] = [
      [{ type: "ai", prompt: "x" }, 400, "name is required"],
      [{ name: "t1", prompt: "x" }, 400, "type is required"],
      [{ name: "t1", type: "ai", timeout: "soon" }, 400, 'invalid timeout: "soon" (use a duration such as 30s or 10m)'],
      [{ name: "t1", type: "ai", requestedBy: "me" }, 400, "requestedBy cannot be set by clients"],
      [{ metadata: { name: "t1" }, spec: { type: "ai", transaction: {} } }, 400, "transaction cannot be set by clients"],
      [{ name: "t1", type: "ai", annotations: { "orka.ai/coordination-depth": "1" } }, 400, 'annotation "orka.ai/coordination-depth" is reserved'],
      [{ name: "t1", type: "ai", labels: { "orka.ai/parent-task": "p" } }, 400, 'label "orka.ai/parent-task" is reserved'],
      [{ name: "t1", type: "robot" }, 400, 'spec.type: must be one of "ai", "agent" or "container"'],
      [{ name: "t1", type: "ai", priority: 2000 }, 400, "spec.priority: Too big: expected number to be <=1000"],
      [{ name: "Bad_Name", type: "ai" }, 400, "metadata.name: must be lowercase letters, digits, '-' or '.', starting and ending with a letter or digit"],
    ];
    for (const [body, status, message] of cases) {
      expect(await orka.api("POST", "/api/v1/tasks", body)).toEqual({ status, body: { error: { code: status, message } } });
    }
    expect((await orka.api("GET", "/api/v1/tasks/t1")).status).toBe(404);
    const allowed = await orka.api("POST", "/api/v1/tasks", { metadata: { name: "flat-wins", annotations: { "orka.ai/disable-coordination-tool-injection": "true" } }, spec: { type: "ai", prompt: "spec" }, prompt: "flat", type: "container", command: ["true"] });
    expect(allowed.status).toBe(201);
    expect(allowed.body.spec).toMatchObject({ type: "container", prompt: "flat" });
    expect((await orka.api("POST", "/api/v1/tasks", { name: "flat-wins", type: "ai", prompt: "again" })).body.error).toEqual({ code: 409, message: "task already exists" });
  });

  it("pages lists: limit caps at 500, below 1 is refused, 0 returns every Task", async () => {
    for (let i = 0; i < 3; i++) await orka.api("POST", "/api/v1/tasks", { name: `page-${i}`, type: "container", command: ["true"] });
    const capped = await orka.api("GET", "/api/v1/tasks?limit=600");
    expect(capped.status).toBe(200);
    expect(capped.body.items.length).toBeLessThanOrEqual(500);
    expect((await orka.api("GET", "/api/v1/agents?limit=0")).body.error).toEqual({ code: 400, message: "limit must be at least 1" });
    const first = await orka.api("GET", "/api/v1/tasks?limit=2");
    expect(first.body.items).toHaveLength(2);
    expect(first.body.metadata.remainingItemCount).toBeGreaterThan(0);
    const second = await orka.api("GET", `/api/v1/tasks?limit=2&continue=${first.body.metadata.continue}`);
    expect(second.body.items[0].metadata.name > first.body.items[1].metadata.name).toBe(true);
    const all = await orka.api("GET", "/api/v1/tasks?limit=0");
    expect(all.body.items.length).toBe(first.body.items.length + first.body.metadata.remainingItemCount);
  });

  it("answers result and logs of a Task that has none yet with 404 and a message saying why", async () => {
    await orka.api("POST", "/api/v1/agents", { metadata: { name: "lonely" }, spec: {} });
    await orka.api("POST", "/api/v1/tasks", { name: "waiting", type: "ai", agentRef: "lonely", prompt: "x", schedule: "0 0 1 1 *" });
    expect((await orka.api("GET", "/api/v1/tasks/waiting/result")).body.error).toEqual({ code: 404, message: "task has no result" });
    expect((await orka.api("GET", "/api/v1/tasks/waiting/logs")).body.error).toEqual({ code: 404, message: "task is pending, no logs available yet" });
    expect((await orka.api("GET", "/api/v1/tasks/nope")).body.error).toEqual({ code: 404, message: "task not found" });
  });

  it("lists built-in and custom tools without the coordination family, and reserves built-in names", async () => {
    await orka.api("POST", "/api/v1/tools", { metadata: { name: "lookup" }, spec: { description: "Look up", http: { url: `${orka.url}/healthz` } } });
    await orka.api("POST", "/api/v1/tools", { metadata: { name: "gone" }, spec: { description: "Nobody home", http: { url: "http://127.0.0.1:9/x" } } });
    let tools: any[] = [];
    for (let i = 0; i < 50; i++) {
      tools = (await orka.api("GET", "/api/v1/tools")).body.items;
      if (tools.find((t) => t.name === "gone")?.available === false) break;
      await new Promise((r) => setTimeout(r, 50));
    }
    expect(tools.find((t: any) => t.name === "gone")).toMatchObject({ available: false });
    expect((await orka.api("GET", "/api/v1/tools/gone")).body.spec).toBeDefined();
    expect((await orka.api("GET", "/api/v1/tools/gone")).body).toMatchObject({ available: false });
    // The six listed built-ins of the seed, then the namespace's Tools: no coordination, memory, GitHub or agent tools.
    expect(tools.map((t: any) => t.name)).toEqual(["web_search", "code_exec", "file_read", "web_fetch", "file_write", "request_approval", "gone", "lookup"]);
    for (const builtin of tools.slice(0, 6)) {
      expect(Object.keys(builtin).sort()).toEqual(["builtin", "description", "name", "parameters"]);
      expect(builtin).toMatchObject({ builtin: true, description: expect.any(String), parameters: { type: "object" } });
    }
    expect(tools.find((t: any) => t.name === "lookup")).toMatchObject({ builtin: false, namespace: "default", available: true, url: `${orka.url}/healthz` });
    for (const hidden of ["delegate_task", "recall_memory", "create_agent", "create_pull_request", "update_plan"]) {
      expect((await orka.api("GET", `/api/v1/tools/${hidden}`)).body.error).toEqual({ code: 404, message: "tool not found" });
    }
    expect((await orka.api("GET", "/api/v1/tools/file_write")).body).toMatchObject({ name: "file_write", builtin: true });
    expect((await orka.api("POST", "/api/v1/tools", { metadata: { name: "delegate_task" }, spec: { description: "x", http: { url: "http://x" } } })).body.error).toEqual({
      code: 409,
      message: "tool name is reserved for a built-in tool",
    });
    expect((await orka.api("DELETE", "/api/v1/tools/web_search")).status).toBe(409);
    expect((await orka.api("GET", "/api/v1/tools/absent")).body.error).toEqual({ code: 404, message: "tool not found" });
    expect((await orka.api("POST", "/api/v1/tools", { metadata: { name: "leaky" }, spec: { description: "x", http: { url: "http://x", headers: { Authorization: "k" } } } }, teamToken)).status).toBe(400);
    const inward = await orka.api("POST", "/api/v1/tools", { metadata: { name: "inward" }, spec: { description: "x", http: { url: "http://169.254.169.254/{{path}}" } } }, teamToken);
    expect(inward.body.error.message).toBe("spec.http.url: URL must not target private, loopback, or link-local addresses; Orka calls HTTP Tools only at public addresses");
  });

  it("updates with optimistic concurrency: a stale resourceVersion gets 409", async () => {
    const agent = (await orka.api("POST", "/api/v1/agents", { metadata: { name: "cas" }, spec: { model: { name: "a" } } })).body;
    const ok = await orka.api("PUT", "/api/v1/agents/cas", { metadata: { resourceVersion: agent.metadata.resourceVersion }, spec: { model: { name: "b" } } });
    expect(ok.status).toBe(200);
    const stale = await orka.api("PUT", "/api/v1/agents/cas", { metadata: { resourceVersion: agent.metadata.resourceVersion }, spec: { model: { name: "c" } } });
    expect(stale.body.error).toEqual({ code: 409, message: "agent cas was modified concurrently; read it again and retry" });
    expect((await orka.api("GET", "/api/v1/agents/cas")).body.spec.model.name).toBe("b");
    expect((await orka.api("POST", "/api/v1/agents", { metadata: { name: "cas" }, spec: {} })).body.error).toEqual({ code: 409, message: "agent already exists" });
  });

  it("authorizes /internal/v1 only with a running attempt's own token", async () => {
    expect((await orka.api("POST", "/internal/v1/results/default/page-0", "x")).status).toBe(401);
    // The admin token is not a worker token.
    const admin = await fetch(`${orka.url}/internal/v1/results/default/page-0`, { method: "POST", headers: { authorization: `Bearer ${orka.token}`, "content-type": "text/plain" }, body: "forged" });
    expect(admin.status).toBe(401);
    expect((await orka.api("GET", "/api/v1/tasks/page-0/result")).body.error?.message ?? "").not.toBe("forged");
  });
});
