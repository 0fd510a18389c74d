import { Worker } from "node:worker_threads";
import type { Db } from "./db.ts";

/** How often the checkpoint thread copies the write-ahead log into the database file. */
const CHECKPOINT_INTERVAL_MS = 200;
/**
 * The log's length (4 KiB pages) at which the server's own connection checkpoints. SQLite starts the log
 * again from its beginning when a write begins and finds it wholly copied; under steady writes the
 * thread's copying never leaves it so at that moment, so the server's checkpoint at this length does it,
 * finding all but the newest pages copied already (it costs little more than its syncs). The log stays
 * near 16 MiB at most.
 */
const BACKSTOP_PAGES = 4096;
/** SQLite's own default, for when the thread is gone. */
const DEFAULT_AUTOCHECKPOINT_PAGES = 1000;
/** After the log starts again, a file grown longer than this is cut back. */
const WAL_SIZE_LIMIT_BYTES = 16 * 1024 * 1024;

export interface BackgroundCheckpoints {
  stop(): Promise<void>;
}

/**
 * Moves most of SQLite's write-ahead-log checkpointing off the thread that serves requests. A checkpoint
 * copies pages into the database file and syncs it to disk: on the server's thread that stalled every
 * request for up to 150 ms every few hundred commits. Commits are unchanged: each is in the log before
 * its caller hears of it. `report` hears of failed checkpoints (once until one succeeds again) and of a
 * thread that ended unasked, after which the server's connection checkpoints as SQLite does by default.
 */
export function startBackgroundCheckpoints(db: Db, report: (problem: string) => void): BackgroundCheckpoints {
  db.pragma(`wal_autocheckpoint = ${BACKSTOP_PAGES}`);
  db.pragma(`journal_size_limit = ${WAL_SIZE_LIMIT_BYTES}`);
  const thread = new Worker(new URL("./checkpoint-thread.ts", import.meta.url), { workerData: { path: db.name, intervalMs: CHECKPOINT_INTERVAL_MS } });
  let stopping = false;
  thread.on("message", (message: { failed: string }) => report(`a checkpoint of the store's log failed: ${message.failed}`));
  thread.on("error", (err) => report(`the store's checkpoint thread failed: ${err.message}`));
  const exited = new Promise<void>((resolve) =>
    thread.once("exit", () => {
      if (!stopping && db.open) {
        db.pragma(`wal_autocheckpoint = ${DEFAULT_AUTOCHECKPOINT_PAGES}`);
        report("the store's checkpoint thread ended; the server's own connection checkpoints its log again");
      }
      resolve();
    }),
  );
  thread.unref();
  return {
    async stop() {
      stopping = true;
      thread.ref(); // the caller waits for the thread's end: keep the process up until then
      thread.postMessage("stop");
      await exited;
    },
  };
}
