import { afterEach, describe, expect, it } from "vitest";
import type { AgentStatus } from "../../src/resources/agent.ts";
import { API_VERSION } from "../../src/resources/meta.ts";
import type { AttemptExit } from "../../src/runner/runner.ts";
import { controllerOver, standInRunner } from "../helpers/controller.ts";
import { tempStore } from "../helpers/store.ts";

const resource = (kind: string, name: string, spec: object) => ({ apiVersion: API_VERSION, kind, metadata: { name, namespace: "default" }, spec });

/** A runner whose attempts end at once (with no result, so their Tasks fail: an end all the same). */
function finishingRunner(dir: string) {
  const exits: ((exit: AttemptExit) => void)[] = [];
  return standInRunner(dir, {
    start: (id) => void setImmediate(() => exits.forEach((listener) => listener({ attemptId: id, exitCode: 0 }))),
    isRunning: () => false,
    onExit: (listener) => void exits.push(listener),
  });
}

describe("an Agent's lastUsed", () => {
  let cleanup: (() => Promise<void>) | undefined;
  afterEach(async () => {
    await cleanup?.();
    cleanup = undefined;
  });

  it("moves to when its Task ended, but is written at most once a second however many Tasks end", async () => {
    const store = tempStore();
    const controller = controllerOver(store, finishingRunner(store.dir), 4);
    cleanup = async () => {
      await controller.stop();
      store.close();
    };
    await store.resources.create(resource("Provider", "offline", { type: "scripted", scripted: { turns: [{ text: "done" }] } }));
    const created = await store.resources.create(resource("Agent", "worker", { providerRef: { name: "offline" } }));
    await store.resources.updateStatus({ ...created, status: { activeTasks: 0, lastUsed: "2020-01-01T00:00:00.000Z" } });
    await controller.start();
    const agent = async () => (await store.resources.get<unknown, AgentStatus>("Agent", "default", "worker"))!;
    const runToEnd = async (name: string): Promise<void> => {
      await store.resources.create(resource("Task", name, { type: "ai", agentRef: { name: "worker" }, prompt: "go" }));
      for (let i = 0; i < 500; i++) {
        const phase = (await store.resources.get<unknown, { phase?: string }>("Task", "default", name))?.status?.phase;
        if (phase === "Succeeded" || phase === "Failed") return;
        await new Promise((r) => setTimeout(r, 10));
      }
      throw new Error(`${name} did not end`);
    };

    const before = Date.now();
    await runToEnd("first");
    const touched = await agent();
    expect(Date.parse(touched.status!.lastUsed!)).toBeGreaterThanOrEqual(before);

    await runToEnd("second");
    const after = await agent();
    if (Date.now() - Date.parse(touched.status!.lastUsed!) < 1000) {
      // Within the second: the Agent was not written again.
      expect(after.metadata.resourceVersion).toBe(touched.metadata.resourceVersion);
    } else {
      // A machine slow enough to take a second in between: then it moved on.
      expect(Date.parse(after.status!.lastUsed!)).toBeGreaterThan(Date.parse(touched.status!.lastUsed!));
    }
  });
});
