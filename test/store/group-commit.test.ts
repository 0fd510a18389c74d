import { mkdtempSync, readdirSync, readlinkSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import Database from "better-sqlite3";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { inStatement, inTransaction, openDatabase, type Db } from "../../src/store/sqlite/db.ts";
import { GroupCommit } from "../../src/store/sqlite/group-commit.ts";
import { SqliteResourceStore } from "../../src/store/sqlite/resource-store.ts";
import { SecretCipher } from "../../src/store/secret-cipher.ts";
import type { Resource } from "../../src/resources/meta.ts";

describe("a group commit", () => {
  let dir: string;
  let db: Db;
  /** Another connection to the same file: it sees only what is committed. */
  let other: Database.Database;
  let commits: GroupCommit;
  /** The group's commit, once scheduled: the test runs it when it wants the turn to end. */
  let scheduled: (() => void)[];
  let failures: unknown[];
  let sendFailures: unknown[];

  beforeEach(() => {
    dir = mkdtempSync(join(tmpdir(), "orka-group-"));
    db = openDatabase(join(dir, "orka.db"));
    db.exec(`CREATE TABLE parents (id INTEGER PRIMARY KEY);
      CREATE TABLE children (id INTEGER PRIMARY KEY, parent INTEGER REFERENCES parents (id) DEFERRABLE INITIALLY DEFERRED);
      CREATE TABLE blobs (data BLOB);`);
    other = new Database(join(dir, "orka.db"), { readonly: true });
    scheduled = [];
    failures = [];
    sendFailures = [];
    commits = new GroupCommit(db, {
      commitFailed: (err) => failures.push(err),
      sendFailed: (err) => sendFailures.push(err),
      schedule: (commit) => scheduled.push(commit),
    });
  });
  afterEach(() => {
    other.close();
    if (db.inTransaction) db.exec("ROLLBACK");
    db.close();
    rmSync(dir, { recursive: true, force: true });
  });

  const insertParent = (id: number) => inTransaction(db, () => db.prepare("INSERT INTO parents (id) VALUES (?)").run(id));
  const committedParents = () => other.prepare("SELECT id FROM parents ORDER BY id").pluck().all();
  const endTurn = () => scheduled.shift()!();
  /** After lost writes the process is ending: the group writes nothing more and sends nothing. */
  const expectNothingAfter = async () => {
    expect(() => insertParent(3)).toThrow(/lost writes that code had gone on from .*: the server must start again/);
    const sent: string[] = [];
    commits.release(() => sent.push("anything"));
    expect(sent).toEqual([]);
    await expect(commits.settled()).rejects.toBeDefined();
    expect(committedParents()).not.toContain(3);
  };

  it("commits the transactions of a turn once, and only then releases what was held, in the order it was sent", async () => {
    insertParent(1);
    insertParent(2);
    expect(scheduled).toHaveLength(1);
    expect(db.prepare("SELECT count(*) FROM parents").pluck().get()).toBe(2);
    expect(committedParents()).toEqual([]);

    const sent: string[] = [];
    commits.release(() => sent.push("reply"));
    commits.release(() => sent.push("event"));
    let settled = false;
    void commits.settled().then(() => (settled = true));
    await Promise.resolve();
    expect(sent).toEqual([]);
    expect(settled).toBe(false);

    endTurn();
    expect(committedParents()).toEqual([1, 2]);
    expect(sent).toEqual(["reply", "event"]);
    await Promise.resolve();
    expect(settled).toBe(true);

    // With nothing written since, nothing waits.
    commits.release(() => sent.push("later"));
    expect(sent).toEqual(["reply", "event", "later"]);
    await commits.settled();
  });

  it("undoes a transaction that fails and keeps the others of its turn", () => {
    insertParent(1);
    expect(() =>
      inTransaction(db, () => {
        db.prepare("INSERT INTO parents (id) VALUES (2)").run();
        throw new Error("refused");
      }),
    ).toThrow("refused");
    insertParent(3);
    endTurn();
    expect(committedParents()).toEqual([1, 3]);
    expect(failures).toEqual([]);
  });

  it("keeps what a transaction's savepoint needs to undo it in memory: a busy turn opens no temporary file", () => {
    // Each transaction of a turn is a savepoint, and SQLite copies every page it changes first; past 64 KiB
    // of copies they went to a temporary file, written a page at a time: about 80 pages a Task at 50 Tasks at once.
    // SQLite's temporary files are deleted as they are opened: an unnamed one (O_TMPFILE) or one named etilqs_….
    const temporaryFiles = () => readdirSync("/proc/self/fd").filter((fd) => {
      try {
        return /\/(#\d+|etilqs_\w+) \(deleted\)$/.test(readlinkSync(`/proc/self/fd/${fd}`));
      } catch {
        return false; // closed meanwhile
      }
    });
    const before = temporaryFiles();
    inTransaction(db, () => {
      for (let i = 0; i < 64; i++) db.prepare("INSERT INTO blobs (data) VALUES (?)").run(Buffer.alloc(3000, i));
    });
    endTurn();
    insertParent(1);
    inTransaction(db, () => db.prepare("UPDATE blobs SET data = ?").run(Buffer.alloc(3000, 255)));
    expect(() => inTransaction(db, () => {
      db.prepare("UPDATE blobs SET data = ?").run(Buffer.alloc(3000, 7));
      throw new Error("undone");
    })).toThrow("undone");
    expect(temporaryFiles()).toEqual(before);
    expect(db.prepare("SELECT count(*) FROM blobs WHERE data = ?").pluck().get(Buffer.alloc(3000, 255))).toBe(64);
    endTurn();
    expect(committedParents()).toEqual([1]);
  });

  it("runs a single statement in the turn's transaction without a savepoint: one that fails undoes only itself", () => {
    const insert = db.prepare("INSERT INTO parents (id) VALUES (?)");
    inStatement(db, () => insert.run(1));
    expect(scheduled).toHaveLength(1);
    expect(() => inStatement(db, () => insert.run(1))).toThrow(/UNIQUE/);
    inStatement(db, () => insert.run(2));
    expect(committedParents()).toEqual([]);
    endTurn();
    expect(committedParents()).toEqual([1, 2]);
    expect(failures).toEqual([]);
  });

  it("holds what a released send sends after writing for the next commit, and releases the rest of the first", () => {
    const sent: string[] = [];
    insertParent(1);
    commits.release(() => {
      insertParent(2);
      commits.release(() => sent.push("tells of 2"));
    });
    commits.release(() => sent.push("tells of 1"));
    endTurn();
    expect(committedParents()).toEqual([1]);
    expect(sent).toEqual(["tells of 1"]);
    endTurn();
    expect(committedParents()).toEqual([1, 2]);
    expect(sent).toEqual(["tells of 1", "tells of 2"]);
  });

  it("reports a send that throws and still releases the others", () => {
    const sent: string[] = [];
    insertParent(1);
    commits.release(() => {
      throw new Error("socket gone");
    });
    commits.release(() => sent.push("next"));
    endTurn();
    expect(sent).toEqual(["next"]);
    expect(sendFailures.map(String)).toEqual(["Error: socket gone"]);
  });

  it("reports a commit that fails, with the turn's writes undone and nothing it held sent", async () => {
    insertParent(1);
    // A deferred foreign key is checked at the commit: this one fails it.
    inTransaction(db, () => db.prepare("INSERT INTO children (id, parent) VALUES (1, 99)").run());
    const sent: string[] = [];
    commits.release(() => sent.push("reply"));
    const settled = commits.settled();
    endTurn();
    await expect(settled).rejects.toThrow(/FOREIGN KEY/);
    expect(failures.map((err) => (err as { code?: string }).code)).toEqual(["SQLITE_CONSTRAINT_FOREIGNKEY"]);
    expect(sent).toEqual([]);
    expect(db.inTransaction).toBe(false);
    expect(db.prepare("SELECT count(*) FROM parents").pluck().get()).toBe(0);

    await expectNothingAfter();
  });

  it("reports the writes of a turn that SQLite undid by itself, instead of committing the next turn's over them", async () => {
    insertParent(1);
    db.exec("ROLLBACK"); // as SQLite does after a full disk or an I/O error in a statement
    expect(() => insertParent(2)).toThrow(/the server must start again/);
    expect(failures.map(String)).toEqual(["Error: the store undid this turn's writes after a failed statement"]);
    endTurn();
    expect(committedParents()).toEqual([]);
    await expectNothingAfter();
  });

  it.each([
    ["a transaction body", inTransaction],
    ["a single statement", inStatement],
  ])("notices at once %s that failed and took the turn's writes with it, before any other write (a full disk)", async (_what, write) => {
    insertParent(1);
    // A store that may grow by one page more fills up on a large row.
    db.pragma(`max_page_count = ${(db.pragma("page_count", { simple: true }) as number) + 1}`);
    expect(() => write(db, () => db.prepare("INSERT INTO blobs (data) VALUES (?)").run(Buffer.alloc(64 * 1024)))).toThrow(/full/);
    expect(failures.map((err) => (err as { code?: string }).code)).toEqual(["SQLITE_FULL"]);
    expect(db.inTransaction).toBe(false);
    db.pragma("max_page_count = 1073741823");
    await expectNothingAfter();
  });

  it("commits at once when asked (the server does before it closes the connection)", () => {
    insertParent(1);
    commits.commit();
    expect(committedParents()).toEqual([1]);
    endTurn(); // the scheduled commit finds nothing left to do
    expect(failures).toEqual([]);
  });

  it("lets the resource store keep what it reads between transactions, and not what a transaction reads", async () => {
    const resources = new SqliteResourceStore(db, SecretCipher.fromKeyFile(join(dir, "secret.key")));
    const tool: Resource = { apiVersion: "core.orka.ai/v1alpha1", kind: "Tool", metadata: { name: "t", namespace: "default" }, spec: { description: "one" } };
    const created = await resources.create(tool);
    expect(db.inTransaction).toBe(true);
    let readInside: Resource | undefined;
    expect(() =>
      inTransaction(db, () => {
        void resources.update({ ...created, spec: { description: "undone" } });
        void resources.get("Tool", "default", "t").then((read) => (readInside = read));
        throw new Error("refused");
      }),
    ).toThrow("refused");
    await Promise.resolve();
    expect(readInside!.spec).toEqual({ description: "undone" });
    expect(Object.isFrozen(readInside)).toBe(false);
    const readBetween = (await resources.get("Tool", "default", "t"))!;
    expect(readBetween.spec).toEqual({ description: "one" });
    expect(Object.isFrozen(readBetween)).toBe(true);
    endTurn();
  });
});
