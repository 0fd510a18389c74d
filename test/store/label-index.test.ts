import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import type { Resource } from "../../src/resources/meta.ts";
import { SecretCipher } from "../../src/store/secret-cipher.ts";
import { openDatabase } from "../../src/store/sqlite/db.ts";
import { migrations } from "../../src/store/sqlite/migrations.ts";
import { SqliteResourceStore } from "../../src/store/sqlite/resource-store.ts";
import { databaseBefore, tempStore } from "../helpers/store.ts";

const task = (name: string, labels: Record<string, string>, namespace = "default"): Resource => ({
  apiVersion: "core.orka.ai/v1alpha1",
  kind: "Task",
  metadata: { name, namespace, labels },
  spec: { type: "ai", prompt: "hi" },
});

describe("label selectors answered from the label index", () => {
  let store: ReturnType<typeof tempStore>;
  const names = async (labelSelector: string, namespace?: string) =>
    (await store.resources.list("Task", { labelSelector, namespace })).items.map((t) => `${t.metadata.namespace}/${t.metadata.name}`);

  beforeEach(async () => {
    store = tempStore();
    await store.resources.create(task("a", { team: "x", tier: "gold" }));
    await store.resources.create(task("b", { team: "y" }));
    await store.resources.create(task("c", { team: "z", tier: "silver" }));
    await store.resources.create(task("d", {}));
    await store.resources.create(task("e", { team: "x" }, "other"));
    // Another kind with the same labels is never listed as a Task.
    await store.resources.create({ ...task("a", { team: "x" }), kind: "Agent" });
  });
  afterEach(() => store.close());

  it("matches every operator as Kubernetes defines it, across namespaces or within one", async () => {
    expect(await names("team=x")).toEqual(["default/a", "other/e"]);
    expect(await names("team==x", "default")).toEqual(["default/a"]);
    expect(await names("team!=x")).toEqual(["default/b", "default/c", "default/d"]);
    expect(await names("team in (x, z)")).toEqual(["default/a", "default/c", "other/e"]);
    expect(await names("team notin (x,z)")).toEqual(["default/b", "default/d"]);
    expect(await names("tier")).toEqual(["default/a", "default/c"]);
    expect(await names("!tier", "default")).toEqual(["default/b", "default/d"]);
    expect(await names("team=x,tier=gold")).toEqual(["default/a"]);
    expect(await names("team,!tier,team!=y")).toEqual(["other/e"]);
    expect(await names("team=nobody")).toEqual([]);
  });

  it("pages a selector's matches with continue tokens and counts what remains", async () => {
    for (let i = 0; i < 7; i++) await store.resources.create(task(`p${i}`, { batch: "one" }));
    await store.resources.create(task("q", { batch: "two" }));
    const seen: string[] = [];
    const remaining: number[] = [];
    let next: string | undefined;
    for (let page = 0; page < 10; page++) {
      const list = await store.resources.list("Task", { labelSelector: "batch=one", limit: 3, continue: next });
      seen.push(...list.items.map((t) => t.metadata.name));
      remaining.push(list.remainingItemCount ?? 0);
      next = list.continue;
      if (!next) break;
    }
    expect(seen).toEqual(["p0", "p1", "p2", "p3", "p4", "p5", "p6"]);
    expect(remaining).toEqual([4, 1, 0]);
    const inNamespace = await store.resources.list("Task", { namespace: "default", labelSelector: "batch in (one,two)", limit: 7 });
    expect(inNamespace.items.map((t) => t.metadata.name)).toEqual(["p0", "p1", "p2", "p3", "p4", "p5", "p6"]);
    const last = await store.resources.list("Task", { namespace: "default", labelSelector: "batch in (one,two)", continue: inNamespace.continue });
    expect(last.items.map((t) => t.metadata.name)).toEqual(["q"]);
  });

  it("refuses a continue token of another namespace's list", async () => {
    const page = await store.resources.list("Task", { namespace: "default", limit: 1 });
    await expect(store.resources.list("Task", { namespace: "other", continue: page.continue })).rejects.toMatchObject({ code: "invalid_argument" });
  });

  it("follows updates that change or remove labels, and keeps them through status writes", async () => {
    const a = (await store.resources.get("Task", "default", "a"))!;
    const moved = await store.resources.update({ ...a, metadata: { ...a.metadata, labels: { team: "y" } } });
    expect(await names("team=x")).toEqual(["other/e"]);
    expect(await names("team=y")).toEqual(["default/a", "default/b"]);
    expect(await names("tier")).toEqual(["default/c"]);
    await store.resources.updateStatus({ ...moved, status: { phase: "Running" } });
    expect(await names("team=y")).toEqual(["default/a", "default/b"]);
    const unlabelled = (await store.resources.get("Task", "default", "a"))!;
    await store.resources.update({ ...unlabelled, metadata: { ...unlabelled.metadata, labels: undefined } });
    expect(await names("team")).toEqual(["default/b", "default/c", "other/e"]);
  });

  it("stores an object with a label set to undefined as one without that label", async () => {
    await store.resources.create(task("f", { team: "x", gone: undefined as unknown as string }));
    expect(await names("gone")).toEqual([]);
    expect(await names("team=x,!gone", "default")).toEqual(["default/a", "default/f"]);
  });

  it("forgets a deleted object's labels, also when one of the same name comes back without them", async () => {
    await store.resources.delete("Task", "default", "a");
    expect(await names("team=x")).toEqual(["other/e"]);
    await store.resources.create(task("a", { team: "q" }));
    expect(await names("tier")).toEqual(["default/c"]);
    expect(await names("team=q")).toEqual(["default/a"]);
  });

  it("forgets the labels of objects removed by a cascade", async () => {
    const parent = await store.resources.create(task("parent", { role: "parent" }));
    const owner = { apiVersion: "core.orka.ai/v1alpha1", kind: "Task", name: "parent", uid: parent.metadata.uid! };
    await store.resources.create({ ...task("child", { role: "child" }), metadata: { name: "child", namespace: "default", labels: { role: "child" }, ownerReferences: [owner] } });
    await store.resources.delete("Task", "default", "parent");
    expect(await names("role")).toEqual([]);
  });

  it("counts the objects of a namespace in a phase", async () => {
    for (const [name, phase] of [["a", "Running"], ["b", "Running"], ["c", "Pending"]] as const) {
      const current = (await store.resources.get("Task", "default", name))!;
      await store.resources.updateStatus({ ...current, status: { phase } });
    }
    const e = (await store.resources.get("Task", "other", "e"))!;
    await store.resources.updateStatus({ ...e, status: { phase: "Running" } });
    expect(await store.resources.countInPhase("Task", "default", "Running")).toBe(2);
    expect(await store.resources.countInPhase("Task", "other", "Running")).toBe(1);
    expect(await store.resources.countInPhase("Agent", "default", "Running")).toBe(0);
    const b = (await store.resources.get("Task", "default", "b"))!;
    await store.resources.updateStatus({ ...b, status: { phase: "Succeeded" } });
    expect(await store.resources.countInPhase("Task", "default", "Running")).toBe(1);
  });
});

describe("the label index migration", () => {
  it("indexes the labels of objects already stored in a database from before it", async () => {
    const dir = mkdtempSync(join(tmpdir(), "orka-migrate-"));
    try {
      const path = join(dir, "orka.db");
      const { db: old } = databaseBefore(path, "CREATE TABLE resource_labels");
      const insert = old.prepare("INSERT INTO resources (kind, namespace, name, uid, resource_version, body) VALUES (?, ?, ?, ?, ?, ?)");
      for (const [name, labels] of [["kept", { team: "x" }], ["other", { team: "y" }], ["bare", undefined]] as const) {
        const object = { ...task(name, {}), metadata: { name, namespace: "default", labels, uid: `uid-${name}`, resourceVersion: "1" }, status: { phase: "Running" } };
        insert.run("Task", "default", name, `uid-${name}`, 1, JSON.stringify(object));
      }
      old.close();

      const db = openDatabase(path);
      try {
        expect(db.pragma("user_version", { simple: true })).toBe(migrations.length);
        const store = new SqliteResourceStore(db, SecretCipher.fromKeyFile(join(dir, "secret.key")));
        expect((await store.list("Task", { labelSelector: "team=x" })).items.map((t) => t.metadata.name)).toEqual(["kept"]);
        expect((await store.list("Task", { labelSelector: "!team" })).items.map((t) => t.metadata.name)).toEqual(["bare"]);
        expect(await store.countInPhase("Task", "default", "Running")).toBe(3);
      } finally {
        db.close();
      }
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
