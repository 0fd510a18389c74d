// Orka's SQLite stores on a fresh database in a temporary directory, as the server opens them (WAL,
// checkpoints on their own thread), with nothing above them: for the floors under the server's work.
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { SecretCipher } from "../src/store/secret-cipher.ts";
import { startBackgroundCheckpoints } from "../src/store/sqlite/checkpointer.ts";
import { SqliteTaskDataStore } from "../src/store/sqlite/data-store.ts";
import { openDatabase } from "../src/store/sqlite/db.ts";
import { SqliteJournalStore } from "../src/store/sqlite/journal-store.ts";
import { SqliteResourceStore } from "../src/store/sqlite/resource-store.ts";

/** The resource, task data and journal stores on one new database (`db`); `close()` stops them and removes it all. */
export function openBareStores(name: string) {
  const dir = mkdtempSync(join(tmpdir(), `orka-${name}-`));
  const db = openDatabase(join(dir, "orka.db"));
  const checkpoints = startBackgroundCheckpoints(db, (problem) => console.error(problem));
  return {
    db,
    resources: new SqliteResourceStore(db, SecretCipher.fromKeyFile(join(dir, "secret.key"))),
    data: new SqliteTaskDataStore(db),
    journal: new SqliteJournalStore(db),
    async close(): Promise<void> {
      await checkpoints.stop();
      db.close();
      rmSync(dir, { recursive: true, force: true });
    },
  };
}
