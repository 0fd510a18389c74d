import { afterEach, describe, expect, it } from "vitest";
import { join } from "node:path";
import { Controller } from "../../src/controller/controller.ts";
import { API_VERSION } from "../../src/resources/meta.ts";
import type { AttemptExit, WorkloadRunner } from "../../src/runner/runner.ts";
import { SqliteApprovalStore } from "../../src/store/sqlite/approval-store.ts";
import { SqliteCoordinationStore } from "../../src/store/sqlite/coordination-store.ts";
import { SqliteJournalStore } from "../../src/store/sqlite/journal-store.ts";
import { SqliteMemoryStore } from "../../src/store/sqlite/memory-store.ts";
import { createLogger } from "../../src/util/logger.ts";
import { tempStore } from "../helpers/store.ts";
import { DEFAULT_GIT_SETTINGS } from "../../src/workspace/git.ts";
import { githubSettings } from "../../src/github/settings.ts";

/** A runner whose attempts run until the test ends them; it remembers how many ran at once. */
function holdingRunner(dir: string) {
  const running = new Set<string>();
  const exits: ((exit: AttemptExit) => void)[] = [];
  let mostAtOnce = 0;
  const runner: WorkloadRunner = {
    prepare: async (id) => ({ workspaceDir: join(dir, id, "workspace"), artifactsDir: join(dir, id, "artifacts"), tmpDir: join(dir, id, "tmp") }),
    adopt: async (_lost, id) => runner.prepare(id),
    checkOutForAttempt: async (id) => join(dir, id, "checkout"),
    workspaceOf: (id) => ({ workTree: join(dir, id, "workspace"), gitDir: join(dir, id, "git") }),
    start: (id) => {
      running.add(id);
      mostAtOnce = Math.max(mostAtOnce, running.size);
    },
    kill: (id, reason) => {
      if (running.delete(id)) setImmediate(() => exits.forEach((listener) => listener({ attemptId: id, exitCode: 137, reason })));
    },
    isRunning: (id) => running.has(id),
    cleanup: async () => undefined,
    onLog: () => undefined,
    onExit: (listener) => void exits.push(listener),
    close: async () => undefined,
  };
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
    const controller = new Controller({
      store: store.resources,
      data: store.data,
      memory: new SqliteMemoryStore(store.db),
      coordination: new SqliteCoordinationStore(store.db),
      approvals: new SqliteApprovalStore(store.db),
      journal: new SqliteJournalStore(store.db),
      runner: held.runner,
      logger: createLogger("silent"),
      controllerURL: "http://orka.test",
      slots: 2,
      maxActivePerNamespace: 0,
      modelCalls: { retryBaseMs: 1, timeoutMs: 1000 },
      egress: { allowLoopback: false },
      toolSettings: { fetch: { egress: { allowLoopback: false }, timeoutMs: 1000 }, search: { provider: "duckduckgo", timeoutMs: 1000 } },
      grants: {} as never,
      secrets: { remember: () => undefined, forget: () => undefined } as never,
      providers: { scriptedDir: store.dir },
      git: DEFAULT_GIT_SETTINGS,
      github: githubSettings({}),
      runtimeCommands: {},
      runtimeCacheDir: "/nonexistent/runtimes",
      runtimeReadPaths: [],
    });
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
