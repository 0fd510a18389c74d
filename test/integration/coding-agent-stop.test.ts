import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startOrkaWithPeer } from "../helpers/orka-with-peer.ts";
import type { OrkaUnderTest } from "../helpers/orka-server.ts";
import { peerProviderYaml, STAND_IN_CLAUDE_ENV } from "../helpers/coding-agents.ts";

// One worker process runs both Tasks: a CLI that ignores SIGTERM is killed by its session's own grace,
// well within the pool's, so the worker (and the other Task on it) lives on.
describe("a coding CLI slow to stop", () => {
  let orka: OrkaUnderTest;
  let stop: () => Promise<void>;

  beforeAll(async () => {
    ({ orka, stop } = await startOrkaWithPeer(
      `${peerProviderYaml("claude-peer", "anthropic", "sk-ant-stop-test-key")}---
apiVersion: core.orka.ai/v1alpha1
kind: Agent
metadata: {name: coder}
spec:
  model: {provider: claude-peer, name: claude-test-model}
  runtime: {type: claude, defaultAllowedTools: [Read]}`,
      { ...STAND_IN_CLAUDE_ENV, ORKA_WORKER_PROCESSES: "1" },
    ));
  }, 60_000);
  afterAll(async () => {
    await stop?.();
  });

  const create = async (name: string, script: Record<string, unknown>, extra: Record<string, unknown> = {}) => {
    const created = await orka.api("POST", "/api/v1/tasks", { metadata: { name }, spec: { type: "agent", agentRef: { name: "coder" }, prompt: JSON.stringify(script), ...extra } });
    expect(created.status, JSON.stringify(created.body)).toBe(201);
  };

  it("costs no other Task on the same worker: the session kills its sandbox before the pool would kill the worker", async () => {
    await create("stubborn", { ignoreSigterm: true, sleep: 60 }, { timeout: "3s" });
    await create("neighbour", { sleep: 9, print: "still here" });
    const stubborn = await orka.waitFor("stubborn", ["Succeeded", "Failed"], 30_000);
    expect(stubborn.status.phase).toBe("Failed");
    expect(stubborn.status.message).toContain("timed out");
    const neighbour = await orka.waitFor("neighbour", ["Succeeded", "Failed"], 40_000);
    expect(neighbour.status.phase, neighbour.status.message).toBe("Succeeded");
    expect(neighbour.status.attempts ?? 1).toBe(1);
    expect(JSON.parse((await orka.api("GET", "/api/v1/tasks/neighbour/result")).body.result)).toMatchObject({ print: "still here" });
  }, 60_000);
});
