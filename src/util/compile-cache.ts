import { lstatSync, mkdirSync } from "node:fs";
import { enableCompileCache, flushCompileCache } from "node:module";
import { homedir } from "node:os";
import { isAbsolute, join } from "node:path";

/**
 * Loads a process's entry module with Node's compile cache on. Each start of the server, the CLI or a
 * worker compiles a few hundred modules and strips their types; the cache keeps that work on disk, so that
 * later starts load faster (docs/performance.md). It must be on before those modules load, hence an entry
 * module that imports them only then. NODE_COMPILE_CACHE names another directory (Node turns the cache on
 * there itself) and NODE_DISABLE_COMPILE_CACHE turns it off; without a directory only this user may write,
 * it stays off and the modules load as they would without it.
 */
export async function loadWithCompileCache(entry: URL): Promise<void> {
  const cacheNamed = process.env.NODE_COMPILE_CACHE !== undefined || process.env.NODE_DISABLE_COMPILE_CACHE !== undefined;
  const directory = cacheNamed ? undefined : ownCacheDirectory();
  if (directory) enableCompileCache(directory);
  await import(entry.href);
  // Node writes the cache only when a process exits normally, and the pool stops an idle worker with SIGKILL.
  flushCompileCache();
}

/**
 * `orka/node-compile-cache` in the user's cache directory (XDG's), not in the machine's temporary one, where
 * every user may write: what Node finds in the cache, it runs. Undefined when that directory, or the one
 * it is in, could be written by another user (or there is no home to keep it in).
 */
function ownCacheDirectory(): string | undefined {
  const base = userCacheBase();
  if (!base) return undefined;
  const orka = join(base, "orka");
  try {
    mkdirSync(orka, { recursive: true, mode: 0o700 });
    if (![base, orka].every(onlyWritableByUs)) return undefined;
  } catch {
    return undefined;
  }
  return join(orka, "node-compile-cache");
}

function userCacheBase(): string | undefined {
  const xdg = process.env.XDG_CACHE_HOME;
  if (xdg && isAbsolute(xdg)) return xdg;
  try {
    const home = homedir();
    return isAbsolute(home) ? join(home, ".cache") : undefined;
  } catch {
    // No HOME and no account entry for this user (an arbitrary uid in a container).
    return undefined;
  }
}

/** A real directory, this user's or root's, that neither its group nor others may write. */
function onlyWritableByUs(path: string): boolean {
  const stats = lstatSync(path);
  return stats.isDirectory() && (stats.uid === process.getuid?.() || stats.uid === 0) && (stats.mode & 0o022) === 0;
}
