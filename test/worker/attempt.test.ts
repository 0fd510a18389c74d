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
