import http from "node:http";
import type { AddressInfo } from "node:net";
import { rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { makeAttemptDirs, prepareAttemptDirs } from "../../src/runner/local/dirs.ts";
import { runAttempt } from "../../src/worker/attempt.ts";
import { scriptedAiAttempt } from "../helpers/attempt-config.ts";
import { httpTransport } from "../../src/worker/transport.ts";

// The worker against a stand-in control plane whose memory store is down .
describe("AI attempt with the memory store down", () => {
  let server: http.Server;
  let url = "";
  const seen: { method: string; path: string; body: string }[] = [];
  beforeAll(async () => {
    server = http.createServer((req, res) => {
      let body = "";
      req.on("data", (c) => (body += c));
      req.on("end", () => {
        seen.push({ method: req.method ?? "", path: req.url ?? "", body });
        if (req.url?.startsWith("/internal/v1/memories/")) return void res.writeHead(500, { "content-type": "application/json" }).end('{"error":{"code":500,"message":"database is locked"}}');
        res.writeHead(204).end();
      });
    });
    await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
    url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });
  afterAll(() => server.close());

  it("still runs the model and submits the result, with a warning event", async () => {
    const attemptsDir = join(tmpdir(), "orka-attempt-tests");
    const dirs = await prepareAttemptDirs(attemptsDir, `a-${process.pid}`);
    makeAttemptDirs(dirs);
    const config = scriptedAiAttempt({ controllerURL: url, dirs, answer: "answered without memory", tools: ["recall_memory", "remember", "propose_memory", "search_transcript"] });
    try {
      const outcome = await runAttempt(config, { log: () => undefined, signal: new AbortController().signal, transport: httpTransport(url) });
      expect(outcome).toEqual({ exitCode: 0 });
      expect(seen.find((r) => r.path === "/internal/v1/results/default/t")?.body).toBe("answered without memory");
      // Events go on their own, or along with a journal step.
      const events = seen.flatMap((r) => {
        if (r.path.startsWith("/internal/v1/events/")) return JSON.parse(r.body) as { type: string; summary: string }[];
        if (r.path.startsWith("/internal/v1/journal/")) return (JSON.parse(r.body) as { events: { type: string; summary: string }[] }).events;
        return [];
      });
      expect(events.find((e) => e.type === "MemoryUnavailable")?.summary).toMatch(/^durable memory not loaded: database is locked/);
      expect(events.map((e) => e.type)).toEqual(expect.arrayContaining(["WorkerStarted", "ModelRequestStarted", "ResultSubmitted", "WorkerCompleted"]));
    } finally {
      rmSync(join(attemptsDir, `a-${process.pid}`), { recursive: true, force: true });
    }
  });
});
