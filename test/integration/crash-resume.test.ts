import http from "node:http";
import { existsSync, mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { AddressInfo } from "node:net";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startOrkaWithPeer } from "../helpers/orka-with-peer.ts";
import type { OrkaUnderTest } from "../helpers/orka-server.ts";
import { toolResultsOf, type LlmPeer } from "../peers/llm-server.ts";

// Crash-exact durability: a coordinator Task that delegates, calls a side-effecting HTTP Tool, writes
// and reads a workspace file, updates its plan, proposes a memory and waits for its child is killed (its worker, or the
// whole server) just before each of its journal steps in turn, and the server also just after it wrote each,
// before the commit. Every run must end with the undisturbed
// run's result, act exactly once (the peers' logs and the stores prove it) and lose no turn.
// The opening request, 3 answers and 7 tool results. (Later turns add no messages, and these tools
// are all safely repeatable, so no request or started step is written for them.)
const STEPS = 11;
const RESPONSE_STEPS = new Set([2, 6, 11]); // dying before these loses a model answer, which is asked again
// The HTTP Tool's result, which the server writes with the reply it records. Dying after the call and
// before that commit leaves the call started with no reply: it is not sent again, and its outcome is unknown.
const REMOTE_RESULT_STEP = 4;
const OUTCOME_UNKNOWN =
  "outcome unknown: this call of notify started earlier and its reply was not recorded (it may still be running, or the control plane went down in the middle of it), so it may or may not have reached the service. It was not sent again; check before repeating it.";

const AGENTS = (notifyURL: string) => `
apiVersion: core.orka.ai/v1alpha1
kind: Tool
metadata: {name: notify}
spec:
  description: Tell the team something
  parameters: {type: object, properties: {message: {type: string}}, required: [message]}
  http: {url: "${notifyURL}"}
---
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
  tools: [{name: notify}, {name: file_write}, {name: file_read}]
  coordination: {enabled: true, allowedAgents: [{name: helper}]}
`;

const CALLER = `
---
apiVersion: core.orka.ai/v1alpha1
kind: Agent
metadata: {name: caller}
spec: {providerRef: {name: peer}, tools: [{name: notify}]}
`;

/** What varies between runs for reasons other than crashes: generated names and ids. */
const sanitize = (text: string) =>
  text
    .replace(/[a-z0-9-]+-child-[0-9a-f]{5}/g, "<child>")
    .replace(/[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}/g, "<id>")
    .replace(/[0-9a-f]{16,}/g, "<id>")
    .replace(/\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d+)?Z/g, "<time>");

function scriptFor(peer: LlmPeer, task: string): void {
  peer.script(`m-${task}`, [
    {
      toolCalls: [
        { name: "delegate_task", arguments: { agent: "helper", prompt: `sub job of ${task}` } },
        { name: "notify", arguments: { message: `started ${task}` } },
        { name: "file_write", arguments: { path: "notes.txt", content: "alpha" } },
      ],
    },
    (body) => ({
      toolCalls: [
        { name: "update_plan", arguments: { summary: "half way", plan_document: "1. delegate\n2. read back", progress_pct: 50 } },
        { name: "file_read", arguments: { path: "notes.txt" } },
        { name: "remember", arguments: { title: `Lesson of ${task}`, content: "Notes live in notes.txt", tags: ["durability"] } },
        // A poll: each of its calls must see fresh state, never a recorded reply.
        { name: "wait_for_tasks", arguments: { tasks: [JSON.parse(toolResultsOf(body)[0]).taskName], timeout: "30s" } },
      ],
    }),
    (body) => ({ text: `final: ${toolResultsOf(body).map((r) => sanitize(r).replaceAll(task, "<task>")).join(" | ")}` }),
  ]);
}

async function startNotifyListener() {
  const received: string[] = [];
  const server = http.createServer((req, res) => {
    let body = "";
    req.on("data", (c) => (body += c));
    req.on("end", () => {
      if (req.method === "POST") received.push(JSON.parse(body).message);
      res.writeHead(200, { "content-type": "application/json" }).end('{"ok":true}');
    });
  });
  await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/notify`, received, close: () => server.close() };
}

interface Outcome {
  phase: string;
  result: string;
  children: number;
  proposals: number;
  notified: number;
  modelRequests: number;
  resumed: boolean;
}

async function outcomeOf(orka: OrkaUnderTest, peer: LlmPeer, notified: string[], task: string): Promise<Outcome> {
  const done = await orka.waitFor(task, ["Succeeded", "Failed", "Cancelled"], 30_000);
  const result = (await orka.api("GET", `/api/v1/tasks/${task}/result`)).body?.result ?? "";
  const children = (await orka.api("GET", `/api/v1/tasks?labelSelector=orka.ai/parent-task=${task}`)).body.items.length;
  const proposals = (await orka.api("GET", `/api/v1/memory-proposals?taskName=${task}`)).body.items.length;
  const events = (await orka.api("GET", `/api/v1/tasks/${task}/events?type=AttemptResumed`)).body.events;
  return {
    phase: done.status.phase,
    result: result.replaceAll(task, "<task>"),
    children,
    proposals,
    notified: notified.filter((m) => m === `started ${task}`).length,
    modelRequests: peer.requests.filter((r) => r.body.model === `m-${task}`).length,
    resumed: events.length > 0,
  };
}

describe("crash-exact durability", () => {
  let notify: Awaited<ReturnType<typeof startNotifyListener>>;
  beforeAll(async () => {
    notify = await startNotifyListener();
  });
  afterAll(() => notify.close());

  let baseline: Outcome;

  it("kills the worker before each journal step: same result, every effect once, no turn lost", async () => {
    const markerDir = mkdtempSync(join(tmpdir(), "orka-faults-"));
    const steps = Object.fromEntries(Array.from({ length: STEPS }, (_, i) => [`w-${i + 1}`, i + 1]));
    const { orka, peer, stop } = await startOrkaWithPeer(AGENTS(notify.url), {
      ORKA_FAULT_INJECTION: JSON.stringify({ where: "worker", steps, markerDir }),
      ORKA_WORKER_PROCESSES: "1",
      ORKA_ALLOW_LOOPBACK_EGRESS: "true",
    });
    try {
      peer.script("m-helper", [{ text: "helper done" }]);
      scriptFor(peer, "undisturbed");
      await orka.api("POST", "/api/v1/tasks", { name: "undisturbed", type: "ai", agentRef: "boss", prompt: "go", ai: { model: "m-undisturbed" } });
      baseline = await outcomeOf(orka, peer, notify.received, "undisturbed");
      expect(baseline).toMatchObject({ phase: "Succeeded", children: 1, proposals: 1, notified: 1, modelRequests: 3, resumed: false });
      expect(baseline.result).toContain('"content": "alpha"');

      for (let step = 1; step <= STEPS; step++) {
        const task = `w-${step}`;
        scriptFor(peer, task);
        await orka.api("POST", "/api/v1/tasks", { name: task, type: "ai", agentRef: "boss", prompt: "go", ai: { model: `m-${task}` } });
        const outcome = await outcomeOf(orka, peer, notify.received, task);
        expect(existsSync(join(markerDir, `worker-${task}-${step}`)), `the worker was killed before step ${step}`).toBe(true);
        expect({ step, ...outcome }).toEqual({ step, ...baseline, modelRequests: RESPONSE_STEPS.has(step) ? 4 : 3, resumed: true });
      }
    } finally {
      await stop();
    }
  }, 240_000);

  // A step the server wrote and had not committed yet is lost with it, as if it had died before the write:
  // nothing that told of it (the reply to the worker) went out.
  it.each([
    ["before each journal step", "server", "s"],
    ["after it writes each journal step, before the commit", "server-uncommitted", "u"],
  ] as const)("kills the whole server %s: after a restart the same holds", async (_when, where, prefix) => {
    const markerDir = mkdtempSync(join(tmpdir(), "orka-faults-"));
    const steps = Object.fromEntries(Array.from({ length: STEPS }, (_, i) => [`${prefix}-${i + 1}`, i + 1]));
    const { orka, peer, stop } = await startOrkaWithPeer(AGENTS(notify.url), {
      ORKA_FAULT_INJECTION: JSON.stringify({ where, steps, markerDir }),
      ORKA_ALLOW_LOOPBACK_EGRESS: "true",
    });
    try {
      peer.script("m-helper", [{ text: "helper done" }]);
      for (let step = 1; step <= STEPS; step++) {
        const task = `${prefix}-${step}`;
        scriptFor(peer, task);
        await orka.api("POST", "/api/v1/tasks", { name: task, type: "ai", agentRef: "boss", prompt: "go", ai: { model: `m-${task}` } });
        await untilDown(orka);
        await orka.restart();
        const outcome = await outcomeOf(orka, peer, notify.received, task);
        expect(existsSync(join(markerDir, `${where}-${task}-${step}`)), `the server was killed at step ${step}`).toBe(true);
        const replyLost = where === "server-uncommitted" && step === REMOTE_RESULT_STEP;
        const result = replyLost ? baseline.result.replace('{"ok":true}', OUTCOME_UNKNOWN) : baseline.result;
        expect({ step, ...outcome }).toEqual({ step, ...baseline, result, modelRequests: RESPONSE_STEPS.has(step) ? 4 : 3, resumed: true });
      }
    } finally {
      await stop();
    }
  }, 300_000);

  // The model's answer that asks for a custom Tool travels with the Tool's call (step 2), whose result the
  // server writes with the reply (step 3): the answer and the call's start are one commit, so dying before
  // either loses the answer, which is asked for again, and the Tool is still called once.
  it("kills the worker, or the server, before an answer that travels with its custom Tool call: the Tool still acts once", async () => {
    for (const where of ["worker", "server"] as const) {
      const markerDir = mkdtempSync(join(tmpdir(), "orka-faults-"));
      const tasks = [2, 3].map((step) => ({ step, task: `${where[0]}-carried-${step}` }));
      const { orka, peer, stop } = await startOrkaWithPeer(`${AGENTS(notify.url)}${CALLER}`, {
        ORKA_FAULT_INJECTION: JSON.stringify({ where, steps: Object.fromEntries(tasks.map(({ step, task }) => [task, step])), markerDir }),
        ORKA_ALLOW_LOOPBACK_EGRESS: "true",
      });
      try {
        for (const { step, task } of tasks) {
          peer.script(`m-${task}`, [{ toolCalls: [{ name: "notify", arguments: { message: `started ${task}` } }] }, (body) => ({ text: `final: ${toolResultsOf(body).join(" | ")}` })]);
          await orka.api("POST", "/api/v1/tasks", { name: task, type: "ai", agentRef: "caller", prompt: "go", ai: { model: `m-${task}` } });
          if (where === "server") {
            await untilDown(orka);
            await orka.restart();
          }
          const outcome = await outcomeOf(orka, peer, notify.received, task);
          expect(existsSync(join(markerDir, `${where}-${task}-${step}`)), `the ${where} was killed before step ${step}`).toBe(true);
          expect({ step, ...outcome }).toEqual({ step, phase: "Succeeded", result: 'final: {"ok":true}', children: 0, proposals: 0, notified: 1, modelRequests: 3, resumed: true });
        }
      } finally {
        await stop();
      }
    }
  }, 120_000);
});

/** Waits (at most 20 s) until the server process has died by its own fault switch. */
async function untilDown(orka: OrkaUnderTest): Promise<void> {
  for (let i = 0; i < 200; i++) {
    try {
      await fetch(`${orka.url}/healthz`, { signal: AbortSignal.timeout(500) });
    } catch {
      return;
    }
    await new Promise((r) => setTimeout(r, 100));
  }
  throw new Error("the server did not die at its fault point");
}
