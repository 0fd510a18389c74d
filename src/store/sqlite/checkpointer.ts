import { Worker } from "node:worker_threads";
import type { Db } from "./db.ts";

/** How often the checkpoint thread copies the write-ahead log into the database file. */
const CHECKPOINT_INTERVAL_MS = 200;
/**
 * The log's length (4 KiB pages) at which the server's own connection checkpoints after all: only when
 * the thread falls far behind (a long write burst), so the log stays bounded (about 64 MiB).
 */
const BACKSTOP_PAGES = 16_384;
/** After a checkpoint has copied everything, a log file grown longer than this is cut back. */
const WAL_SIZE_LIMIT_BYTES = 64 * 1024 * 1024;

export interface BackgroundCheckpoints {
  stop(): Promise<void>;
}

/**
 * Moves SQLite's write-ahead-log checkpoints off the thread that serves requests. A checkpoint copies
 * pages into the database file and syncs it to disk; on the server's thread it stalled every request
 * for up to 150 ms every few hundred commits. Commits are unchanged: each is still in the log before
 * its caller hears of it.
 */
export function startBackgroundCheckpoints(db: Db, onFailure: (err: Error) => void): BackgroundCheckpoints {
  db.pragma(`wal_autocheckpoint = ${BACKSTOP_PAGES}`);
  db.pragma(`journal_size_limit = ${WAL_SIZE_LIMIT_BYTES}`);
  const thread = new Worker(new URL("./checkpoint-thread.ts", import.meta.url), { workerData: { path: db.name, intervalMs: CHECKPOINT_INTERVAL_MS } });
  // Without the thread the log still stays bounded: the server's connection checkpoints at the backstop.
  thread.on("error", onFailure);
  const exited = new Promise<void>((resolve) => thread.once("exit", () => resolve()));
  thread.unref();
  return {
    async stop() {
      thread.ref(); // the caller waits for the thread's end: keep the process up until then
      thread.postMessage("stop");
      await exited;
    },
  };
}
