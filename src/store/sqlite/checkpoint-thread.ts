// Runs in a worker thread: copies the write-ahead log's pages into the database file, on a connection of
// its own, so that the server's thread does not do that copying and the syncs that go with it.
import Database from "better-sqlite3";
import { parentPort, workerData } from "node:worker_threads";

const { path, intervalMs } = workerData as { path: string; intervalMs: number };
// The file must be the server's: a connection that made a new, empty one would copy nothing.
const db = new Database(path, { fileMustExist: true });
db.pragma("busy_timeout = 5000");

let failing = false;

/** PASSIVE neither waits for nor blocks the server's readers and writers. A failure is reported once, until one succeeds again. */
function checkpoint(): void {
  try {
    db.pragma("wal_checkpoint(PASSIVE)");
    failing = false;
  } catch (err) {
    if (!failing) parentPort!.postMessage({ failed: err instanceof Error ? err.message : String(err) });
    failing = true;
  }
}

const timer = setInterval(checkpoint, intervalMs);

parentPort!.on("message", () => {
  clearInterval(timer);
  checkpoint();
  db.close();
  parentPort!.close();
});
