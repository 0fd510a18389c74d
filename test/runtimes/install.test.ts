// Installs the small `semver` package (about 100 KiB, it has a bin) from the npm registry into a temporary cache.
import { execFile } from "node:child_process";
import { mkdtemp, readdir, rm, writeFile, mkdir } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { promisify } from "node:util";
import { afterEach, describe, expect, it } from "vitest";
import type { PinnedCli } from "../../src/runtimes/adapter.ts";
import { ensureCli } from "../../src/runtimes/install.ts";

const run = promisify(execFile);
const SEMVER: PinnedCli = { packageName: "semver", version: "7.6.3", bin: "semver" };

const dirs: string[] = [];
afterEach(async () => {
  for (const dir of dirs.splice(0)) await rm(dir, { recursive: true, force: true });
});

async function cacheDir(): Promise<string> {
  const dir = await mkdtemp(join(tmpdir(), "orka-cli-cache-"));
  dirs.push(dir);
  return dir;
}

describe("ensureCli", () => {
  it("installs once for two concurrent callers, atomically, and answers the executable", async () => {
    const cache = await cacheDir();
    const [first, second] = await Promise.all([ensureCli(SEMVER, cache), ensureCli(SEMVER, cache)]);
    expect(first).toBe(join(cache, "semver@7.6.3", "node_modules", ".bin", "semver"));
    expect(second).toBe(first);
    // No staging folder or lock file is left behind.
    expect(await readdir(cache)).toEqual(["semver@7.6.3"]);
    expect((await run(first, ["1.2.3"])).stdout.trim()).toBe("1.2.3");
    // Installed already: answered without npm.
    const started = Date.now();
    expect(await ensureCli(SEMVER, cache)).toBe(first);
    expect(Date.now() - started).toBeLessThan(1_000);
  }, 120_000);

  it("stops an install its session no longer wants, leaving nothing behind", async () => {
    const cache = await cacheDir();
    const stop = new AbortController();
    const installing = ensureCli(SEMVER, cache, stop.signal);
    setTimeout(() => stop.abort(new Error("attempt was stopped")), 50);
    await expect(installing).rejects.toThrow("attempt was stopped");
    expect(await readdir(cache)).toEqual([]);
  }, 60_000);

  it("takes over a lock its holder left behind when it died, and removes what it staged", async () => {
    const cache = await cacheDir();
    await mkdir(cache, { recursive: true });
    // A pid that is not running: the highest a Linux system hands out, plus one.
    await writeFile(join(cache, "semver@7.6.3.lock"), "4194305");
    await mkdir(join(cache, "semver@7.6.3.tmp-abandoned", "node_modules"), { recursive: true });
    expect(await ensureCli(SEMVER, cache)).toBe(join(cache, "semver@7.6.3", "node_modules", ".bin", "semver"));
    // The dead install's staging folder is gone too.
    expect(await readdir(cache)).toEqual(["semver@7.6.3"]);
  }, 120_000);

  it("says in one line why an install failed, and leaves nothing behind", async () => {
    const cache = await cacheDir();
    const missing: PinnedCli = { packageName: "semver", version: "0.0.0-does-not-exist", bin: "semver" };
    const failure = await ensureCli(missing, cache).then(
      () => undefined,
      (err: Error) => err,
    );
    expect(failure?.message).toMatch(/^installing semver@0\.0\.0-does-not-exist with npm failed: .*(notarget|No matching version|ETARGET)/i);
    expect(failure?.message).not.toContain("\n");
    expect(await readdir(cache)).toEqual([]);
  }, 120_000);

  it("refuses a package that installs no executable of the pinned name", async () => {
    const cache = await cacheDir();
    await expect(ensureCli({ ...SEMVER, bin: "not-semver" }, cache)).rejects.toThrow("with npm failed: the package installs no executable named not-semver");
    expect(await readdir(cache)).toEqual([]);
  }, 120_000);
});
