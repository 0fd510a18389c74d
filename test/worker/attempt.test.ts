import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { writeFileSync } from "node:fs";
import { join } from "node:path";
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
      // No write carried the closing events: they follow the result on their own.
      const sentAlone = seen.filter((r) => r.path.startsWith("/internal/v1/events/")).flatMap((r) => JSON.parse(r.body) as { type: string }[]);
      expect(sentAlone.map((e) => e.type).slice(-2)).toEqual(["ResultSubmitted", "WorkerCompleted"]);
    } finally {
      remove();
    }
  });
});

// An attempt with nothing left to do once its final answer is written — no session taking it, no artifacts —
// sends its closing events with the answer's write; otherwise, or when that write is not stored, they are not in it.
describe("AI attempt ending with its final answer's write", () => {
  /** How the stand-in answers the final answer's write: stores it, refuses it, or stores it and loses the reply. */
  let finalWrite: "stored" | "refused" | "stored, reply lost" = "stored";
  let journalled: { seq: number; kind: string }[] = [];
  let controlPlane: Awaited<ReturnType<typeof startStandInControlPlane>>;
  beforeAll(async () => {
    controlPlane = await startStandInControlPlane(({ method, path, body }, res) => {
      const json = (status: number, value: unknown) => void res.writeHead(status, { "content-type": "application/json" }).end(JSON.stringify(value));
      if (method === "GET" && path.startsWith("/internal/v1/journal/")) return json(200, { steps: journalled });
      if (method === "GET" && path.startsWith("/internal/v1/sessions/")) return json(200, []);
      if (method !== "POST" || !path.startsWith("/internal/v1/journal/")) return void res.writeHead(204).end();
      const write = JSON.parse(body) as Write;
      if (write.answerIsResult && finalWrite === "refused") return json(409, { error: { code: 409, message: "journal step 2 does not follow step 0" } });
      journalled.push(...write.steps);
      if (write.answerIsResult && finalWrite === "stored, reply lost") return json(503, { error: { code: 503, message: "the control plane went away" } });
      json(200, { storedBytes: 1 });
    });
  });
  afterAll(() => controlPlane.close());

  type Write = { answerIsResult?: boolean; steps: { seq: number; kind: string }[]; events: { type: string; journalRun?: number; journalStep?: number }[] };
  async function run(label: string, options: { artifact?: boolean; session?: boolean; turns?: string[] } = {}) {
    const { url, seen } = controlPlane;
    seen.length = 0;
    journalled = [];
    const { remove, ...dirs } = await freshAttemptDirs(label);
    const logged: string[] = [];
    try {
      if (options.artifact) writeFileSync(join(dirs.artifactsDir, "report.txt"), "report");
      const config = scriptedAiAttempt({ controllerURL: url, dirs, answer: "the answer", tools: [] });
      if (options.turns) config.ai!.endpoint.script = { turns: options.turns.map((text) => ({ text })) };
      if (options.session) config.session = { name: "s", append: true, maxMessages: 10 };
      const outcome = await runAttempt(config, { log: (line) => void logged.push(line), signal: new AbortController().signal, transport: httpTransport(url) });
      const writes = seen.filter((r) => r.method === "POST" && r.path.startsWith("/internal/v1/journal/")).map((r) => JSON.parse(r.body) as Write);
      const alone = seen.filter((r) => r.path.startsWith("/internal/v1/events/")).flatMap((r) => JSON.parse(r.body) as Write["events"]);
      return { outcome, writes, final: writes.find((w) => w.answerIsResult)!, alone, paths: seen.map((r) => r.path.split("/")[3]), logged: logged.join("") };
    } finally {
      remove();
    }
  }
  const types = (events: { type: string }[]) => events.map((e) => e.type);

  it("carries ResultSubmitted and WorkerCompleted at the answer's step and sends nothing after it", async () => {
    const { outcome, final, alone, paths, logged } = await run("closing");
    expect(outcome).toEqual({ exitCode: 0 });
    const step = final.steps.at(-1)!.seq;
    expect(final.events.slice(-2)).toEqual([
      { type: "ResultSubmitted", summary: "result of 10 characters", journalRun: 1, journalStep: step },
      { type: "WorkerCompleted", summary: "attempt succeeded", journalRun: 1, journalStep: step },
    ]);
    expect(paths.at(-1)).toBe("journal");
    expect(alone).toEqual([]);
    expect(logged).toMatch(/ResultSubmitted: result of 10 characters\n.*WorkerCompleted: attempt succeeded\n$/);
  });

  it("carries them with the answer that is the result, not with an empty one the model is asked again after", async () => {
    const { outcome, writes, alone } = await run("nudged", { turns: ["", "the answer"] });
    expect(outcome).toEqual({ exitCode: 0 });
    const [empty, final] = writes.filter((w) => w.steps.some((s) => s.kind === "response"));
    expect(types(empty.events)).not.toContain("ResultSubmitted");
    expect(types(final.events).slice(-2)).toEqual(["ResultSubmitted", "WorkerCompleted"]);
    expect(alone).toEqual([]);
  });

  it.each([
    ["an artifact is left to upload", { artifact: true }, ["journal", "artifacts", "events"]],
    ["a session takes the answer", { session: true }, ["journal", "sessions", "events"]],
  ] as const)("sends them after the write when %s", async (_when, options, lastCalls) => {
    const { outcome, final, alone, paths } = await run("after", options);
    expect(outcome).toEqual({ exitCode: 0 });
    expect(types(final.events)).not.toContain("ResultSubmitted");
    expect(paths.slice(-3)).toEqual(lastCalls);
    expect(types(alone).slice(-2)).toEqual(["ResultSubmitted", "WorkerCompleted"]);
  });

  it("tells of a failure, not a completion, when the answer's write is refused", async () => {
    finalWrite = "refused";
    try {
      const { outcome, alone, logged } = await run("refused");
      expect(outcome.exitCode).toBe(1);
      // The events queued before the write go out with the failure; the closing ones were never true.
      expect(types(alone)).toEqual(["ModelRequestCompleted", "ModelMessage", "WorkerFailed"]);
      expect(logged).not.toMatch(/ResultSubmitted|WorkerCompleted/);
    } finally {
      finalWrite = "stored";
    }
  });

  it("ends well when the answer's write was stored though its reply was lost: the journal holds it", async () => {
    finalWrite = "stored, reply lost";
    try {
      const { outcome, alone, logged, paths } = await run("reply-lost");
      expect(outcome).toEqual({ exitCode: 0 });
      expect(alone).toEqual([]);
      expect(paths.slice(-2)).toEqual(["journal", "journal"]); // the write, then the read that found it
      expect(logged).toMatch(/WorkerCompleted: attempt succeeded\n$/);
      expect(logged).not.toMatch(/WorkerFailed/);
    } finally {
      finalWrite = "stored";
    }
  });
});
