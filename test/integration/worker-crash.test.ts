import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startOrkaWithPeer } from "../helpers/orka-with-peer.ts";
import { queueAiTasks, untilSettled } from "../helpers/backlog.ts";
import type { OrkaUnderTest } from "../helpers/orka-server.ts";
import type { LlmPeer } from "../peers/llm-server.ts";

const ROUNDS = 3;
const TASKS_PER_ROUND = 60;
// A Task lost more than 5 times fails by policy; five kills a round keep every Task within it.
const KILLS_PER_ROUND = 5;

// A worker process that dies (kill -9) while the controller is handing it attempts loses only
// those attempts, which resume from their journals; the server itself never goes down with it.
describe("worker processes killed under load", () => {
  let orka: OrkaUnderTest;
  let peer: LlmPeer;
  let stop: () => Promise<void>;
  beforeAll(async () => {
    ({ orka, peer, stop } = await startOrkaWithPeer(
      "apiVersion: core.orka.ai/v1alpha1\nkind: Agent\nmetadata: {name: steady}\nspec: {providerRef: {name: peer}, model: {name: m-steady}}\n",
      { ORKA_WORKER_SLOTS: "32", ORKA_WORKER_PROCESSES: "2" },
    ));
  });
  afterAll(() => stop());

  it("kill -9 of a worker, again and again, with a backlog queued: the server stays up and every Task succeeds", async () => {
    peer.script("m-steady", [{ text: "done" }]);
    peer.setDelay(20, "m-steady");
    for (let round = 0; round < ROUNDS; round++) {
      // Workers die while the backlog is being queued and started, when the server sends them the most.
      const killing = (async () => {
        for (let kill = 0; kill < KILLS_PER_ROUND && orka.alive; kill++) {
          await new Promise((r) => setTimeout(r, 100));
          const workers = orka.workerPids();
          if (workers.length > 0) process.kill(workers[kill % workers.length], "SIGKILL");
        }
      })();
      const queued = await queueAiTasks(orka, TASKS_PER_ROUND, { prefix: `round${round}`, agent: "steady" }).then(
        () => "queued",
        (err: Error) => err.message,
      );
      await killing;
      expect(orka.alive, `the server died:\n${orka.output().slice(-2_000)}`).toBe(true);
      expect(queued, `creating the backlog failed:\n${orka.output().slice(-2_000)}`).toBe("queued");
      expect(await untilSettled(orka, 30_000)).toEqual({ Succeeded: TASKS_PER_ROUND * (round + 1) });
    }
    expect((await fetch(`${orka.url}/healthz`)).status).toBe(200);
    expect(orka.workerPids(), "every killed worker was replaced").toHaveLength(2);
    expect(orka.output()).not.toMatch(/EPIPE|ERR_IPC_CHANNEL_CLOSED/);
  }, 90_000);
});
