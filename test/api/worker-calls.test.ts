import Fastify from "fastify";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { answerWorkerCall, callerGone } from "../../src/api/internal/worker-calls.ts";

describe("a pooled worker's call, answered by the worker API's routes", () => {
  const app = Fastify();
  const seen: { url: string; headers: Record<string, unknown> }[] = [];
  let stoppedEarly = false;
  beforeAll(async () => {
    app.all("/internal/v1/*", async (request) => {
      seen.push({ url: request.url, headers: request.headers });
      return { ip: request.ip };
    });
    app.get("/api/v1/secrets", async () => ({ secret: "s" }));
    app.post("/internal/v1/slow", async (request, reply) => {
      const gone = callerGone(request, reply);
      // Long work for the worker, stopped when the worker gives up on the call.
      await new Promise((resolve) => {
        const done = setTimeout(resolve, 2_000);
        gone.addEventListener("abort", () => (clearTimeout(done), (stoppedEarly = true), resolve(undefined)));
      });
      return {};
    });
    await app.ready();
  });
  afterAll(() => app.close());

  it("stays under /internal/v1 whatever the path says", async () => {
    const before = seen.length;
    const answer = await answerWorkerCall(app, { method: "GET", path: "../../api/v1/secrets", headers: {} }, new AbortController().signal);
    expect(answer.status).toBe(400);
    expect(JSON.parse(answer.text).error.message).toBe("a worker call must stay under /internal/v1");
    expect(seen.length).toBe(before);
  });

  it("passes the query, and only the headers a worker's client sends", async () => {
    const headers = { authorization: "Bearer t", "idempotency-key": "k", "x-forwarded-for": "203.0.113.9", host: "elsewhere.example", cookie: "c=1" };
    const answer = await answerWorkerCall(app, { method: "GET", path: "memories/default?limit=5", headers }, new AbortController().signal);
    expect(answer.status).toBe(200);
    expect(JSON.parse(answer.text).ip).not.toBe("203.0.113.9");
    const { url, headers: received } = seen.at(-1)!;
    expect(url).toBe("/internal/v1/memories/default?limit=5");
    expect(received).toMatchObject({ authorization: "Bearer t", "idempotency-key": "k" });
    expect(received).not.toHaveProperty("x-forwarded-for");
    expect(received).not.toHaveProperty("cookie");
    expect(received.host).not.toBe("elsewhere.example");
  });

  it("takes bytes as they arrive over IPC, and a cancelled call stops the work its route started", async () => {
    await answerWorkerCall(app, { method: "POST", path: "results/default/t", headers: { "content-type": "application/json" }, body: new TextEncoder().encode("{}") }, new AbortController().signal);
    expect(seen.at(-1)!.url).toBe("/internal/v1/results/default/t");
    const cancel = new AbortController();
    const started = Date.now();
    const answered = answerWorkerCall(app, { method: "POST", path: "slow", headers: { "content-type": "application/json" }, body: "{}" }, cancel.signal).catch((err: Error) => err);
    await new Promise((resolve) => setTimeout(resolve, 50));
    cancel.abort();
    await answered;
    await new Promise((resolve) => setTimeout(resolve, 20));
    expect(stoppedEarly).toBe(true);
    expect(Date.now() - started).toBeLessThan(1_000);
  });
});
