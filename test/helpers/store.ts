import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { openDatabase } from "../../src/store/sqlite/db.ts";
import { SqliteResourceStore } from "../../src/store/sqlite/resource-store.ts";
import { SqliteTaskDataStore } from "../../src/store/sqlite/data-store.ts";
import { SecretCipher } from "../../src/store/secret-cipher.ts";

/** A fresh on-disk store in a temp dir; call close() to remove it. */
export function tempStore() {
  const dir = mkdtempSync(join(tmpdir(), "orka-store-"));
  const db = openDatabase(join(dir, "orka.db"));
  const cipher = SecretCipher.fromKeyFile(join(dir, "secret.key"));
  return {
    dir,
    db,
    resources: new SqliteResourceStore(db, cipher),
    data: new SqliteTaskDataStore(db),
    close() {
      db.close();
      rmSync(dir, { recursive: true, force: true });
    },
  };
}
