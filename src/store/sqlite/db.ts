import Database from "better-sqlite3";
import { OrkaError } from "../../util/errors.ts";
import { migrations } from "./migrations.ts";

export type Db = Database.Database;

/** Opens (creating if needed) the SQLite database with WAL and the schema brought up to date. */
export function openDatabase(path: string): Db {
  const db = new Database(path);
  db.pragma("journal_mode = WAL");
  db.pragma("busy_timeout = 5000");
  db.pragma("foreign_keys = ON");
  db.pragma("synchronous = NORMAL");
  migrate(db);
  return db;
}

function migrate(db: Db): void {
  const current = db.pragma("user_version", { simple: true }) as number;
  for (let version = current; version < migrations.length; version++) {
    db.transaction(() => {
      db.exec(migrations[version]);
      db.pragma(`user_version = ${version + 1}`);
    })();
  }
}

/** SQLite result codes that mean the database file cannot be written, in words an operator can act on. */
const WRITE_FAILURES: Record<string, string> = {
  SQLITE_READONLY: "the database is read-only",
  SQLITE_FULL: "the disk is full",
  SQLITE_IOERR: "a disk I/O error",
  SQLITE_CANTOPEN: "a database file cannot be opened",
};

/** A write the store could not make, as a 503 that says what to fix; undefined for any other error. */
export function storeWriteFailure(err: unknown): OrkaError | undefined {
  if (!(err instanceof Database.SqliteError)) return undefined;
  // Extended codes such as SQLITE_IOERR_WRITE share their primary code's meaning.
  const reason = WRITE_FAILURES[err.code.split("_").slice(0, 2).join("_")];
  if (!reason) return undefined;
  return new OrkaError("unavailable", `the data store cannot be written (${reason}): make the data directory writable and give it free space; reads still work`);
}

/**
 * Why the database cannot be written right now, or undefined when it can. The probe is a real
 * one-page write (the schema version, rewritten unchanged), since a read-only or full store still
 * opens and reads.
 */
export function storeWriteProblem(db: Db): string | undefined {
  try {
    db.pragma(`user_version = ${db.pragma("user_version", { simple: true }) as number}`);
    return undefined;
  } catch (err) {
    const failure = storeWriteFailure(err);
    if (!failure) throw err;
    return failure.message;
  }
}
