import { fork, spawn } from "node:child_process";
import { once } from "node:events";
import { chmodSync, existsSync, mkdirSync, mkdtempSync, readdirSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { afterEach, describe, expect, it } from "vitest";

const ROOT = resolve(import.meta.dirname, "../..");

/**
 * This process's environment with `variables` in place of the cache's own (a variable set to undefined is
 * left out). NODE_COMPILE_CACHE is left out unless given: it would turn the cache on by itself, whatever the
 * entry does.
 */
function environment(variables: Record<string, string | undefined>): NodeJS.ProcessEnv {
  const { NODE_DISABLE_COMPILE_CACHE: _off, NODE_COMPILE_CACHE: _elsewhere, XDG_CACHE_HOME: _xdg, ...env } = process.env;
  return Object.fromEntries(Object.entries({ ...env, ...variables }).filter(([, value]) => value !== undefined));
}

/** The files Node wrote in Orka's compile cache under `base` (one per module it compiled, in a folder per Node version). */
function cachedFiles(base: string) {
  const cache = join(base, "orka", "node-compile-cache");
  return existsSync(cache) ? readdirSync(cache, { recursive: true, withFileTypes: true }).filter((entry) => entry.isFile()) : [];
}

describe("the compile cache", () => {
  const directories: string[] = [];
  const temporaryDirectory = () => {
    const directory = mkdtempSync(join(tmpdir(), "orka-compile-cache-"));
    directories.push(directory);
    return directory;
  };
  afterEach(() => {
    for (const directory of directories.splice(0)) rmSync(directory, { recursive: true, force: true });
  });

  async function runCli(env: NodeJS.ProcessEnv, cwd = ROOT): Promise<number | null> {
    const cli = spawn(process.execPath, [join(ROOT, "src/cli/main.ts"), "--help"], { cwd, env, stdio: "ignore" });
    const [code] = await once(cli, "exit");
    return code;
  }

  it("keeps the orka command's compiled modules in the user's cache directory, so its next start loads them from disk", async () => {
    const cache = temporaryDirectory();
    expect(await runCli(environment({ XDG_CACHE_HOME: cache }))).toBe(0);
    // The CLI's own modules and its dependencies' (commander, zod, yaml): well over a hundred.
    expect(cachedFiles(cache).length).toBeGreaterThan(100);
  });

  it("keeps them in ~/.cache when XDG_CACHE_HOME is not an absolute path", async () => {
    const home = temporaryDirectory();
    expect(await runCli(environment({ HOME: home, XDG_CACHE_HOME: "relative/cache" }), home)).toBe(0);
    expect(cachedFiles(join(home, ".cache")).length).toBeGreaterThan(100);
  });

  it("is left off with NODE_DISABLE_COMPILE_CACHE", async () => {
    const cache = temporaryDirectory();
    expect(await runCli(environment({ XDG_CACHE_HOME: cache, NODE_DISABLE_COMPILE_CACHE: "1" }))).toBe(0);
    expect(readdirSync(cache)).toEqual([]);
  });

  it("is left off where another user could write, and without a home, the command working all the same", async () => {
    const shared = temporaryDirectory();
    mkdirSync(join(shared, "orka"));
    chmodSync(join(shared, "orka"), 0o777);
    expect(await runCli(environment({ XDG_CACHE_HOME: shared }))).toBe(0);
    expect(cachedFiles(shared)).toEqual([]);
    // An empty HOME would put the cache in the working directory, which may be anyone's.
    const workingDirectory = temporaryDirectory();
    expect(await runCli(environment({ HOME: "" }), workingDirectory)).toBe(0);
    expect(readdirSync(workingDirectory)).toEqual([]);
  });

  it("keeps a pooled worker process's compiled modules once it is ready, though the pool stops it with SIGKILL", async () => {
    const cache = temporaryDirectory();
    const worker = fork(join(ROOT, "src/runner/local/worker-process.ts"), [], { env: environment({ XDG_CACHE_HOME: cache }), stdio: ["ignore", "ignore", "inherit", "ipc"], serialization: "advanced" });
    const exited = once(worker, "exit");
    try {
      // It says it is ready once its modules have loaded.
      const [batch] = await once(worker, "message");
      expect(batch).toEqual([{ type: "ready" }]);
    } finally {
      worker.kill("SIGKILL");
      await exited;
    }
    expect(cachedFiles(cache).length).toBeGreaterThan(100);
  });
});
