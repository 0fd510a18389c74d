import type http from "node:http";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { AttemptOutcome } from "../../src/worker/attempt-io.ts";
import { runAttempt } from "../../src/worker/attempt.ts";
import { httpTransport } from "../../src/worker/transport.ts";
import { scriptedAiAttempt } from "../helpers/attempt-config.ts";
import { freshAttemptDirs, startStandInControlPlane, storedResult, type SeenCall } from "../helpers/stand-in-control-plane.ts";

interface Step {
  seq: number;
  kind: string;
  messages: { role: string; content?: string }[];
  /** How the worker sent it: on its own (`journal`), or carried by the custom Tool's call (`call`). */
  via: "journal" | "call";
}

/** Every step the worker sent, in order, with the call that carried it. */
function stepsSent(seen: SeenCall[]): Step[] {
  return seen.flatMap(({ method, path, body }): Step[] => {
    if (path.startsWith("/internal/v1/journal/") && method === "POST") return (JSON.parse(body).steps as Step[]).map((step) => ({ ...step, via: "journal" }));
    if (path.startsWith("/internal/v1/tools/")) return ((JSON.parse(body).journalFirst?.steps ?? []) as Step[]).map((step) => ({ ...step, via: "call" }));
    return [];
  });
}

/** Every event the worker sent, in order: with its journal writes, carried by the custom Tool's call, or on their own. */
function eventsSent(seen: SeenCall[]): { type: string; summary: string }[] {
  return seen.flatMap(({ path, body }) => {
    if (path.startsWith("/internal/v1/tools/")) return JSON.parse(body).journalFirst?.events ?? [];
    if (path.startsWith("/internal/v1/journal/") && body) return JSON.parse(body).events;
    if (path.startsWith("/internal/v1/events/")) return JSON.parse(body);
    return [];
  });
}

const MODEL_KEY = "sk-model-key-0123456789";
const TOOL_STEP = { run: 1, seq: 3, toolCallId: "call_1_1" };

/**
 * How the stand-in control plane answers the custom Tool's call: it journalled the result; it did not; the
 * worker's call failed but the step was written meanwhile (a reply that came after the worker stopped
 * waiting); it journalled a result holding the attempt's model key; the Tool failed after the answer the
 * call carried was written.
 */
type Answering = "journalled" | "plain" | "late" | "leaky" | "failed";

// The worker against a stand-in control plane that records every call: a custom Tool's call carries the
// place of its result step, and the worker writes that step only when the control plane did not.
describe("a custom Tool call's result step in the worker", () => {
  let controlPlane: Awaited<ReturnType<typeof startStandInControlPlane>>;
  let answering: Answering = "journalled";
  const lateStep = { ...TOOL_STEP, kind: "tool_result", messages: [{ role: "tool", toolCallId: TOOL_STEP.toolCallId, name: "ping", content: "pong (late)" }], detail: {} };
  let carriedAnswer: unknown;

  function answer({ method, path, body }: SeenCall, res: http.ServerResponse): void {
    const json = (status: number, value: unknown) => void res.writeHead(status, { "content-type": "application/json" }).end(JSON.stringify(value));
    if (path.startsWith("/internal/v1/tools/")) {
      if (answering === "late") return json(504, { error: { code: 504, message: "the control plane did not answer in time" } });
      if (answering === "failed") {
        carriedAnswer = JSON.parse(body).journalFirst.steps[0];
        return json(400, { error: { code: 400, message: "tool \"ping\": the endpoint answered HTTP 500" } });
      }
      const result = answering === "leaky" ? `pong ${MODEL_KEY}` : "pong";
      return json(200, { result, ...(answering === "plain" ? {} : { journalled: true }) });
    }
    if (path.startsWith("/internal/v1/journal/") && method === "GET") return json(200, { steps: answering === "failed" ? [carriedAnswer] : [lateStep] });
    if (path.startsWith("/internal/v1/journal/") && answering === "late" && (JSON.parse(body).steps as Step[]).some((step) => step.seq === TOOL_STEP.seq)) {
      return json(409, { error: { code: 409, message: "journal step 3 of run 1 is already written" } });
    }
    res.writeHead(204).end();
  }

  beforeAll(async () => {
    controlPlane = await startStandInControlPlane(answer);
  });
  afterAll(() => controlPlane.close());

  async function run(mode: Answering): Promise<{
    outcome: AttemptOutcome;
    steps: Step[];
    firstWrite: { events: { type: string }[] };
    toolCall: { resultStep?: unknown; journalFirst?: { events: { type: string }[] } };
    result?: string;
  }> {
    answering = mode;
    const { url, seen } = controlPlane;
    seen.splice(0);
    const { remove, ...dirs } = await freshAttemptDirs(mode);
    const config = scriptedAiAttempt({ controllerURL: url, dirs, answer: "done: {{toolResult}}", tools: ["ping"] });
    config.ai!.customTools = [{ name: "ping", description: "ping", parameters: { type: "object", properties: {} } }];
    config.ai!.endpoint = { ...config.ai!.endpoint, apiKey: MODEL_KEY, script: { turns: [{ toolCalls: [{ name: "ping", arguments: {} }] }, { text: "done: {{toolResult}}" }] } };
    try {
      const outcome = await runAttempt(config, { log: () => undefined, signal: new AbortController().signal, transport: httpTransport(url) });
      return {
        outcome,
        steps: stepsSent(seen),
        firstWrite: JSON.parse(seen.find((r) => r.path.startsWith("/internal/v1/journal/"))!.body),
        toolCall: JSON.parse(seen.find((r) => r.path.startsWith("/internal/v1/tools/"))!.body),
        result: storedResult(seen),
      };
    } finally {
      remove();
    }
  }

  it("sends the answer that asked for the call and the place of the result with the call, writes neither step itself, and goes on after it", async () => {
    const { outcome, steps, firstWrite, toolCall, result } = await run("journalled");
    expect([outcome, result]).toEqual([{ exitCode: 0 }, "done: pong"]);
    expect(toolCall.resultStep).toEqual(TOOL_STEP);
    // request, the answer with the call (carried by it), step 3 written by the control plane, final answer.
    expect(steps.map((s) => [s.seq, s.kind, s.via])).toEqual([[1, "request", "journal"], [2, "response", "call"], [4, "response", "journal"]]);
    // The model's first request is told with the step written before it; the events since go with the answer they follow, journalled at it.
    expect(firstWrite.events.map((e) => e.type)).toEqual(["WorkerStarted", "ModelRequestStarted"]);
    expect(toolCall.journalFirst?.events.map((e) => e.type)).toEqual(["ModelRequestCompleted", "ToolCallStarted"]);
    // Each model request is told once: the first with its step, the second (no step before it) on its own.
    const started = eventsSent(controlPlane.seen).filter((event) => event.type === "ModelRequestStarted");
    expect(started.map((event) => event.summary)).toEqual([expect.stringMatching(/^turn 1:/), expect.stringMatching(/^turn 2:/)]);
  });

  it("writes the result step itself when the control plane did not", async () => {
    const { outcome, steps } = await run("plain");
    expect(outcome).toEqual({ exitCode: 0 });
    expect(steps.map((s) => [s.seq, s.kind, s.via])).toEqual([[1, "request", "journal"], [2, "response", "call"], [3, "tool_result", "journal"], [4, "response", "journal"]]);
    expect(steps[2].messages).toEqual([{ role: "tool", toolCallId: "call_1_1", name: "ping", content: "pong" }]);
  });

  it("gives the model the result the control plane journalled after the worker stopped waiting, instead of failing", async () => {
    const { outcome, steps, result } = await run("late");
    expect(outcome).toEqual({ exitCode: 0 });
    // The call failed, so the answer it carried went again with the call's error as step 3 (an answer already
    // written changes nothing); that step was refused, and the journalled result went to the model.
    expect(steps.map((s) => [s.seq, s.kind, s.via])).toEqual([[1, "request", "journal"], [2, "response", "call"], [2, "response", "journal"], [3, "tool_result", "journal"], [4, "response", "journal"]]);
    expect(result).toBe("done: pong (late)");
  });

  it("sends neither the answer nor its events again when the call that carried them failed after writing them", async () => {
    const { outcome, steps, result } = await run("failed");
    expect(outcome).toEqual({ exitCode: 0 });
    expect(steps.map((s) => [s.seq, s.kind, s.via])).toEqual([[1, "request", "journal"], [2, "response", "call"], [3, "tool_result", "journal"], [4, "response", "journal"]]);
    expect(result).toBe('done: Error executing tool: tool "ping": the endpoint answered HTTP 500');
    expect(eventsSent(controlPlane.seen).filter((event) => event.type === "ToolCallStarted")).toHaveLength(1);
  });

  it("stops, failing closed, when the journalled result holds a secret the attempt carries: the model never sees it", async () => {
    const { outcome, steps, result } = await run("leaky");
    expect(outcome.exitCode).toBe(1);
    expect(outcome.reason).toMatch(/journalled a result for tool call call_1_1 other than the one the model would be given/);
    expect(steps.map((s) => s.kind)).toEqual(["request", "response"]);
    expect(result).toBeUndefined();
  });
});
