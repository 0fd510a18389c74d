import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach } from "vitest";
import { LocalWorkerPool } from "../../src/runner/local/pool.ts";
import { DEFAULT_GIT_SETTINGS } from "../../src/workspace/git.ts";

type PoolOptions = Omit<ConstructorParameters<typeof LocalWorkerPool>[0], "size" | "attemptsDir" | "git">;

/**
 * Call in a `describe`: answers a function that makes the test's pool of one worker process, its attempts'
 * directories in a temporary directory (`dir`). After each test the pool is closed, which stops its
 * worker processes, and the directory removed.
 */
export function poolPerTest(name: string): (options?: PoolOptions) => { pool: LocalWorkerPool; dir: string } {
  let made: { pool: LocalWorkerPool; dir: string } | undefined;
  afterEach(async () => {
    const last = made;
    made = undefined;
    await last?.pool.close();
    if (last) rmSync(last.dir, { recursive: true, force: true });
  });
  return (options = {}) => {
    const dir = mkdtempSync(join(tmpdir(), `orka-${name}-`));
    made = { pool: new LocalWorkerPool({ size: 1, attemptsDir: dir, git: DEFAULT_GIT_SETTINGS, ...options }), dir };
    return made;
  };
}
