import { join } from "node:path";
import type { PinnedCli } from "./adapter.ts";
import { ensureNpmPackages } from "../util/npm-install.ts";

/**
 * The absolute path of the pinned CLI's executable, installed from the npm registry into
 * `<cacheDir>/<packageName>@<version>/` on first use (whole installs only; concurrent callers install once).
 */
export async function ensureCli(cli: PinnedCli, cacheDir: string, signal?: AbortSignal): Promise<string> {
  const target = cliInstallDir(cli, cacheDir);
  const executable = join("node_modules", ".bin", cli.bin);
  const pinned = `${cli.packageName}@${cli.version}`;
  await ensureNpmPackages(
    { what: pinned, specs: [pinned], expects: { path: executable, missing: `the package installs no executable named ${cli.bin}` }, withoutNpm: "set the runtime's command" },
    target,
    signal,
  );
  return join(target, executable);
}

/** Where the pinned CLI is installed in the cache: the whole tree its executable runs from. */
export function cliInstallDir(cli: PinnedCli, cacheDir: string): string {
  return join(cacheDir, `${cli.packageName}@${cli.version}`);
}
