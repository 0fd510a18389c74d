import { mkdtempSync, readdirSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { attemptEnv } from "../../src/runner/attempt-config.ts";
import { LocalWorkerPool } from "../../src/runner/local/pool.ts";
import { findBwrap } from "../../src/sandbox/bwrap.ts";
import { DEFAULT_GIT_SETTINGS } from "../../src/workspace/git.ts";
import { scriptedAiAttempt } from "../helpers/attempt-config.ts";

/** The pids of processes whose command line holds `mark`. */
function processesMarked(mark: string): number[] {
  return readdirSync("/proc").flatMap((entry) => {
    if (!/^\d+$/.test(entry)) return [];
    try {
      return readFileSync(`/proc/${entry}/cmdline`, "utf8").includes(mark) ? [Number(entry)] : [];
    } catch {
      return []; // gone meanwhile
    }
  });
}

const until = async (condition: () => boolean, ms: number, stepMs: number) => {
  for (const end = Date.now() + ms; Date.now() < end; await new Promise((r) => setTimeout(r, stepMs))) if (condition()) return true;
  return condition();
};

// A pool closed while a sandbox is still being set up: bubblewrap's inner process waits for its outer
// one, and does not yet die with it, so killing only the worker process left that process behind.
describe.skipIf(!findBwrap())("closing the worker pool", () => {
  let dir: string | undefined;
  const marks: string[] = [];
  afterEach(() => {
    // What a failing round left behind: its init ends the rest of its sandbox.
    for (const pid of marks.flatMap(processesMarked)) {
      try {
        process.kill(pid, "SIGKILL");
      } catch {
        // ended meanwhile
      }
    }
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  it("ends every process of the sandboxes its attempts run, even one closed mid-setup", async () => {
    // Each round closes at a different point of the setup; without the care closing takes, most rounds left a process.
    for (let round = 0; round < 5; round++) {
      dir = mkdtempSync(join(tmpdir(), "orka-pool-close-"));
      const mark = `${process.pid}${round}.25`;
      marks.push(mark);
      const pool = new LocalWorkerPool({ size: 1, attemptsDir: dir, git: DEFAULT_GIT_SETTINGS });
      pool.serveControlPlane(async () => ({ status: 204, text: "" }));
      const config = scriptedAiAttempt({ controllerURL: "http://127.0.0.1:9", dirs: await pool.prepare("a-1"), answer: "", tools: [] });
      config.task.type = "container";
      config.container = { command: ["sleep", mark], env: {}, network: false };
      pool.start("a-1", attemptEnv(config));
      // Closed as soon as bubblewrap appears, while it sets the sandbox up.
      expect(await until(() => processesMarked(mark).length > 0, 10_000, 1)).toBe(true);
      await pool.close();
      expect(await until(() => processesMarked(mark).length === 0, 3_000, 50)).toBe(true);
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
