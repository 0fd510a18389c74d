import { readFileSync } from "node:fs";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import type { Resource } from "../../src/resources/meta.ts";
import type { WatchEvent } from "../../src/store/resource-store.ts";
import { tempStore } from "../helpers/store.ts";

const task = (name: string, labels: Record<string, string> = {}, extra: Partial<Resource["metadata"]> = {}): Resource => ({
  apiVersion: "core.orka.ai/v1alpha1",
  kind: "Task",
  metadata: { name, namespace: "default", labels, ...extra },
  spec: { type: "ai", prompt: "hi", priority: 500 },
});

describe("SqliteResourceStore", () => {
  let store: ReturnType<typeof tempStore>;
  beforeEach(() => (store = tempStore()));
  afterEach(() => store.close());

  it("creates with uid, generation and resourceVersion, and refuses a duplicate with 409", async () => {
    const created = await store.resources.create(task("a"));
    expect(created.metadata.uid).toMatch(/[0-9a-f-]{36}/);
    expect(created.metadata.generation).toBe(1);
    await expect(store.resources.create(task("a"))).rejects.toMatchObject({ code: "already_exists", message: "task already exists" });
  });

  it("updates with compare-and-swap on resourceVersion and bumps generation only for spec changes", async () => {
    const created = await store.resources.create(task("a"));
    const updated = await store.resources.update({ ...created, spec: { ...(created.spec as object), prompt: "changed" } });
    expect(updated.metadata.generation).toBe(2);
    await expect(store.resources.update(created)).rejects.toMatchObject({ code: "conflict" });
    const relabelled = await store.resources.update({ ...updated, metadata: { ...updated.metadata, labels: { x: "y" } } });
    expect(relabelled.metadata.generation).toBe(2);
  });

  it("keeps status out of update and spec out of updateStatus", async () => {
    const created = await store.resources.create(task("a"));
    const withStatus = await store.resources.updateStatus({ ...created, status: { phase: "Running" }, spec: { type: "container" } });
    expect(withStatus.spec).toEqual(created.spec);
    const updated = await store.resources.update({ ...withStatus, status: { phase: "Failed" } });
    expect(updated.status).toEqual({ phase: "Running" });
  });

  it("lists by label selector and pages with continue tokens", async () => {
    for (const n of ["a", "b", "c", "d", "e"]) await store.resources.create(task(n, { team: n < "c" ? "x" : "y" }));
    const first = await store.resources.list("Task", { namespace: "default", limit: 2 });
    expect(first.items.map((t) => t.metadata.name)).toEqual(["a", "b"]);
    expect(first.remainingItemCount).toBe(3);
    const second = await store.resources.list("Task", { namespace: "default", limit: 2, continue: first.continue });
    expect(second.items.map((t) => t.metadata.name)).toEqual(["c", "d"]);
    const ys = await store.resources.list("Task", { labelSelector: "team=y" });
    expect(ys.items.map((t) => t.metadata.name)).toEqual(["c", "d", "e"]);
    const notX = await store.resources.list("Task", { labelSelector: "team!=x,team" });
    expect(notX.items).toHaveLength(3);
    await expect(store.resources.list("Task", { continue: "garbage" })).rejects.toMatchObject({ code: "invalid_argument" });
  });

  it("deletes through finalizers and cascades to owned objects", async () => {
    const parent = await store.resources.create(task("parent", {}, { finalizers: ["orka.ai/cleanup"] }));
    const owner = { apiVersion: "core.orka.ai/v1alpha1", kind: "Task", name: "parent", uid: parent.metadata.uid! };
    await store.resources.create(task("child", {}, { ownerReferences: [owner] }));
    const events: WatchEvent[] = [];
    store.resources.watch((e) => events.push(e));

    await store.resources.delete("Task", "default", "parent");
    const marked = await store.resources.get("Task", "default", "parent");
    expect(marked?.metadata.deletionTimestamp).toBeTruthy();
    expect(await store.resources.get("Task", "default", "child")).toBeDefined();

    await store.resources.update({ ...marked!, metadata: { ...marked!.metadata, finalizers: [] } });
    expect(await store.resources.get("Task", "default", "parent")).toBeUndefined();
    expect(await store.resources.get("Task", "default", "child")).toBeUndefined();
    expect(events.map((e) => `${e.type} ${e.object.metadata.name}`)).toEqual(["MODIFIED parent", "DELETED parent", "DELETED child"]);
  });

  it("keeps Secret values encrypted at rest", async () => {
    await store.resources.create({ apiVersion: "v1", kind: "Secret", metadata: { name: "s", namespace: "default" }, spec: { type: "Opaque", data: { "api-key": "sk-very-secret" } } });
    for (const file of ["orka.db", "orka.db-wal"]) {
      expect(readFileSync(join(store.dir, file)).includes("sk-very-secret")).toBe(false);
    }
    expect((await store.resources.get<{ data: Record<string, string> }, unknown>("Secret", "default", "s"))?.spec.data["api-key"]).toBe("sk-very-secret");
  });
});
