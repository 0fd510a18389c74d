import { join } from "node:path";
import { Controller } from "../../src/controller/controller.ts";
import { githubSettings } from "../../src/github/settings.ts";
import type { WorkloadRunner } from "../../src/runner/runner.ts";
import { openGate } from "../../src/store/output-gate.ts";
import { SqliteApprovalStore } from "../../src/store/sqlite/approval-store.ts";
import { SqliteCoordinationStore } from "../../src/store/sqlite/coordination-store.ts";
import { SqliteJournalStore } from "../../src/store/sqlite/journal-store.ts";
import { SqliteMemoryStore } from "../../src/store/sqlite/memory-store.ts";
import { createLogger } from "../../src/util/logger.ts";
import { DEFAULT_GIT_SETTINGS } from "../../src/workspace/git.ts";
import type { tempStore } from "./store.ts";

/** A runner that runs nothing: its directories are names under `dir`; what starts, stops and ends attempts is the test's. */
export function standInRunner(dir: string, attempts: Pick<WorkloadRunner, "start" | "isRunning"> & Partial<Pick<WorkloadRunner, "kill" | "onExit">>): WorkloadRunner {
  const runner: WorkloadRunner = {
    prepare: async (id) => ({ workspaceDir: join(dir, id, "workspace"), artifactsDir: join(dir, id, "artifacts"), tmpDir: join(dir, id, "tmp") }),
    adopt: async (_lost, id) => runner.prepare(id),
    checkOutForAttempt: async (id) => join(dir, id, "checkout"),
    workspaceOf: (id) => ({ workTree: join(dir, id, "workspace"), gitDir: join(dir, id, "git") }),
    kill: () => undefined,
    cleanup: async () => undefined,
    onLog: () => undefined,
    onExit: () => undefined,
    close: async () => undefined,
    ...attempts,
  };
  return runner;
}

/** A real Controller over a temporary store's real SQLite stores, with `runner` and `slots` worker slots. */
export function controllerOver(store: ReturnType<typeof tempStore>, runner: WorkloadRunner, slots: number): Controller {
  return new Controller({
    store: store.resources,
    data: store.data,
    memory: new SqliteMemoryStore(store.db),
    coordination: new SqliteCoordinationStore(store.db),
    approvals: new SqliteApprovalStore(store.db),
    journal: new SqliteJournalStore(store.db),
    // The store commits each transaction as it ends, so nothing waits.
    gate: openGate,
    runner,
    logger: createLogger("silent"),
    controllerURL: "http://orka.test",
    slots,
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
}
