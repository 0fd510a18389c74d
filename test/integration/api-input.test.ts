import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { MAX_NAME_LENGTH } from "../../src/resources/meta.ts";
import { API_VERSION, startOrkaServer, type OrkaUnderTest } from "../helpers/orka-server.ts";

// Issue 12 (items 6, 12, 14) and issue 13 (item 4): what the API refuses, through a real server.
describe("API input", () => {
  let orka: OrkaUnderTest;
  beforeAll(async () => (orka = await startOrkaServer()));
  afterAll(() => orka.stop());

  /** A raw request: any body text and content type, which the JSON helper cannot send. */
  async function send(method: string, path: string, body?: string, contentType?: string) {
    const response = await fetch(`${orka.url}${path}`, {
      method,
      headers: { authorization: `Bearer ${orka.token}`, ...(contentType ? { "content-type": contentType } : {}) },
      body,
    });
    const text = await response.text();
    return { status: response.status, body: text ? JSON.parse(text) : undefined };
  }
  const errorOf = (status: number, message: string) => ({ status, body: { error: { code: status, message } } });

  it("refuses unknown fields in every resource body, naming each one, and stores nothing", async () => {
    const typo = { metadata: { name: "typo" }, spec: { sytemPrompt: { inline: "Be brief." }, tols: [{ name: "web_search" }] } };
    expect(await orka.api("POST", "/api/v1/agents", typo)).toEqual(errorOf(400, 'unknown fields "spec.sytemPrompt", "spec.tols": remove them or correct the spelling'));
    expect((await orka.api("GET", "/api/v1/agents/typo")).status).toBe(404);

    const cases: [string, unknown, string][] = [
      ["/api/v1/tasks", { name: "t-flat", type: "ai", promt: "hi" }, 'unknown field "promt": remove it or correct the spelling'],
      ["/api/v1/tasks", { metadata: { name: "t-spec" }, spec: { type: "ai", prompt: "hi", ai: { modle: "x" } } }, 'unknown field "spec.ai.modle": remove it or correct the spelling'],
      ["/api/v1/tasks", { metadata: { name: "t-meta", lables: { a: "b" } }, spec: { type: "ai", prompt: "hi" } }, 'unknown field "metadata.lables": remove it or correct the spelling'],
      ["/api/v1/providers", { metadata: { name: "p" }, spec: { type: "openai", secretRef: { name: "k", kee: "x" } } }, 'unknown field "spec.secretRef.kee": remove it or correct the spelling'],
      ["/api/v1/tools", { metadata: { name: "tl" }, spec: { description: "d", http: { url: "https://example.com", methd: "GET" } } }, 'unknown field "spec.http.methd": remove it or correct the spelling'],
      ["/api/v1/skills", { metadata: { name: "sk" }, spec: { description: "d", content: { inline: "x" } }, extra: 1 }, 'unknown field "extra": remove it or correct the spelling'],
      ["/api/v1/secrets", { name: "s-typo", stringData: { a: "b" }, immutable: true }, 'unknown field "immutable": remove it or correct the spelling'],
      ["/api/v1/tasks/none/fork", { at: 1, modell: "x" }, 'unknown field "modell": remove it or correct the spelling'],
      ["/api/v1/tasks/none/cancel", { namespace: "default", reson: "x" }, 'unknown field "reson": remove it or correct the spelling'],
      ["/api/v1/memories", { content: "a fact", title: "t" }, 'unknown field "title": remove it or correct the spelling'],
      ["/api/v1/auth/tokens", { name: "ci", namespace: "team-a", rol: "user" }, 'unknown field "rol": remove it or correct the spelling'],
    ];
    for (const [path, body, message] of cases) expect(await orka.api("POST", path, body), path).toEqual(errorOf(400, message));
    for (const path of ["/api/v1/tasks/t-flat", "/api/v1/tasks/t-spec", "/api/v1/tasks/t-meta", "/api/v1/providers/p", "/api/v1/tools/tl", "/api/v1/skills/sk", "/api/v1/secrets/s-typo"]) {
      expect((await orka.api("GET", path)).status, path).toBe(404);
    }
  });

  it("keeps free-form maps free: labels, annotations, Secret data, Tool parameters, scripted arguments", async () => {
    const tool = await orka.api("POST", "/api/v1/tools", {
      metadata: { name: "free", labels: { "team.example.com/owner": "ops" }, annotations: { "example.com/any": "text with spaces" } },
      spec: { description: "d", parameters: { type: "object", properties: { q: { type: "string", "x-anything": true } } }, http: { url: "https://example.com/q" } },
    });
    expect(tool.status).toBe(201);
    expect((await orka.api("POST", "/api/v1/secrets", { name: "free", stringData: { "any key": "v" } })).status).toBe(201);
    const provider = await orka.api("POST", "/api/v1/providers", {
      metadata: { name: "free" },
      spec: { type: "scripted", scripted: { turns: [{ toolCalls: [{ name: "free", arguments: { whatever: { nested: [1] } } }] }] } },
    });
    expect(provider.status).toBe(201);
  });

  it("shows the unknown-field message from orka apply and creates nothing", async () => {
    const yaml = `apiVersion: ${API_VERSION}\nkind: Agent\nmetadata: {name: typo-cli}\nspec:\n  sytemPrompt: {inline: hi}\n  tols: [{name: web_search}]\n`;
    const applied = await orka.cli(["apply", "-f", "-"], yaml);
    expect(applied.code).not.toBe(0);
    expect(applied.stderr).toContain('unknown fields "spec.sytemPrompt", "spec.tols": remove them or correct the spelling');
    expect((await orka.api("GET", "/api/v1/agents/typo-cli")).status).toBe(404);
  });

  it("refuses a PUT or POST body that is not a JSON object and changes nothing", async () => {
    expect((await orka.api("POST", "/api/v1/secrets", { name: "s2", stringData: { a: "1", b: "2" } })).status).toBe(201);
    expect((await orka.api("POST", "/api/v1/agents", { metadata: { name: "ag2" }, spec: { model: { name: "m" } } })).status).toBe(201);
    const notAnObject = "request body must be a JSON object, not";
    const refused: [string, string, string | undefined, string | undefined, number, string][] = [
      ["PUT", "/api/v1/secrets/s2", "null", "application/json", 400, `${notAnObject} null`],
      ["PUT", "/api/v1/secrets/s2", "[]", "application/json", 400, `${notAnObject} an array`],
      ["PUT", "/api/v1/secrets/s2", '"text"', "application/json", 400, `${notAnObject} a string`],
      ["PUT", "/api/v1/secrets/s2", undefined, undefined, 400, "request body is required: send a JSON object with Content-Type: application/json"],
      ["PUT", "/api/v1/agents/ag2", "spec: {}", "text/plain", 415, 'content type "text/plain" is not accepted: send a JSON object with Content-Type: application/json'],
      ["PUT", "/api/v1/agents/ag2", "\u0000\u0001", "application/octet-stream", 415, 'content type "application/octet-stream" is not accepted: send a JSON object with Content-Type: application/json'],
      ["PUT", "/api/v1/agents/ag2", "null", "application/json", 400, `${notAnObject} null`],
      ["POST", "/api/v1/agents", "[1]", "application/json", 400, `${notAnObject} an array`],
      ["POST", "/api/v1/tasks", "name: x", "text/plain", 415, 'content type "text/plain" is not accepted: send a JSON object with Content-Type: application/json'],
      ["PUT", "/api/v1/tasks/absent", "7", "application/json", 400, `${notAnObject} a number`],
    ];
    for (const [method, path, body, type, status, message] of refused) {
      expect(await send(method, path, body, type), `${method} ${path} ${type} ${body}`).toEqual(errorOf(status, message));
    }
    expect((await orka.api("GET", "/api/v1/secrets/s2")).body.keys).toEqual(["a", "b"]);
    expect((await orka.api("GET", "/api/v1/agents/ag2")).body.spec).toEqual({ model: { name: "m" } });
  });

  it("validates a PUT exactly like a create", async () => {
    await orka.api("POST", "/api/v1/agents", { metadata: { name: "same" }, spec: {} });
    const typo = { metadata: { name: "same" }, spec: { tols: [] } };
    expect(await orka.api("PUT", "/api/v1/agents/same", typo)).toEqual(errorOf(400, 'unknown field "spec.tols": remove it or correct the spelling'));
    expect(await orka.api("PUT", "/api/v1/agents/same", { metadata: { name: "other" }, spec: {} })).toEqual(
      errorOf(400, 'metadata.name "other" does not match the name in the URL "same"; they must agree'),
    );
    expect((await orka.api("PUT", "/api/v1/secrets/s2", { stringData: { c: "3" }, tpye: "x" })).body.error.message).toBe('unknown field "tpye": remove it or correct the spelling');
    expect((await orka.api("PUT", "/api/v1/agents/same", { spec: { model: { name: "ok" } } })).status).toBe(200);
  });

  it("refuses values that would only fail later, naming the field", async () => {
    const task = (spec: Record<string, unknown>) => ({ name: "later", type: "ai", prompt: "hi", ...spec });
    const cases: [unknown, string][] = [
      [task({ schedule: "0 9 * * *", timeZone: "Mars/Olympus" }), "spec.timeZone: must be an IANA time zone such as UTC or Europe/Berlin"],
      [task({ schedule: "not a cron" }), 'spec.schedule: must be a cron expression such as "0 9 * * 1-5" (minute hour day-of-month month day-of-week)'],
      [task({ webhookURL: "javascript:alert(1)" }), "spec.webhookURL: must be an http(s) URL"],
      [task({ timeout: "99999999999999999999h" }), "spec.timeout: must be a duration from 1ms to 596h31m23.647s (the longest a timer can wait), such as 90s or 5m"],
      [task({ retryPolicy: { initialDelay: "721h" } }), "spec.retryPolicy.initialDelay: must be a duration from 1ms to 596h31m23.647s (the longest a timer can wait), such as 90s or 5m"],
    ];
    for (const [body, message] of cases) expect(await orka.api("POST", "/api/v1/tasks", body)).toEqual(errorOf(400, message));
    expect((await orka.api("GET", "/api/v1/tasks/later")).status).toBe(404);
    const agent = { metadata: { name: "slow" }, spec: { coordination: { autonomous: true, approvalTimeout: "1000000h" } } };
    expect(await orka.api("POST", "/api/v1/agents", agent)).toEqual(errorOf(400, "spec.coordination.approvalTimeout: must be a duration from 1ms to 596h31m23.647s (the longest a timer can wait), such as 90s or 5m"));
    const provider = { metadata: { name: "js" }, spec: { type: "openai", baseURL: "javascript:alert(1)" } };
    expect(await orka.api("POST", "/api/v1/providers", provider)).toEqual(errorOf(400, "spec.baseURL: must be an http(s) URL"));
    expect((await orka.api("POST", "/api/v1/tasks", task({ name: "zoned", schedule: "0 9 * * 1-5", timeZone: "Europe/Berlin" }))).status).toBe(201);
  });

  it("refuses a duration no timer can keep (zero, or past 2^31-1 ms) and keeps one at the limit", async () => {
    const tool = (name: string, timeout: string) => ({ metadata: { name }, spec: { description: "d", http: { url: "https://example.com", timeout } } });
    for (const timeout of ["0", "0s", "1ns", "600h", "720h"]) {
      expect(await orka.api("POST", "/api/v1/tools", tool("never-waits", timeout)), timeout).toEqual(errorOf(400, "spec.http.timeout: must be a duration from 1ms to 596h31m23.647s (the longest a timer can wait), such as 90s or 5m"));
    }
    expect((await orka.api("GET", "/api/v1/tools/never-waits")).status).toBe(404);
    expect((await orka.api("POST", "/api/v1/tools", tool("patient", "596h"))).status).toBe(201);
    const retry = await orka.api("POST", "/api/v1/tasks", { name: "instant-retry", type: "ai", prompt: "hi", retryPolicy: { initialDelay: "0" } });
    expect(retry).toEqual(errorOf(400, "spec.retryPolicy.initialDelay: must be a duration from 1ms to 596h31m23.647s (the longest a timer can wait), such as 90s or 5m"));
  });

  it("refuses a memory PUT that names nothing to change, and changes nothing", async () => {
    const created = await orka.api("POST", "/api/v1/memories", { content: "the build runs on Fridays", tags: ["ci"] });
    expect(created.status, JSON.stringify(created.body)).toBe(201);
    const path = `/api/v1/memories/${created.body.id}`;
    expect(await send("PUT", path)).toEqual(errorOf(400, "request body is required: send a JSON object with Content-Type: application/json"));
    const nothing = "send a JSON body with at least one field to change: content, tags, agentName, taskName, source, disabled or deleted";
    for (const body of [{}, { namespace: "default" }]) expect(await orka.api("PUT", path, body)).toEqual(errorOf(400, nothing));
    expect((await orka.api("GET", path)).body).toEqual(created.body);
    expect((await orka.api("PUT", path, { tags: ["ci", "weekly"] })).body.tags).toEqual(["ci", "weekly"]);
  });

  it("names the runs of a schedule with the longest name so that the API can write them", async () => {
    const parent = `${"p".repeat(120)}.${"q".repeat(132)}`;
    expect(parent).toHaveLength(MAX_NAME_LENGTH);
    const created = await orka.api("POST", "/api/v1/tasks", { name: parent, type: "container", command: ["true"], schedule: "* * * * * *" });
    expect(created.status, JSON.stringify(created.body)).toBe(201);
    let runs: any[] = [];
    for (let i = 0; i < 100 && runs.length === 0; i++) {
      await new Promise((r) => setTimeout(r, 100));
      runs = (await orka.api("GET", "/api/v1/tasks?labelSelector=orka.ai/scheduled-run=true")).body.items;
    }
    const run = runs[0];
    expect(run.metadata.name).toMatch(/^p{120}\.q{112}-[0-9a-f]{8}-\d{10}$/);
    expect(run.metadata.name.length).toBeLessThanOrEqual(MAX_NAME_LENGTH);
    const { requestedBy: _server, ...spec } = run.spec;
    const updated = await orka.api("PUT", `/api/v1/tasks/${run.metadata.name}`, { metadata: { name: run.metadata.name }, spec: { ...spec, priority: 7 } });
    expect([updated.status, updated.body.error]).toEqual([200, undefined]);
    expect((await orka.api("DELETE", `/api/v1/tasks/${parent}`)).status).toBe(204);
  });

  it("refuses JSON nested 10,000 deep with 400, in any body", async () => {
    const deep = (depth: number) => `${"[".repeat(depth)}${"]".repeat(depth)}`;
    const message = "request body nests objects or arrays more than 64 levels deep; flatten it";
    const tool = `{"metadata":{"name":"deep"},"spec":{"description":"d","http":{"url":"https://example.com"},"parameters":{"type":"object","x":${deep(10_000)}}}}`;
    expect(await send("POST", "/api/v1/tools", tool, "application/json")).toEqual(errorOf(400, message));
    const scripted = `{"metadata":{"name":"deep"},"spec":{"type":"scripted","scripted":{"turns":[{"toolCalls":[{"name":"x","arguments":{"a":${deep(10_000)}}}]}]}}}`;
    expect(await send("POST", "/api/v1/providers", scripted, "application/json")).toEqual(errorOf(400, message));
    const chat = `{"model":"m","messages":[{"role":"user","content":${deep(10_000)}}]}`;
    const compat = await send("POST", "/openai/v1/chat/completions", chat, "application/json");
    expect(compat.status).toBe(400);
    expect(compat.body.error.message).toBe(message);
    expect((await orka.api("GET", "/api/v1/tools/deep")).status).toBe(404);
  });

  it("refuses a repeated query parameter with 400 on every route", async () => {
    const message = 'query parameter "namespace" is given more than once; give each parameter once';
    expect(await send("GET", "/api/v1/tasks?namespace=a&namespace=b")).toEqual(errorOf(400, message));
    expect(await send("DELETE", "/api/v1/agents/x?namespace=a&namespace=b")).toEqual(errorOf(400, message));
    const openai = await send("GET", "/openai/v1/models?namespace=a&namespace=b");
    expect(openai.status).toBe(400);
    expect(openai.body.error.message).toBe(message);
    const anthropic = await send("GET", "/anthropic/v1/models?namespace=a&namespace=b");
    expect(anthropic.status).toBe(400);
    expect(anthropic.body.error.message).toBe(message);
  });

  it("reaches every name it accepts, and answers a too-long URL in the API's shape", async () => {
    const longest = `${"a".repeat(63)}.${"b".repeat(63)}.${"c".repeat(63)}.${"d".repeat(61)}`;
    expect(longest).toHaveLength(253);
    expect((await orka.api("POST", "/api/v1/tasks", { name: longest, type: "container", command: ["true"] })).status).toBe(201);
    expect((await orka.api("GET", `/api/v1/tasks/${longest}`)).body.metadata.name).toBe(longest);
    expect((await orka.api("DELETE", `/api/v1/tasks/${longest}`)).status).toBe(204);
    expect((await orka.api("POST", "/api/v1/agents", { metadata: { name: longest }, spec: {} })).status).toBe(201);
    expect((await orka.api("PUT", `/api/v1/agents/${longest}`, { spec: { model: { name: "m" } } })).status).toBe(200);
    expect((await orka.api("DELETE", `/api/v1/agents/${longest}`)).status).toBe(204);
    expect((await orka.api("POST", "/api/v1/agents", { metadata: { name: `${longest}x` }, spec: {} })).body.error.message).toBe("metadata.name: must be at most 253 characters");
    expect(await send("GET", `/api/v1/tasks/${"a".repeat(2000)}`)).toEqual(errorOf(414, "a segment of the URL path is too long (object names are at most 253 characters)"));
    expect(await send("DELETE", "/api/v1/tasks/%zz")).toEqual(errorOf(400, "the URL path is not valid percent-encoding"));
  });

  it("caps labels and annotations as Kubernetes does", async () => {
    const agent = (metadata: Record<string, unknown>) => ({ metadata: { name: "labelled", ...metadata }, spec: {} });
    const many = Object.fromEntries(Array.from({ length: 65 }, (_, i) => [`k${i}`, "v"]));
    const cases: [unknown, string][] = [
      [agent({ labels: many }), "metadata.labels: 65 labels; at most 64 are allowed"],
      [agent({ labels: { team: "x".repeat(64) } }), `metadata.labels: value of "team": at most 63 letters, digits, '-', '_' or '.', starting and ending with a letter or digit`],
      [agent({ labels: { "bad key": "v" } }), `metadata.labels: key "bad key": the name must be 1-63 letters, digits, '-', '_' or '.', starting and ending with a letter or digit`],
      [agent({ labels: { "Example.com/x": "v" } }), 'metadata.labels: key "Example.com/x": the prefix must be a lowercase DNS subdomain such as example.com'],
      [agent({ annotations: { big: "x".repeat(256 * 1024) } }), "metadata.annotations: 262147 bytes in total; annotations may hold at most 262144 (256 KiB)"],
    ];
    for (const [body, message] of cases) expect(await orka.api("POST", "/api/v1/agents", body)).toEqual(errorOf(400, message));
    expect((await orka.api("GET", "/api/v1/agents/labelled")).status).toBe(404);
    const fine = Object.fromEntries(Array.from({ length: 64 }, (_, i) => [`example.com/k${i}`, "v"]));
    expect((await orka.api("POST", "/api/v1/agents", agent({ labels: fine, annotations: { note: "x".repeat(200 * 1024) } }))).status).toBe(201);
  });
});
