import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startOrkaServer, type OrkaUnderTest } from "../helpers/orka-server.ts";
import { startOrkaWithPeer } from "../helpers/orka-with-peer.ts";
import { phaseCounts, queueAiTasks, untilSettled } from "../helpers/backlog.ts";
import type { LlmPeer, RecordedRequest } from "../peers/llm-server.ts";

// A server killed with SIGKILL loses no Task: Pending ones start after the restart, and Running
// ones whose attempt died with it are retried by policy or failed — never left Running.
describe("server restart", () => {
  let orka: OrkaUnderTest;
  beforeAll(async () => (orka = await startOrkaServer({ ORKA_WORKER_SLOTS: "2" })));
  afterAll(() => orka.stop());

  it("recovers Pending and Running Tasks after kill -9", async () => {
    await orka.api("POST", "/api/v1/tasks", { name: "retried", type: "container", command: ["sleep", "1"], retryPolicy: { maxRetries: 1, initialDelay: "100ms" } });
    await orka.api("POST", "/api/v1/tasks", { name: "unretried", type: "container", command: ["sleep", "30"] });
    await orka.waitFor("retried", ["Running"]);
    await orka.waitFor("unretried", ["Running"]);
    await orka.api("POST", "/api/v1/tasks", { name: "queued", type: "container", command: ["echo", "ran after restart"] });
    await new Promise((r) => setTimeout(r, 300));
    expect((await orka.api("GET", "/api/v1/tasks/queued")).body.status.phase).toBe("Pending");

    await orka.restart();

    const retried = await orka.waitFor("retried");
    expect(retried.status).toMatchObject({ phase: "Succeeded", attempts: 2 });
    const unretried = await orka.waitFor("unretried");
    expect(unretried.status.phase).toBe("Failed");
    expect(unretried.status.message).toContain("worker lost: the server restarted");
    expect((await orka.waitFor("queued")).status.phase).toBe("Succeeded");
    expect((await orka.api("GET", "/api/v1/tasks/queued/result")).body.result).toContain("ran after restart");
  });
});

const STEADY_AGENT = "apiVersion: core.orka.ai/v1alpha1\nkind: Agent\nmetadata: {name: steady}\nspec: {providerRef: {name: peer}, model: {name: m-fast}}\n";
const SLOTS = 4;
const BACKLOG = 60;

/** The Task a model request was made for (the prompt names it). */
const taskOfRequest = (request: RecordedRequest) => /work for ([\w-]+)/.exec(JSON.stringify(request.body.messages))?.[1];

// Recovery after kill -9 of the server goes through the same worker slots and priority queue as
// any other start: a backlog does not start all at once, and nothing fails because of the restart.
describe("server restart under a backlog", () => {
  let orka: OrkaUnderTest;
  let peer: LlmPeer;
  let stop: () => Promise<void>;
  beforeAll(async () => ({ orka, peer, stop } = await startOrkaWithPeer(STEADY_AGENT, { ORKA_WORKER_SLOTS: String(SLOTS) })));
  afterAll(() => stop());

  it(`after kill -9 never runs more than ${SLOTS} attempts at once, starts the highest priority first, and every Task succeeds`, async () => {
    peer.script("m-slow", [{ text: "done" }]);
    peer.script("m-fast", [{ text: "done" }]);
    peer.setDelay(30_000, "m-slow");
    peer.setDelay(50, "m-fast");
    // Slow Tasks fill the slots, so the backlog behind them is still queued when the server dies.
    await queueAiTasks(orka, SLOTS, { prefix: "blocker", agent: "steady", model: "m-slow" });
    for (let i = 0; i < 200 && peer.requests.length < SLOTS; i++) await new Promise((r) => setTimeout(r, 50));
    await queueAiTasks(orka, BACKLOG, { prefix: "backlog", agent: "steady" });
    const urgent = await queueAiTasks(orka, SLOTS, { prefix: "urgent", agent: "steady", priority: 900 });
    for (const name of urgent) await orka.waitFor(name, ["Pending"]);
    expect(peer.requests.map(taskOfRequest).sort()).toEqual(["blocker-0", "blocker-1", "blocker-2", "blocker-3"]);

    const beforeRestart = peer.requests.length;
    await orka.restart();
    peer.setDelay(50, "m-slow");

    expect(await untilSettled(orka, 60_000)).toEqual({ Succeeded: SLOTS + BACKLOG + SLOTS });
    const afterRestart = peer.requests.slice(beforeRestart);
    expect(Math.max(...afterRestart.map((r) => r.concurrent))).toBeLessThanOrEqual(SLOTS);
    const startTimes = new Map<string, number>((await orka.api("GET", "/api/v1/tasks?limit=0")).body.items.map((t: any) => [t.metadata.name, Date.parse(t.status.startTime)]));
    const urgentStarts = [...startTimes].filter(([name]) => name.startsWith("urgent-")).map(([, at]) => at);
    const otherStarts = [...startTimes].filter(([name]) => !name.startsWith("urgent-")).map(([, at]) => at);
    expect(Math.max(...urgentStarts)).toBeLessThanOrEqual(Math.min(...otherStarts));
    expect(orka.output()).not.toContain("aborted due to timeout");
  }, 120_000);
});

// SIGTERM is a graceful stop: nothing new starts, running attempts are left to resume on the next
// start, and queued Tasks stay Pending. No Task may fail because the server was stopped.
describe("SIGTERM under a backlog", () => {
  let orka: OrkaUnderTest;
  let peer: LlmPeer;
  let stop: () => Promise<void>;
  beforeAll(async () => ({ orka, peer, stop } = await startOrkaWithPeer(STEADY_AGENT, { ORKA_WORKER_SLOTS: String(SLOTS) })));
  afterAll(() => stop());

  it("fails nothing when stopped by SIGTERM mid-backlog; after a restart every Task succeeds", async () => {
    peer.script("m-fast", [{ text: "done" }]);
    peer.setDelay(200, "m-fast");
    await queueAiTasks(orka, BACKLOG, { prefix: "queued", agent: "steady" });
    for (let i = 0; i < 300 && ((await phaseCounts(orka)).Succeeded ?? 0) < 2 * SLOTS; i++) await new Promise((r) => setTimeout(r, 100));
    const before = await phaseCounts(orka);
    expect(before.Pending, "part of the backlog is still queued").toBeGreaterThan(0);

    // Someone follows a queued Task's events: an open stream must not hold the stop up.
    const follower = new AbortController();
    const stream = await fetch(`${orka.url}/api/v1/tasks/queued-${BACKLOG - 1}/stream`, { headers: { authorization: `Bearer ${orka.token}` }, signal: follower.signal });
    expect(stream.status).toBe(200);

    await orka.terminate();
    follower.abort();
    await orka.restart();

    const afterStop = await phaseCounts(orka);
    expect(afterStop.Failed ?? 0).toBe(0);
    expect(await untilSettled(orka, 60_000)).toEqual({ Succeeded: BACKLOG });
  }, 120_000);
});
