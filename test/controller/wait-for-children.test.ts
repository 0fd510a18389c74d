import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { waitForChildren } from "../../src/controller/children.ts";
import type { Resource } from "../../src/resources/meta.ts";
import { parentLink } from "../../src/resources/parent-link.ts";
import type { TaskSpec, TaskStatus } from "../../src/resources/task.ts";
import type { ResourceStore } from "../../src/store/resource-store.ts";
import { tempStore } from "../helpers/store.ts";

type Task = Resource<TaskSpec, TaskStatus>;

const task = (name: string, extra: Partial<Task["metadata"]> = {}): Task => ({
  apiVersion: "core.orka.ai/v1alpha1",
  kind: "Task",
  metadata: { name, namespace: "default", ...extra },
  spec: { type: "ai", prompt: "go" } as TaskSpec,
});

describe("waiting for children", () => {
  let store: ReturnType<typeof tempStore>;
  beforeEach(() => (store = tempStore()));
  afterEach(() => store.close());

  it("wakes when a child ends while its first read is still running, not at the fallback poll", async () => {
    const parent = (await store.resources.create(task("parent"))) as Task;
    const child = (await store.resources.create(task("child", parentLink(parent, "default")))) as Task;
    await store.resources.updateStatus({ ...child, status: { phase: "Running" } });
    let ended = false;
    // The child ends after the first read found it running, before that read has answered.
    const reads: ResourceStore = Object.create(store.resources, {
      get: {
        value: async (...args: Parameters<ResourceStore["get"]>) => {
          const found = await store.resources.get(...args);
          if (!ended && args[2] === "child") {
            ended = true;
            const current = (await store.resources.get("Task", "default", "child")) as Task;
            await store.resources.updateStatus({ ...current, status: { phase: "Succeeded" } });
          }
          return found;
        },
      },
    });
    const started = performance.now();
    const waited = await waitForChildren(reads, store.data, parent, ["child"], 20_000);
    expect(waited.completed).toBe(true);
    expect(waited.results).toEqual([expect.objectContaining({ task: "child", phase: "Succeeded" })]);
    expect(performance.now() - started).toBeLessThan(2_000);
  });

  it("answers what it found when the wait runs out", async () => {
    const parent = (await store.resources.create(task("parent"))) as Task;
    await store.resources.create(task("child", parentLink(parent, "default")));
    const waited = await waitForChildren(store.resources, store.data, parent, ["child", "stranger"], 50);
    expect(waited.completed).toBe(false);
    expect(waited.results.map((r) => r.phase)).toEqual(["Pending", "Error"]);
  });
});
