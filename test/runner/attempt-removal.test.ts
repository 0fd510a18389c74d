import { existsSync, mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { attemptEnv } from "../../src/runner/attempt-config.ts";
import type { AttemptExit } from "../../src/runner/runner.ts";
import { scriptedAiAttempt } from "../helpers/attempt-config.ts";
import { childProcessesOf } from "../helpers/orka-server.ts";
import { poolPerTest } from "../helpers/pool.ts";

const newPool = poolPerTest("removal");

describe("removing a finished attempt's directories", () => {
  /** A pool of one worker process that has run an attempt (so it is ready), and a second attempt's directories with files in them. */
  async function poolWithFinishedAttempt(removalWaitMs?: number) {
    const { pool, dir } = newPool({ removalWaitMs });
    pool.serveControlPlane(async () => ({ status: 204, text: "" }));
    const exited = new Promise<AttemptExit>((resolve) => pool.onExit(resolve));
    pool.start("a-1", attemptEnv(scriptedAiAttempt({ controllerURL: "http://127.0.0.1:9", dirs: await pool.prepare("a-1"), answer: "done", tools: [] })));
    expect(await exited).toMatchObject({ attemptId: "a-1", exitCode: 0 });
    const dirs = await pool.prepare("a-2");
    mkdirSync(join(dirs.workspaceDir, "src", "deep"), { recursive: true });
    mkdirSync(dirs.artifactsDir, { recursive: true });
    writeFileSync(join(dirs.workspaceDir, "src", "deep", "file.txt"), "x");
    writeFileSync(join(dirs.artifactsDir, "report.txt"), "y");
    return { pool, dir, root: join(dir, "a-2"), worker: childProcessesOf(process.pid, "worker-process.ts")[0] };
  }

  it("removes the whole tree in the pool's worker process, not on the caller's thread", async () => {
    const { pool, root, worker } = await poolWithFinishedAttempt();
    // While the worker process is stopped nothing removes the tree; once it runs again, it does.
    process.kill(worker, "SIGSTOP");
    const removed = pool.cleanup("a-2");
    await new Promise((resolve) => setTimeout(resolve, 200));
    expect(existsSync(root)).toBe(true);
    process.kill(worker, "SIGCONT");
    await removed;
    expect(existsSync(root)).toBe(false);
  });

  it("is done at once for an attempt that made no directories, without asking a worker process", async () => {
    const { pool, dir, worker } = await poolWithFinishedAttempt();
    expect(existsSync(join(dir, "a-1"))).toBe(false); // its loop ran no built-in tool
    // A stopped worker process would hold a removal it was asked for until the pool's 10 s wait ran out.
    process.kill(worker, "SIGSTOP");
    try {
      const started = performance.now();
      await pool.cleanup("a-1");
      expect(performance.now() - started).toBeLessThan(1_000);
    } finally {
      process.kill(worker, "SIGCONT");
    }
  });

  it("still removes it when the worker process is gone before doing it", async () => {
    const { pool, root, worker } = await poolWithFinishedAttempt();
    // Stopped, it cannot take the request; killed, it never answers: the pool removes the tree itself.
    process.kill(worker, "SIGSTOP");
    const removed = pool.cleanup("a-2");
    process.kill(worker, "SIGKILL");
    await removed;
    expect(existsSync(root)).toBe(false);
  });

  it("removes it itself when the worker process does not in time (stuck, but alive)", async () => {
    const { pool, root, worker } = await poolWithFinishedAttempt(300);
    process.kill(worker, "SIGSTOP");
    try {
      await pool.cleanup("a-2");
      expect(existsSync(root)).toBe(false);
    } finally {
      process.kill(worker, "SIGCONT");
    }
  });
});

describe("removing a running attempt's directories", () => {
  it("kills it and waits for it to end, since it could still write into them", async () => {
    const { pool, dir } = newPool();
    // The attempt's first call to the control plane is held: stopped, the attempt waits for its answer (up to 5 s).
    let called!: () => void;
    const firstCall = new Promise<void>((resolve) => (called = resolve));
    const killed = Promise.withResolvers<{ status: number; text: string }>();
    pool.serveControlPlane(() => {
      called();
      return killed.promise;
    });
    const exited = new Promise<AttemptExit>((resolve) => pool.onExit(resolve));
    const dirs = await pool.prepare("a-1");
    pool.start("a-1", attemptEnv(scriptedAiAttempt({ controllerURL: "http://127.0.0.1:9", dirs, answer: "done", tools: [] })));
    await firstCall;
    mkdirSync(dirs.workspaceDir, { recursive: true });
    writeFileSync(join(dirs.workspaceDir, "note.txt"), "x");

    let removed = false;
    const removing = pool.cleanup("a-1").then(() => (removed = true));
    await new Promise((resolve) => setTimeout(resolve, 500));
    expect([removed, existsSync(join(dir, "a-1"))]).toEqual([false, true]);
    killed.resolve({ status: 503, text: JSON.stringify({ error: { code: 503, message: "the attempt was stopped" } }) });
    expect(await exited).toMatchObject({ attemptId: "a-1", reason: "attempt was stopped" });
    await removing;
    expect(existsSync(join(dir, "a-1"))).toBe(false);
  }, 30_000);
});
