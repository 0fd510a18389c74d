import { describe, expect, it } from "vitest";
import { commit } from "../../src/controller/task/status.ts";
import type { Task } from "../../src/resources/task.ts";
import type { ResourceStore } from "../../src/store/resource-store.ts";
import { OrkaError } from "../../src/util/errors.ts";

const task = { apiVersion: "core.orka.ai/v1alpha1", kind: "Task", metadata: { name: "t", namespace: "default", resourceVersion: "1" }, spec: { type: "ai" }, status: { phase: "Pending" } } as unknown as Task;

describe("one status write per pass", () => {
  it("undoes what a transition prepared when its write loses a conflict, and runs nothing after it", async () => {
    const calls: string[] = [];
    const store = { updateStatus: async () => Promise.reject(new OrkaError("conflict", "the object has been modified")) } as unknown as ResourceStore;
    const written = commit(store, task, { status: { phase: "Running" }, after: () => void calls.push("after"), undo: async () => void calls.push("undo") });
    await expect(written).rejects.toMatchObject({ code: "conflict" });
    expect(calls).toEqual(["undo"]);
  });

  it("runs what follows a write that succeeded, with the Task as written, and undoes nothing", async () => {
    const calls: string[] = [];
    const store = { updateStatus: async (next: Task) => ({ ...next, metadata: { ...next.metadata, resourceVersion: "2" } }) } as unknown as ResourceStore;
    await commit(store, task, { status: { phase: "Running" }, after: (w) => void calls.push(`after ${w.status?.phase} v${w.metadata.resourceVersion}`), undo: async () => void calls.push("undo") });
    expect(calls).toEqual(["after Running v2"]);
  });
});
