import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { runAttempt } from "../../src/worker/attempt.ts";
import { scriptedAiAttempt } from "../helpers/attempt-config.ts";
import { httpTransport } from "../../src/worker/transport.ts";
import { freshAttemptDirs, startStandInControlPlane, storedResult } from "../helpers/stand-in-control-plane.ts";

// The worker against a stand-in control plane that records every call and would fail a memory read.
describe("AI attempt starting with the memories its config carries", () => {
  let controlPlane: Awaited<ReturnType<typeof startStandInControlPlane>>;
  beforeAll(async () => {
    controlPlane = await startStandInControlPlane(({ path }, res) => {
      if (path.startsWith("/internal/v1/memories/")) return void res.writeHead(500, { "content-type": "application/json" }).end('{"error":{"code":500,"message":"database is locked"}}');
      res.writeHead(204).end();
    });
  });
  afterAll(() => controlPlane.close());

  it("puts them in the first request's system prompt and asks the control plane for no memories", async () => {
    const { url, seen } = controlPlane;
    const { remove, ...dirs } = await freshAttemptDirs("memories");
    const config = scriptedAiAttempt({ controllerURL: url, dirs, answer: "answered with memory", tools: ["recall_memory", "remember", "propose_memory", "search_transcript"] });
    config.ai!.memories = [{ content: "Deploys go through staging first.", source: "api", tags: ["ops"], createdAt: "2026-01-02T03:04:05.000Z" }];
    try {
      const outcome = await runAttempt(config, { log: () => undefined, signal: new AbortController().signal, transport: httpTransport(url) });
      expect(outcome).toEqual({ exitCode: 0 });
      expect(storedResult(seen)).toBe("answered with memory");
      // The journal's first step holds the system prompt exactly as the model saw it.
      const [firstStep] = (JSON.parse(seen.find((r) => r.path.startsWith("/internal/v1/journal/"))!.body) as { steps: { seq: number; detail: { system: string } }[] }).steps;
      expect(firstStep.seq).toBe(1);
      expect(firstStep.detail.system).toContain("## Durable Memory");
      expect(firstStep.detail.system).toContain("1. [source=api; tags=ops; created=2026-01-02T03:04:05.000Z]\nDeploys go through staging first.");
      expect(seen.filter((r) => r.path.startsWith("/internal/v1/memories/"))).toEqual([]);
      const events = seen.flatMap((r) => {
        if (r.path.startsWith("/internal/v1/events/")) return JSON.parse(r.body) as { type: string }[];
        if (r.path.startsWith("/internal/v1/journal/")) return (JSON.parse(r.body) as { events: { type: string }[] }).events;
        return [];
      });
      expect(events.map((e) => e.type)).not.toContain("MemoryUnavailable");
    } finally {
      remove();
    }
  });
});

// A lost attempt whose run had journalled its final answer: the next one gives that answer as the result,
// asking the model nothing and writing no step (the answer's step stored the result already; storing it
// again is the same result).
describe("AI attempt resuming a run whose final answer is journalled", () => {
  const journalled = [
    { run: 1, seq: 1, kind: "request", messages: [{ role: "user", content: "hi" }], detail: { system: "" }, attempt: 1, createdAt: "2026-01-02T03:04:05.000Z" },
    { run: 1, seq: 2, kind: "response", messages: [{ role: "assistant", content: "the journalled answer" }], detail: {}, attempt: 1, createdAt: "2026-01-02T03:04:06.000Z" },
  ];
  let controlPlane: Awaited<ReturnType<typeof startStandInControlPlane>>;
  beforeAll(async () => {
    controlPlane = await startStandInControlPlane(({ method, path }, res) => {
      if (method === "GET" && path.startsWith("/internal/v1/journal/")) return void res.writeHead(200, { "content-type": "application/json" }).end(JSON.stringify({ steps: journalled }));
      res.writeHead(204).end();
    });
  });
  afterAll(() => controlPlane.close());

  it("posts the journalled answer as the result and writes nothing to the journal", async () => {
    const { url, seen } = controlPlane;
    const { remove, ...dirs } = await freshAttemptDirs("resumed-final");
    // The scripted model would answer otherwise: the result shows it was not asked.
    const config = scriptedAiAttempt({ controllerURL: url, dirs, answer: "a new answer", tools: [] });
    config.journal = { run: 1, resume: true };
    try {
      const outcome = await runAttempt(config, { log: () => undefined, signal: new AbortController().signal, transport: httpTransport(url) });
      expect(outcome).toEqual({ exitCode: 0 });
      expect(seen.filter((r) => r.path.startsWith("/internal/v1/results/")).map((r) => r.body)).toEqual(["the journalled answer"]);
      expect(seen.filter((r) => r.method === "POST" && r.path.startsWith("/internal/v1/journal/"))).toEqual([]);
    } finally {
      remove();
    }
  });
});
