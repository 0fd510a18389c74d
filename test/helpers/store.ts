import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import Database from "better-sqlite3";
import { openDatabase } from "../../src/store/sqlite/db.ts";
import { migrations } from "../../src/store/sqlite/migrations.ts";
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

/**
 * A database at `path` as Orka left it before the migration whose SQL contains `marker`: every earlier
 * migration applied and the schema version set, for a test to fill and then open as an upgrade.
 */
export function databaseBefore(path: string, marker: string): { db: Database.Database; version: number } {
  const version = migrations.findIndex((migration) => migration.includes(marker));
  if (version < 0) throw new Error(`no migration contains ${marker}`);
  const db = new Database(path);
  for (const migration of migrations.slice(0, version)) db.exec(migration);
  db.pragma(`user_version = ${version}`);
  return { db, version };
}
