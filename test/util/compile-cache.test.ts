import { fork, spawn } from "node:child_process";
import { once } from "node:events";
import { existsSync, mkdtempSync, readdirSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { afterEach, describe, expect, it } from "vitest";

const ROOT = resolve(import.meta.dirname, "../..");

/**
 * This process's environment with `directory` as the user's cache directory (XDG's), plus `more`. Setting
 * NODE_COMPILE_CACHE instead would turn the cache on by itself, whatever the entry does.
 */
function cacheEnvironment(directory: string, more: Record<string, string> = {}): NodeJS.ProcessEnv {
  const { NODE_DISABLE_COMPILE_CACHE: _off, NODE_COMPILE_CACHE: _elsewhere, ...env } = process.env;
  return { ...env, XDG_CACHE_HOME: directory, ...more };
}

/** The files Node wrote in Orka's compile cache (one per module it compiled, in a folder per Node version). */
function cachedFiles(directory: string) {
  const cache = join(directory, "orka", "node-compile-cache");
  return existsSync(cache) ? readdirSync(cache, { recursive: true, withFileTypes: true }).filter((entry) => entry.isFile()) : [];
}

describe("the compile cache", () => {
  const directories: string[] = [];
  const cacheDirectory = () => {
    const directory = mkdtempSync(join(tmpdir(), "orka-compile-cache-"));
    directories.push(directory);
    return directory;
  };
  afterEach(() => {
    for (const directory of directories.splice(0)) rmSync(directory, { recursive: true, force: true });
  });

  async function runCli(env: NodeJS.ProcessEnv): Promise<number | null> {
    const cli = spawn(process.execPath, [join(ROOT, "src/cli/main.ts"), "--help"], { env, stdio: "ignore" });
    const [code] = await once(cli, "exit");
    return code;
  }

  it("keeps the orka command's compiled modules, so its next start loads them from disk", async () => {
    const directory = cacheDirectory();
    expect(await runCli(cacheEnvironment(directory))).toBe(0);
    // The CLI's own modules and its dependencies' (commander, zod, yaml): well over a hundred.
    expect(cachedFiles(directory).length).toBeGreaterThan(100);
  });

  it("is left off with NODE_DISABLE_COMPILE_CACHE=1", async () => {
    const directory = cacheDirectory();
    expect(await runCli(cacheEnvironment(directory, { NODE_DISABLE_COMPILE_CACHE: "1" }))).toBe(0);
    expect(cachedFiles(directory)).toEqual([]);
  });

  it("keeps a pooled worker process's compiled modules too", async () => {
    const directory = cacheDirectory();
    const worker = fork(join(ROOT, "src/runner/local/worker-process.ts"), [], { env: cacheEnvironment(directory), stdio: ["ignore", "ignore", "inherit", "ipc"], serialization: "advanced" });
    const exited = once(worker, "exit");
    try {
      // It says it is ready once its modules have loaded; without its runner it then ends.
      const [batch] = await once(worker, "message");
      expect(batch).toEqual([{ type: "ready" }]);
      worker.disconnect();
      expect((await exited)[0]).toBe(0);
    } finally {
      if (worker.exitCode === null && worker.signalCode === null) worker.kill("SIGKILL");
    }
    expect(cachedFiles(directory).length).toBeGreaterThan(100);
  });
});
