import { afterEach, describe, expect, it } from "vitest";
import { API_VERSION } from "../../src/resources/meta.ts";
import type { AttemptExit } from "../../src/runner/runner.ts";
import { controllerOver, standInRunner } from "../helpers/controller.ts";
import { tempStore } from "../helpers/store.ts";

/** A runner whose attempts run until the test ends them; it remembers how many ran at once. */
function holdingRunner(dir: string) {
  const running = new Set<string>();
  const exits: ((exit: AttemptExit) => void)[] = [];
  let mostAtOnce = 0;
  const runner = standInRunner(dir, {
    start: (id) => {
      running.add(id);
      mostAtOnce = Math.max(mostAtOnce, running.size);
    },
    kill: (id, reason) => {
      if (running.delete(id)) setImmediate(() => exits.forEach((listener) => listener({ attemptId: id, exitCode: 137, reason })));
    },
    isRunning: (id) => running.has(id),
    onExit: (listener) => void exits.push(listener),
  });
  return { runner, running, mostAtOnce: () => mostAtOnce };
}

const containerTask = (name: string, priority: number) => ({
  apiVersion: API_VERSION,
  kind: "Task",
  metadata: { name, namespace: "default" },
  spec: { type: "container" as const, command: ["true"], priority },
});

describe("worker slots", () => {
  let cleanup: (() => Promise<void>) | undefined;
  afterEach(async () => {
    await cleanup?.();
    cleanup = undefined;
  });

  it("never runs more attempts than slots, even for Tasks that all become ready in the same moment, and starts the highest priorities", async () => {
    const store = tempStore();
    const held = holdingRunner(store.dir);
    const controller = controllerOver(store, held.runner, 2);
    cleanup = async () => {
      await controller.stop();
      store.close();
    };
    await controller.start();
    // Created without awaiting each other: their first passes run side by side.
    await Promise.all([100, 300, 500, 700, 900, 950].map((priority) => store.resources.create(containerTask(`p${priority}`, priority))));
    const phases = async () => Object.fromEntries((await store.resources.list("Task")).items.map((t) => [t.metadata.name, (t.status as { phase?: string } | undefined)?.phase]));
    for (let i = 0; i < 200 && held.running.size < 2; i++) await new Promise((r) => setTimeout(r, 10));
    await new Promise((r) => setTimeout(r, 300));
    expect(held.mostAtOnce()).toBe(2);
    const now = await phases();
    expect(Object.keys(now).filter((name) => now[name] === "Running").sort()).toEqual(["p900", "p950"]);
  });
});
