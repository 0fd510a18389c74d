import { errorMessage } from "../../util/errors.ts";
import type { OutputGate } from "../output-gate.ts";
import { groupTransactions, prepared, type Db } from "./db.ts";

export interface GroupCommitOptions {
  /**
   * The group's commit failed and its writes are undone, though the code that made them went on as if they
   * were kept: the process must end, and start again from what was committed (nothing held went out, and
   * from then on the group refuses every write and sends nothing).
   */
  commitFailed: (err: unknown) => void;
  /** A held send threw when it was released (the others are still released). */
  sendFailed: (err: unknown) => void;
  /** When the group commits; by default once the current turn of the event loop is done. */
  schedule?: (commit: () => void) => void;
}

/**
 * Commits the server's writes once per turn of the event loop instead of once per transaction. A commit
 * costs about as much as the statements of several short transactions (its fixed part, the file locks,
 * and every page written to the log, where a turn's transactions often change the same pages), and a
 * busy server makes a dozen in a turn.
 *
 * The first transaction of a turn opens the group's transaction (taking the write lock); every
 * transaction until the commit runs as a savepoint in it, so one that fails undoes its own writes only.
 * Until the commit, the writes are seen inside the process only, so whatever leaves the process goes
 * through this gate: it is held until the commit, and then released in the order it was sent. A crash
 * before the commit loses the turn's writes and everything that told of them together, as if it had
 * come before them.
 */
export class GroupCommit implements OutputGate {
  private readonly db: Db;
  private readonly options: GroupCommitOptions;
  private open = false;
  private releasing = false;
  private held: (() => void)[] = [];
  private waiting?: PromiseWithResolvers<void>;
  /** Why a group's writes were lost: from then on nothing is written or sent (the process is ending). */
  private failure?: unknown;

  constructor(db: Db, options: GroupCommitOptions) {
    this.db = db;
    this.options = options;
    groupTransactions(db, { open: () => this.begin(), lost: (err) => this.fail(err) });
  }

  release(send: () => void): void {
    if (this.failure !== undefined) return;
    if (this.open || this.releasing) this.held.push(send);
    else send();
  }

  settled(): Promise<void> {
    if (this.failure !== undefined) return Promise.reject(this.failure);
    if (!this.open) return Promise.resolve();
    this.waiting ??= Promise.withResolvers<void>();
    return this.waiting.promise;
  }

  /** Commits the writes gathered so far, now (the server does before it closes the connection). */
  commit(): void {
    if (!this.open) return;
    try {
      // SQLite undoes a transaction by itself after some failures (a full disk, an I/O error), and a body
      // that failed so reports it; this is the last check.
      if (!this.db.inTransaction) throw new Error("the store undid this turn's writes after a failed statement");
      prepared(this.db, "COMMIT").run();
    } catch (err) {
      this.fail(err);
      return;
    }
    this.open = false;
    this.tellWaiting();
    this.releaseHeld();
  }

  private begin(): void {
    // A group still open here lost its transaction to a statement outside any body.
    if (this.open) this.commit();
    if (this.failure !== undefined) throw new Error(`the store lost writes that code had gone on from (${errorMessage(this.failure)}): the server must start again`);
    prepared(this.db, "BEGIN IMMEDIATE").run();
    this.open = true;
    (this.options.schedule ?? setImmediate)(() => this.commit());
  }

  /** The group's writes are gone: nothing held goes out, nothing is written or sent after, and the process is told. */
  private fail(err: unknown): void {
    if (!this.open) return;
    this.open = false;
    this.failure = err;
    this.held = [];
    try {
      if (this.db.inTransaction) prepared(this.db, "ROLLBACK").run();
    } finally {
      this.tellWaiting(err);
      this.options.commitFailed(err);
    }
  }

  /** Tells whoever awaits `settled()` how the group ended: committed, or lost with `failure`. */
  private tellWaiting(failure?: unknown): void {
    const waiting = this.waiting;
    this.waiting = undefined;
    if (failure === undefined) waiting?.resolve();
    else waiting?.reject(failure);
  }

  /** Sends what was held, in order; a send that writes opens the next group, and what is held after it waits for that one. */
  private releaseHeld(): void {
    if (this.releasing) return; // the outer call, still running, sends the rest in order
    this.releasing = true;
    try {
      while (this.held.length > 0 && !this.open) {
        const batch = this.held;
        this.held = [];
        for (const send of batch) {
          try {
            send();
          } catch (err) {
            this.options.sendFailed(err);
          }
        }
      }
    } finally {
      this.releasing = false;
    }
  }
}
