import { afterEach, beforeEach, describe, expect, it } from "vitest";
import type { Resource } from "../../src/resources/meta.ts";
import { inTransaction } from "../../src/store/sqlite/db.ts";
import { tempStore } from "../helpers/store.ts";

const tool = (description: string): Resource => ({
  apiVersion: "core.orka.ai/v1alpha1",
  kind: "Tool",
  metadata: { name: "t", namespace: "default", labels: { team: "x" } },
  spec: { description, http: { url: "http://example.test" } },
});

describe("reading a resource again", () => {
  let store: ReturnType<typeof tempStore>;
  beforeEach(() => (store = tempStore()));
  afterEach(() => store.close());

  const read = () => store.resources.get<{ description: string }, unknown>("Tool", "default", "t");

  it("sees every write of it, its spec, status and deletion", async () => {
    const created = await store.resources.create(tool("one"));
    expect((await read())!.spec.description).toBe("one");
    await store.resources.update({ ...created, spec: { description: "two" } });
    expect((await read())!.spec.description).toBe("two");
    const current = (await read())!;
    await store.resources.updateStatus({ ...current, status: { ready: true } });
    expect((await read())!.status).toEqual({ ready: true });
    await store.resources.delete("Tool", "default", "t");
    expect(await read()).toBeUndefined();
    await store.resources.create(tool("three"));
    expect((await read())!.spec.description).toBe("three");
  });

  it("does not keep a write that was rolled back, nor anything read inside the transaction", async () => {
    const created = await store.resources.create(tool("one"));
    expect((await read())!.spec.description).toBe("one");
    let readInside: string | undefined;
    expect(() =>
      inTransaction(store.db, () => {
        void store.resources.update({ ...created, spec: { description: "rolled back" } });
        void read().then((inside) => (readInside = inside?.spec.description));
        throw new Error("undo");
      }),
    ).toThrow("undo");
    await Promise.resolve();
    expect(readInside).toBe("rolled back");
    expect((await read())!.spec.description).toBe("one");
  });

  it("writes over a kept object as over its row: a stale version is refused, and nothing of the object is lost", async () => {
    const created = await store.resources.create(tool("one"));
    const kept = (await read())!;
    const written = await store.resources.updateStatus({ ...kept, status: { ready: true } });
    await expect(store.resources.updateStatus({ ...kept, status: { ready: false } })).rejects.toThrow(/modified concurrently/);
    await expect(store.resources.update({ ...created, spec: { description: "stale" } })).rejects.toThrow(/modified concurrently/);
    const stored = (await read())!;
    await store.resources.update({ ...stored, spec: { description: "two" } });
    const row = store.db.prepare("SELECT body FROM resources WHERE kind = 'Tool' AND name = 't'").pluck().get() as string;
    expect(JSON.parse(row)).toMatchObject({ spec: { description: "two" }, status: { ready: true }, metadata: { labels: { team: "x" }, uid: written.metadata.uid } });
  });

  it("deletes a kept object once the finalizer that held its deletion is removed", async () => {
    await store.resources.create({ ...tool("one"), metadata: { ...tool("one").metadata, finalizers: ["orka.ai/cleanup"] } });
    await read();
    await store.resources.delete("Tool", "default", "t");
    const marked = (await read())!;
    expect(marked.metadata.deletionTimestamp).toBeDefined();
    await store.resources.update({ ...marked, metadata: { ...marked.metadata, finalizers: [] } });
    expect(await read()).toBeUndefined();
  });

  it("hands out an object no reader can change for the next one", async () => {
    await store.resources.create(tool("one"));
    const first = (await read())!;
    expect(() => Object.assign(first.spec, { description: "changed" })).toThrow(TypeError);
    expect(() => Object.assign(first.metadata.labels!, { team: "y" })).toThrow(TypeError);
    expect((await read())!).toMatchObject({ spec: { description: "one" }, metadata: { labels: { team: "x" } } });
  });

  it("does not keep an object too large for its share of memory: it is read anew each time", async () => {
    await store.resources.create(tool("x".repeat(5 * 1024 * 1024)));
    const first = (await read())!;
    Object.assign(first.spec, { description: "changed by a caller" });
    expect((await read())!.spec.description).toHaveLength(5 * 1024 * 1024);
  });

  it("decrypts a Secret at each read and does not share it", async () => {
    await store.resources.create({ apiVersion: "v1", kind: "Secret", metadata: { name: "s", namespace: "default" }, spec: { type: "Opaque", data: { key: "value" } } });
    const first = (await store.resources.get<{ data: Record<string, string> }, unknown>("Secret", "default", "s"))!;
    first.spec.data.key = "changed by a caller";
    const second = (await store.resources.get<{ data: Record<string, string> }, unknown>("Secret", "default", "s"))!;
    expect(second.spec.data.key).toBe("value");
  });

  describe("a namespace's listing", () => {
    const names = async () => (await store.resources.list("Tool", { namespace: "default" })).items.map((t) => `${t.metadata.name}:${(t.spec as { description: string }).description}`);
    const named = (name: string, description: string): Resource => ({ ...tool(description), metadata: { name, namespace: "default" } });

    it("sees every object created, changed and deleted in it, and none of another namespace", async () => {
      expect(await names()).toEqual([]);
      await store.resources.create(named("b", "one"));
      expect(await names()).toEqual(["b:one"]);
      const a = await store.resources.create(named("a", "one"));
      await store.resources.create({ ...named("c", "elsewhere"), metadata: { name: "c", namespace: "other" } });
      expect(await names()).toEqual(["a:one", "b:one"]);
      await store.resources.update({ ...a, spec: { description: "two" } });
      expect(await names()).toEqual(["a:two", "b:one"]);
      await store.resources.delete("Tool", "default", "b");
      expect(await names()).toEqual(["a:two"]);
    });

    it("does not keep what a rolled-back transaction wrote", async () => {
      expect(await names()).toEqual([]);
      expect(() =>
        inTransaction(store.db, () => {
          void store.resources.create(named("a", "rolled back"));
          void names();
          throw new Error("undo");
        }),
      ).toThrow("undo");
      await new Promise((settled) => setImmediate(settled));
      expect(await names()).toEqual([]);
    });

    it("hands out a list no reader can change for the next one", async () => {
      await store.resources.create(named("a", "one"));
      const first = await store.resources.list("Tool", { namespace: "default" });
      expect(() => first.items.pop()).toThrow(TypeError);
      expect(() => Object.assign(first.items[0].spec as object, { description: "changed" })).toThrow(TypeError);
      expect(await names()).toEqual(["a:one"]);
    });
  });
});
