import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it, vi } from "vitest";
import { attemptEnv } from "../../src/runner/attempt-config.ts";
import { LocalWorkerPool } from "../../src/runner/local/pool.ts";
import { findBwrap } from "../../src/sandbox/bwrap.ts";
import { DEFAULT_GIT_SETTINGS } from "../../src/workspace/git.ts";
import { scriptedAiAttempt } from "../helpers/attempt-config.ts";
import { killMarked, processesMarked } from "../helpers/processes.ts";

// A pool closed while a sandbox is still being set up: bubblewrap's inner process waits for its outer
// one, and does not yet die with it, so killing only the worker process left that process behind.
describe.skipIf(!findBwrap())("closing the worker pool", () => {
  let dir: string | undefined;
  const marks: string[] = [];
  afterEach(() => {
    killMarked(marks);
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  it("ends every process of the sandboxes its attempts run, even one closed mid-setup, and closing twice waits as long", async () => {
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
      // Closed as soon as bubblewrap appears, while it sets the sandbox up: twice, as a stop signal after Ctrl-C does.
      await vi.waitFor(() => expect(processesMarked(mark)).not.toEqual([]), { timeout: 10_000, interval: 1 });
      await Promise.all([pool.close(), pool.close()]);
      await vi.waitFor(() => expect(processesMarked(mark)).toEqual([]), { timeout: 3_000, interval: 50 });
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
