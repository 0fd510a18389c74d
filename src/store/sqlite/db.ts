import Database from "better-sqlite3";
import { OrkaError } from "../../util/errors.ts";
import { migrations } from "./migrations.ts";

export type Db = Database.Database;

/**
 * Opens (creating if needed) the SQLite database with WAL and the schema brought up to date.
 * `upgrading` hears of an existing database about to be migrated (some migrations rewrite whole tables,
 * which takes a while on a large store); a new database is made silently.
 */
export function openDatabase(path: string, upgrading?: (fromVersion: number, toVersion: number) => void): Db {
  const db = new Database(path);
  db.pragma("journal_mode = WAL");
  db.pragma("busy_timeout = 5000");
  db.pragma("foreign_keys = ON");
  db.pragma("synchronous = NORMAL");
  try {
    migrate(db, upgrading);
  } catch (err) {
    db.close(); // each migration's transaction was undone; nothing keeps the file open
    throw err;
  }
  // Under a group commit every transaction is a savepoint, and SQLite keeps a copy of each page a savepoint
  // changes until it ends. Past 64 KiB those copies went to a temporary file, written a page at a time:
  // about 80 pages a Task at 50 Tasks at once, each two writes on the server's thread (docs/performance-history.md).
  // In memory they cost a copy each, and a transaction holds as many as the pages it changes: large deletes
  // go in batches (`deleteTaskRows`). Set after the migrations, whose index builds sort whole tables.
  db.pragma("temp_store = MEMORY");
  return db;
}

/** What `inTransaction` keeps per connection. */
interface TransactionState {
  /** The one transaction function every body runs through. */
  run: (body: () => unknown) => unknown;
  /** Transaction bodies running now: what they read may still be undone. */
  bodies: number;
  /** A group commit's transaction, which the bodies join (see `groupTransactions`). */
  group?: TransactionGroup;
}

export interface TransactionGroup {
  /** Runs before a body when no transaction is open: opens the group's. */
  open(): void;
  /** A body failed and took the group's transaction with it (SQLite undoes it all after a full disk or an I/O error). */
  lost(err: unknown): void;
}

const transactionStates = new WeakMap<Db, TransactionState>();

function transactionState(db: Db): TransactionState {
  let state = transactionStates.get(db);
  // better-sqlite3 builds four wrapper functions for each `db.transaction(fn)`, which cost more than a short
  // transaction's statements: they are built once per connection.
  if (!state) transactionStates.set(db, (state = { run: db.transaction((inner: () => unknown) => inner()), bodies: 0 }));
  return state;
}

/**
 * Runs `body` in a transaction: committed when it returns, rolled back when it throws, a savepoint when a
 * transaction is open already. Every write of the stores runs in one (a single statement through `preparedWrite`):
 * when the connection's transactions are grouped (`GroupCommit`), the body joins the group's transaction,
 * and a failure that undoes the whole group is noticed here, before any other write. So a body lets
 * SQLite's errors through: one it caught and wrote on after would write outside the group.
 */
export function inTransaction<T>(db: Db, body: () => T): T {
  const state = transactionState(db);
  state.bodies++;
  try {
    return inGroup(db, state, () => state.run(body) as T);
  } finally {
    state.bodies--;
  }
}

/**
 * Runs `write`, one statement, as `inTransaction` runs a body, but without a savepoint: SQLite undoes a
 * failed statement by itself. Under a group commit the statement joins the group's transaction.
 */
export function inStatement<T>(db: Db, write: () => T): T {
  return inGroup(db, transactionState(db), write);
}

/** Runs `write` in the connection's group commit, when it has one: opened first if need be, and told when a failure took its transaction with it. */
function inGroup<T>(db: Db, state: TransactionState, write: () => T): T {
  if (!db.inTransaction) state.group?.open();
  try {
    return write();
  } catch (err) {
    if (state.group && !db.inTransaction) state.group.lost(err);
    throw err;
  }
}

/** Whether a transaction body is running on `db`: what it reads may be its own writes, which it may yet undo. */
export function inTransactionBody(db: Db): boolean {
  return (transactionStates.get(db)?.bodies ?? 0) > 0;
}

/** Has every transaction body on `db` run in `group`'s transaction. */
export function groupTransactions(db: Db, group: TransactionGroup): void {
  transactionState(db).group = group;
}

/** Statements already compiled, per connection and SQL text: compiling one costs more than most queries run. */
const statementCache = new WeakMap<Db, Map<string, Database.Statement>>();
/** Bounds the cache when a caller's input shapes the SQL (a selector with many `in` values); the oldest goes first. */
const STATEMENT_CACHE_SIZE = 500;

/**
 * The connection's statement for `sql`, compiled on first use. Every store prepares through this,
 * so SQL assembled per call (a list's optional filters) is compiled once per distinct text; such
 * text keeps values in parameters, never in the SQL. A cached statement is shared: run it to
 * completion (run, get, all), never hold one open with iterate().
 *
 * In a statement that sorts or aggregates (ORDER BY, max), an equality on a parameter is written
 * `= +?`, and so is a LIMIT given as a parameter. SQLite's planner asks to plan such a statement again
 * whenever a parameter it looked at gets a new value: the statement was compiled anew at every run,
 * which cost 6–80 µs here, more than most queries. The unary plus hides the parameter from the planner
 * and leaves its value, its comparison and the index used as they were. (Searches keep a planned LIMIT:
 * there the value may choose the plan.)
 */
export function prepared<Params extends unknown[] = unknown[], Row = unknown>(db: Db, sql: string): Database.Statement<Params, Row> {
  let statements = statementCache.get(db);
  if (!statements) statementCache.set(db, (statements = new Map()));
  let statement = statements.get(sql);
  if (!statement) {
    if (statements.size >= STATEMENT_CACHE_SIZE) statements.delete(statements.keys().next().value!);
    statements.set(sql, (statement = db.prepare(sql)));
  }
  return statement as Database.Statement<Params, Row>;
}

/** Rows one statement of `deleteTaskRows` deletes at most: the page copies it holds to undo itself stay near 2 MiB. */
const DELETE_BATCH_ROWS = 500;

/**
 * Deletes a Task's rows of `table` in statements of at most DELETE_BATCH_ROWS rows, each run as `inStatement`
 * runs one. A Task's rows lie among other Tasks', so deleting thousands of them at once would hold a copy of a
 * page for nearly each row until the end (see `openDatabase`). The batches are not one atomic delete: a
 * caller that may be cut off half-way deletes again until nothing is left (a deleted Task's finalizer does).
 */
export function deleteTaskRows(db: Db, table: string, namespace: string, task: string): void {
  const batch = prepared(db, `DELETE FROM ${table} WHERE namespace = ? AND task = ? LIMIT ${DELETE_BATCH_ROWS}`);
  while (inStatement(db, () => batch.run(namespace, task)).changes === DELETE_BATCH_ROWS);
}

/** A statement that writes, run alone as `inStatement` runs it, so that it joins the connection's group commit. */
export interface WriteStatement<Row> {
  run(...params: unknown[]): Database.RunResult;
  get(...params: unknown[]): Row | undefined;
}

/** The connection's statement for `sql` (see `prepared`), which writes: each run joins the group commit. */
export function preparedWrite<Row = unknown>(db: Db, sql: string): WriteStatement<Row> {
  const statement = prepared<unknown[], Row>(db, sql);
  return {
    run: (...params) => inStatement(db, () => statement.run(...params)),
    get: (...params) => inStatement(db, () => statement.get(...params)),
  };
}

function migrate(db: Db, upgrading?: (fromVersion: number, toVersion: number) => void): void {
  const current = db.pragma("user_version", { simple: true }) as number;
  if (current > 0 && current < migrations.length) upgrading?.(current, migrations.length);
  for (let version = current; version < migrations.length; version++) {
    inTransaction(db, () => {
      db.exec(migrations[version]);
      db.pragma(`user_version = ${version + 1}`);
    });
  }
}

/** SQLite result codes that mean the database file cannot be written, in words an operator can act on. */
const WRITE_FAILURES: Record<string, string> = {
  SQLITE_READONLY: "the database is read-only",
  SQLITE_FULL: "the disk is full",
  SQLITE_IOERR: "a disk I/O error",
  SQLITE_CANTOPEN: "a database file cannot be opened",
};

/** Lock codes: another connection holds the database past busy_timeout; waiting, not fixing, helps. */
const BUSY_CODES = new Set(["SQLITE_BUSY", "SQLITE_LOCKED"]);

/** A write the store could not make, as a 503 that says what to fix; undefined for any other error. */
export function storeWriteFailure(err: unknown): OrkaError | undefined {
  if (!(err instanceof Database.SqliteError)) return undefined;
  // Extended codes such as SQLITE_IOERR_WRITE share their primary code's meaning.
  const primary = err.code.split("_").slice(0, 2).join("_");
  if (BUSY_CODES.has(primary)) return new OrkaError("unavailable", "the data store is busy (another process holds its lock): retry in a moment");
  const reason = WRITE_FAILURES[primary];
  if (!reason) return undefined;
  return new OrkaError("unavailable", `the data store cannot be written (${reason}): make the data directory writable and give it free space; reads still work`);
}

/**
 * Why the database cannot be written right now, or undefined when it can. The probe is a real
 * one-page write (the schema version, rewritten unchanged), since a read-only or full store still
 * opens and reads. Any failure of it means not ready; one SQLite does not explain is named by code.
 * It is made on its own, outside any transaction: while a group commit's transaction is open, that
 * transaction took the write lock already, and its commit is the check (one that fails ends the server).
 */
export function storeWriteProblem(db: Db): string | undefined {
  if (db.inTransaction) return undefined;
  try {
    db.pragma(`user_version = ${db.pragma("user_version", { simple: true }) as number}`);
    return undefined;
  } catch (err) {
    const code = err instanceof Database.SqliteError ? err.code : "unknown error";
    return storeWriteFailure(err)?.message ?? `the data store failed its write check (${code}): see the server log`;
  }
}

/** How long a readiness verdict is kept: /readyz needs no token, and each fresh verdict costs a write. */
export const READINESS_TTL_MS = 2_000;

/**
 * Whether the store can be written, as /readyz reports it. A verdict is kept READINESS_TTL_MS, so
 * any number of probes costs at most one write per interval; a write elsewhere that failed with a
 * write error sets the verdict at once instead of waiting for the next probe.
 */
export class StoreWritability {
  private verdictCache: { problem: string | undefined; until: number } | undefined;
  private readonly db: Db;
  private readonly now: () => number;

  constructor(db: Db, now: () => number = Date.now) {
    this.db = db;
    this.now = now;
  }

  problem(): string | undefined {
    if (this.verdictCache && this.now() < this.verdictCache.until) return this.verdictCache.problem;
    return this.remember(storeWriteProblem(this.db));
  }

  /** Called with any error a request failed on; only a known write failure changes the verdict. */
  noteFailure(err: unknown): void {
    const failure = storeWriteFailure(err);
    if (failure) this.remember(failure.message);
  }

  private remember(problem: string | undefined): string | undefined {
    this.verdictCache = { problem, until: this.now() + READINESS_TTL_MS };
    return problem;
  }
}
