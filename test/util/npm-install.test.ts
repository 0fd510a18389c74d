// Installs two small packages (`semver`, about 100 KiB, and `ms`, a few KiB) from the npm registry into a temporary folder.
import { mkdtemp, readdir, readFile, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { ensureNpmPackages, type PinnedPackages } from "../../src/util/npm-install.ts";

const TWO: PinnedPackages = { what: "two packages", specs: ["semver@7.6.3", "ms@2.1.3"], expects: { path: "node_modules/ms/package.json", missing: "ms is not installed" } };

const dirs: string[] = [];
afterEach(async () => {
  for (const dir of dirs.splice(0)) await rm(dir, { recursive: true, force: true });
});

async function cacheDir(): Promise<string> {
  const dir = await mkdtemp(join(tmpdir(), "orka-npm-cache-"));
  dirs.push(dir);
  return dir;
}

const installedVersion = async (target: string, name: string) => JSON.parse(await readFile(join(target, "node_modules", name, "package.json"), "utf8")).version;

describe("ensureNpmPackages", () => {
  it("installs several pinned packages together into one folder, once", async () => {
    const cache = await cacheDir();
    const target = join(cache, "two");
    await Promise.all([ensureNpmPackages(TWO, target), ensureNpmPackages(TWO, target)]);
    expect(await installedVersion(target, "semver")).toBe("7.6.3");
    expect(await installedVersion(target, "ms")).toBe("2.1.3");
    expect(await readdir(cache)).toEqual(["two"]);
    // Installed already: answered without npm.
    const started = Date.now();
    await ensureNpmPackages(TWO, target);
    expect(Date.now() - started).toBeLessThan(1_000);
  }, 120_000);

  it("refuses an install that lacks the expected path, with the reason given, and leaves nothing behind", async () => {
    const cache = await cacheDir();
    const lacking = { ...TWO, expects: { path: "node_modules/not-there/package.json", missing: "not-there is not installed" } };
    await expect(ensureNpmPackages(lacking, join(cache, "two"))).rejects.toThrow("installing two packages with npm failed: not-there is not installed");
    expect(await readdir(cache)).toEqual([]);
  }, 120_000);
});
