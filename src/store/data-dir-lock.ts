import { linkSync, readFileSync, unlinkSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { OrkaError } from "../util/errors.ts";
import { isRunning } from "../util/process.ts";

/**
 * One server per data dir: two would run two controllers over the same SQLite file. The holder's
 * pid is kept in `<dataDir>/server.pid`; a pid that no longer runs (a server killed with -9) is stale.
 */
export interface DataDirLock {
  release(): void;
}

export function lockDataDir(dataDir: string): DataDirLock {
  const file = join(dataDir, "server.pid");
  // Bounded: each pass either takes the file or removes a stale one another start may take first.
  for (let attempt = 0; attempt < 3; attempt++) {
    const created = createPidFile(file);
    // A data dir this server cannot write needs no lock: it cannot change the store there, and it
    // starts to say so (not ready, writes answered 503).
    if (created === "read-only") return { release: () => {} };
    if (created) return { release: () => removeIfHeldBy(file, process.pid) };
    const holder = holderOf(file);
    // Our own pid in the file is a previous server's, killed before it could remove it: in a
    // container the server often gets the same small pid again.
    if (holder !== undefined && holder !== process.pid && isRunning(holder)) {
      throw new OrkaError(
        "conflict",
        `another Orka server (pid ${holder}) is using the data dir ${dataDir}; stop it, or give this server its own --data-dir (if pid ${holder} is no Orka server, delete ${file})`,
      );
    }
    removeIfHeldBy(file, holder);
  }
  throw new OrkaError("conflict", `could not take ${file}: other servers keep starting on the data dir ${dataDir}; start one at a time`);
}

/** Written whole, then linked into place: the link fails if the file exists, and is never seen half-written. */
function createPidFile(file: string): boolean | "read-only" {
  const draft = `${file}.${process.pid}`;
  try {
    writeFileSync(draft, `${process.pid}\n`, { mode: 0o600 });
  } catch (err) {
    if (["EROFS", "EACCES", "EPERM"].includes((err as NodeJS.ErrnoException).code ?? "")) return "read-only";
    throw err;
  }
  try {
    linkSync(draft, file);
    return true;
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === "EEXIST") return false;
    throw err;
  } finally {
    unlinkSync(draft);
  }
}

function holderOf(file: string): number | undefined {
  try {
    const pid = Number(readFileSync(file, "utf8").trim());
    return Number.isSafeInteger(pid) && pid > 0 ? pid : undefined;
  } catch {
    return undefined;
  }
}

/** Removes the file only while it still names `pid`, so a server that took it meanwhile keeps it. */
function removeIfHeldBy(file: string, pid: number | undefined): void {
  if (holderOf(file) !== pid) return;
  try {
    unlinkSync(file);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== "ENOENT") throw err;
  }
}
