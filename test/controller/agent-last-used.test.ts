import { afterEach, describe, expect, it, vi } from "vitest";
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
    vi.useRealTimers();
    await cleanup?.();
    cleanup = undefined;
  });

  it("moves to when its Task ended, at most once a second however many Tasks end, and past a time ahead of the clock", async () => {
    // Only the date is the test's: timers run as they do.
    vi.useFakeTimers({ toFake: ["Date"] });
    const start = Date.parse("2026-06-01T12:00:00.000Z");
    vi.setSystemTime(start);
    const store = tempStore();
    const controller = controllerOver(store, finishingRunner(store.dir), 4);
    cleanup = async () => {
      await controller.stop();
      store.close();
    };
    await store.resources.create(resource("Provider", "offline", { type: "scripted", scripted: { turns: [{ text: "done" }] } }));
    const created = await store.resources.create(resource("Agent", "worker", { providerRef: { name: "offline" } }));
    await store.resources.updateStatus({ ...created, status: { activeTasks: 0, lastUsed: "2027-01-01T00:00:00.000Z" } });
    await controller.start();
    const lastUsed = async () => (await store.resources.get<unknown, AgentStatus>("Agent", "default", "worker"))!.status!.lastUsed;
    const runToEnd = async (name: string, at: number): Promise<void> => {
      vi.setSystemTime(at);
      await store.resources.create(resource("Task", name, { type: "ai", agentRef: { name: "worker" }, prompt: "go" }));
      for (let i = 0; i < 500; i++) {
        const phase = (await store.resources.get<unknown, { phase?: string }>("Task", "default", name))?.status?.phase;
        if (phase === "Succeeded" || phase === "Failed") return;
        await new Promise((r) => setTimeout(r, 10));
      }
      throw new Error(`${name} did not end`);
    };

    await runToEnd("first", start);
    expect(await lastUsed()).toBe(new Date(start).toISOString());
    await runToEnd("second", start + 900);
    expect(await lastUsed()).toBe(new Date(start).toISOString());
    await runToEnd("third", start + 1500);
    expect(await lastUsed()).toBe(new Date(start + 1500).toISOString());
  });
});
