import Fastify from "fastify";
import { afterAll, describe, expect, it } from "vitest";
import type { ApiContext } from "../../src/api/context.ts";
import { workerCallAnswerer, type WorkerCall } from "../../src/api/internal/worker-calls.ts";
import { noContent, type WorkerRequest, type WorkerRoute } from "../../src/api/internal/worker-route.ts";
import { jsonBodyParser } from "../../src/api/request-input.ts";
import type { AuditRecord } from "../../src/store/audit-store.ts";
import { OrkaError } from "../../src/util/errors.ts";
import { HeldGate } from "../helpers/held-gate.ts";

describe("a pooled worker's call, answered by the worker API's routes without HTTP", () => {
  const app = Fastify();
  afterAll(() => app.close());
  const seen: WorkerRequest[] = [];
  const audited: AuditRecord[] = [];
  const gate = new HeldGate();
  let stoppedEarly = false;
  const audit = {
    fails: false,
    record(entry: AuditRecord) {
      if (this.fails) throw new Error("disk full");
      audited.push(entry);
    },
  };
  const routes: WorkerRoute[] = [
    { method: "GET", url: "/memories/:ns", handle: (request) => (seen.push(request), { ok: true }) },
    { method: "POST", url: "/results/:ns/:task", bodyLimit: 16, handle: (request) => (seen.push(request), noContent()) },
    { method: "POST", url: "/refused/:ns", handle: () => Promise.reject(new OrkaError("permission_denied", "not yours")) },
    {
      method: "POST",
      url: "/slow",
      handle: async (request) => {
        // Long work for the worker, stopped when the worker gives up on the call.
        await new Promise((resolve) => {
          const done = setTimeout(resolve, 2_000);
          request.gone().addEventListener("abort", () => (clearTimeout(done), (stoppedEarly = true), resolve(undefined)));
        });
        return {};
      },
    },
  ];
  const ctx = {
    gate,
    data: { attemptByTokenHash: () => undefined },
    audit,
    noteFailure: () => undefined,
  } as unknown as ApiContext;
  const answer = workerCallAnswerer(ctx, routes, { parseJson: jsonBodyParser(app), maxParamLength: 765, log: app.log });
  const call = (worker: Omit<WorkerCall, "headers"> & { headers?: Record<string, string> }, signal = new AbortController().signal) =>
    answer({ headers: {}, ...worker }, signal);
  const message = (text: string) => JSON.parse(text).error.message as string;

  it("stays under /internal/v1 whatever the path says", async () => {
    const before = seen.length;
    const answered = await call({ method: "GET", path: "../../api/v1/secrets" });
    expect(answered.status).toBe(400);
    expect(message(answered.text)).toBe("a worker call must stay under /internal/v1");
    expect(seen.length).toBe(before);
  });

  it("passes the route's parameters, the query, and only the headers a worker's client sends", async () => {
    const key = "a".repeat(64);
    const headers = { authorization: "Bearer t", "idempotency-key": key, "x-forwarded-for": "203.0.113.9", host: "elsewhere.example", cookie: "c=1" };
    const answered = await call({ method: "GET", path: "memories/default?limit=5", headers });
    expect(answered).toEqual({ status: 200, text: '{"ok":true}' });
    const request = seen.at(-1)!;
    expect(request.params).toEqual({ ns: "default" });
    expect({ ...request.query }).toEqual({ limit: "5" });
    expect(request.route).toBe("/internal/v1/memories/:ns");
    expect(Object.entries(request.headers).filter(([, value]) => value !== undefined)).toEqual([
      ["authorization", "Bearer t"],
      ["idempotency-key", key],
    ]);
  });

  it("refuses what an HTTP request would be refused for, in the API's error shape", async () => {
    expect(await call({ method: "GET", path: "nowhere" })).toMatchObject({ status: 404 });
    const repeated = await call({ method: "GET", path: "memories/default?limit=1&limit=2" });
    expect([repeated.status, message(repeated.text)]).toEqual([400, 'query parameter "limit" is given more than once; give each parameter once']);
    const json = { "content-type": "application/json" };
    expect(await call({ method: "POST", path: "results/default/t", headers: json, body: "{not json" })).toMatchObject({ status: 400 });
    const empty = await call({ method: "POST", path: "results/default/t", headers: json, body: "" });
    expect(message(empty.text)).toBe("empty request body: send a JSON object");
    const deep = await call({ method: "POST", path: "refused/default", headers: json, body: "[".repeat(70) + "]".repeat(70) });
    expect([deep.status, message(deep.text)]).toEqual([400, expect.stringContaining("more than 64 levels deep")]);
    const large = await call({ method: "POST", path: "results/default/t", headers: json, body: '{"text":"more than sixteen bytes"}' });
    expect([large.status, message(large.text)]).toEqual([413, "request body is too large"]);
    const media = await call({ method: "POST", path: "results/default/t", headers: { "content-type": "text/html" }, body: "<p>" });
    expect([media.status, message(media.text)]).toEqual([415, expect.stringContaining('content type "text/html" is not accepted')]);
  });

  it("reads the path and query as Fastify does: bad encoding, an over-long segment, HEAD, a parameter repeated after a thousand others", async () => {
    const badEncoding = await call({ method: "GET", path: "memories/%zz" });
    expect([badEncoding.status, message(badEncoding.text)]).toEqual([400, "the URL path is not valid percent-encoding"]);
    expect(await call({ method: "GET", path: `memories/${"n".repeat(766)}` })).toMatchObject({ status: 414 });
    expect(await call({ method: "HEAD", path: "memories/default" })).toEqual({ status: 200, text: "" });
    const many = Array.from({ length: 1000 }, (_, i) => `k${i}=1`).join("&");
    expect(await call({ method: "GET", path: `memories/default?${many}&limit=1&limit=2` })).toMatchObject({ status: 400 });
  });

  it("takes only text headers, ignores a GET's body and refuses a body that is neither text nor bytes", async () => {
    const answered = await call({ method: "GET", path: "memories/default", headers: { "idempotency-key": 12345 as never, "content-type": "application/json" }, body: "" });
    expect(answered.status).toBe(200);
    expect(seen.at(-1)!.headers["idempotency-key"]).toBeUndefined();
    expect(seen.at(-1)!.body).toBeUndefined();
    const odd = await call({ method: "POST", path: "results/default/t", headers: { "content-type": "application/json" }, body: { not: "bytes" } as never });
    expect([odd.status, message(odd.text)]).toEqual([400, "a worker call's body must be text or bytes"]);
  });

  it("takes bytes as they arrive over IPC", async () => {
    const answered = await call({ method: "POST", path: "results/default/t", headers: { "content-type": "text/plain" }, body: new TextEncoder().encode("done") });
    expect(answered.status).toBe(204);
    const { body } = seen.at(-1)!;
    expect(Buffer.isBuffer(body) && body.toString()).toBe("done");
  });

  it("answers only once the writes made before the answer are committed", async () => {
    gate.close();
    let answered = false;
    const pending = call({ method: "GET", path: "memories/default" }).then(() => (answered = true));
    for (let turn = 0; turn < 5; turn++) await new Promise((resolve) => setImmediate(resolve));
    expect(answered).toBe(false);
    gate.open();
    await pending;
    expect(answered).toBe(true);
  });

  it("files a refusal in the audit log, with the route and its reason", async () => {
    const answered = await call({ method: "POST", path: "refused/default", headers: { "content-type": "application/json" }, body: "{}" });
    expect([answered.status, message(answered.text)]).toEqual([403, "not yours"]);
    expect(audited.at(-1)).toMatchObject({ method: "POST", path: "/internal/v1/refused/default", route: "/internal/v1/refused/:ns", status: 403, reason: "not yours" });
  });

  it("answers a refusal as it is when the audit log cannot be written", async () => {
    audit.fails = true;
    const answered = await call({ method: "POST", path: "refused/default", headers: { "content-type": "application/json" }, body: "{}" });
    audit.fails = false;
    expect([answered.status, message(answered.text)]).toEqual([403, "not yours"]);
  });

  it("stops the work a route started when the worker gives up on the call", async () => {
    const cancel = new AbortController();
    const started = Date.now();
    const answered = call({ method: "POST", path: "slow", headers: { "content-type": "application/json" }, body: "{}" }, cancel.signal);
    await new Promise((resolve) => setTimeout(resolve, 50));
    cancel.abort();
    await answered;
    expect(stoppedEarly).toBe(true);
    expect(Date.now() - started).toBeLessThan(1_000);
  });
});
