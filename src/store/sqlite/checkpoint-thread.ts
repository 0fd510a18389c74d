// Runs in a worker thread: copies the write-ahead log back into the database file, on a connection of
// its own, so the server's thread never waits for that copy and its fsyncs.
import Database from "better-sqlite3";
import { parentPort, workerData } from "node:worker_threads";

const { path, intervalMs } = workerData as { path: string; intervalMs: number };
const db = new Database(path);
db.pragma("busy_timeout = 5000");

// PASSIVE never blocks the server's writers or readers: it copies what no reader still needs, and
// once the whole log is copied the server's next write starts the log again from its beginning.
const checkpoint = () => db.pragma("wal_checkpoint(PASSIVE)");
const timer = setInterval(checkpoint, intervalMs);

parentPort!.on("message", () => {
  clearInterval(timer);
  checkpoint();
  db.close();
  parentPort!.close();
});
