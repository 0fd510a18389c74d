import { enableCompileCache } from "node:module";
import { homedir } from "node:os";
import { isAbsolute, join } from "node:path";

/**
 * Loads a process's entry module with Node's compile cache on. Each start of the server, the CLI or a
 * worker compiles a few hundred modules and strips their types; the cache keeps that work on disk, so that
 * later starts load faster (docs/performance.md). It must be on before those modules load, hence an entry
 * module that imports them only then. NODE_COMPILE_CACHE names another directory (Node turns the cache on
 * there itself) and NODE_DISABLE_COMPILE_CACHE=1 turns it off; a directory Node cannot use leaves it off.
 */
export async function loadWithCompileCache(entry: URL): Promise<void> {
  enableCompileCache(userCacheDirectory());
  await import(entry.href);
}

/**
 * In the user's own cache directory (XDG's), not Node's default in the machine's temporary directory:
 * every user may write there, and what Node finds in the cache it runs.
 */
function userCacheDirectory(): string {
  const xdg = process.env.XDG_CACHE_HOME;
  return join(xdg && isAbsolute(xdg) ? xdg : join(homedir(), ".cache"), "orka", "node-compile-cache");
}
