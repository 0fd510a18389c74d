import { afterEach, describe, expect, it } from "vitest";
import { API_VERSION, ANNOTATION } from "../../src/resources/meta.ts";
import { readAttemptEnv, type AttemptConfig } from "../../src/runner/attempt-config.ts";
import { SqliteMemoryStore } from "../../src/store/sqlite/memory-store.ts";
import { controllerOver, standInRunner } from "../helpers/controller.ts";
import { tempStore } from "../helpers/store.ts";

/** A runner that starts nothing: it keeps the configuration each attempt was started with. */
function recordingRunner(dir: string) {
  const started = new Map<string, AttemptConfig>();
  const runner = standInRunner(dir, { start: (id, env) => void started.set(id, readAttemptEnv(env)), isRunning: (id) => started.has(id) });
  return { runner, started };
}

const resource = (kind: string, name: string, spec: object, annotations?: Record<string, string>) => ({ apiVersion: API_VERSION, kind, metadata: { name, namespace: "default", annotations }, spec });

// The controller reads the memory context into an ai attempt's config; a real controller over real SQLite stores.
describe("an ai attempt's memory context", () => {
  let cleanup: (() => Promise<void>) | undefined;
  afterEach(async () => {
    await cleanup?.();
    cleanup = undefined;
  });

  async function startController() {
    const store = tempStore();
    const memory = new SqliteMemoryStore(store.db);
    const recorded = recordingRunner(store.dir);
    const controller = controllerOver(store, recorded.runner, 4);
    cleanup = async () => {
      await controller.stop();
      store.close();
    };
    await store.resources.create(resource("Provider", "offline", { type: "scripted", scripted: { turns: [{ text: "done" }] } }));
    await store.resources.create(resource("Agent", "recaller", { providerRef: { name: "offline" }, tools: [{ name: "recall_memory" }] }));
    await controller.start();
    /** Creates an ai Task and waits for its attempt's configuration. */
    const configOf = async (name: string, annotations?: Record<string, string>): Promise<AttemptConfig> => {
      await store.resources.create(resource("Task", name, { type: "ai", agentRef: { name: "recaller" }, prompt: "go" }, annotations));
      for (let i = 0; i < 500; i++) {
        const config = [...recorded.started.values()].find((c) => c.task.name === name);
        if (config) return config;
        await new Promise((r) => setTimeout(r, 10));
      }
      throw new Error(`no attempt of ${name} started; status: ${JSON.stringify((await store.resources.get("Task", "default", name))?.status)}`);
    };
    return { store, memory, configOf };
  }

  it("carries the namespace's newest reviewed memories, never disabled, deleted or another namespace's", async () => {
    const { memory, configOf } = await startController();
    for (let i = 0; i < 7; i++) memory.createMemory("default", { content: `fact ${i}`, source: "api", tags: ["ops"] });
    memory.setMemoryDisabled("default", memory.createMemory("default", { content: "disabled fact", source: "api" }).id, true);
    memory.updateMemory("default", memory.createMemory("default", { content: "deleted fact", source: "api" }).id, { deleted: true });
    memory.createMemory("team-a", { content: "team a fact", source: "api" });
    const config = await configOf("fresh");
    expect(config.journal.resume).toBe(false);
    expect(config.ai!.memories.map((m) => m.content)).toEqual(["fact 6", "fact 5", "fact 4", "fact 3", "fact 2"]);
    expect(config.ai!.memories[0]).toEqual({ content: "fact 6", source: "api", tags: ["ops"], createdAt: expect.any(String) });
  });

  it("gives a resumed attempt them too: with nothing journalled yet it starts afresh with them", async () => {
    const { memory, configOf } = await startController();
    memory.createMemory("default", { content: "a fact", source: "api" });
    // A fork's first attempt continues the copied run (here an empty one, so it starts afresh).
    const config = await configOf("forked", { [ANNOTATION.forkedFrom]: "source/00000000-0000-0000-0000-000000000000/1/0" });
    expect(config.journal.resume).toBe(true);
    expect(config.ai!.memories.map((m) => m.content)).toEqual(["a fact"]);
  });

  it("starts the attempt without memories and a warning event on the Task when the memory read fails", async () => {
    const { store, memory, configOf } = await startController();
    memory.createMemory("default", { content: "a fact", source: "api" });
    // A real failure of the real store: its table is gone while the controller runs.
    store.db.exec("ALTER TABLE memories RENAME TO memories_elsewhere");
    const config = await configOf("unlucky");
    expect(config.ai!.memories).toEqual([]);
    const warnings = store.data.listEvents("default", "unlucky", { type: "MemoryUnavailable" });
    expect(warnings.map((e) => [e.severity, e.summary])).toEqual([["warning", expect.stringMatching(/^durable memory not loaded: .*no such table: memories/)]]);
    expect((await store.resources.get("Task", "default", "unlucky"))?.status).toMatchObject({ phase: "Running" });
  });
});
