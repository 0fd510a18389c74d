import { rmSync, statSync } from "node:fs";
import { afterEach, describe, expect, it, vi } from "vitest";
import { startBackgroundCheckpoints } from "../../src/store/sqlite/checkpointer.ts";
import { tempStore } from "../helpers/store.ts";

const ROW = "x".repeat(1024);
const stores: ReturnType<typeof tempStore>[] = [];
afterEach(() => stores.splice(0).forEach((store) => store.close()));

function storeWithRows() {
  const store = tempStore();
  stores.push(store);
  store.db.exec("CREATE TABLE filler (body TEXT NOT NULL)");
  const insert = store.db.prepare("INSERT INTO filler (body) VALUES (?)");
  return { ...store, write: (rows: number) => { for (let i = 0; i < rows; i++) insert.run(ROW); } };
}

const databaseFileBytes = (dir: string) => statSync(`${dir}/orka.db`).size;

describe("checkpoints off the server's thread", () => {
  it("copies committed pages into the database file while the server's connection never checkpoints", async () => {
    const store = storeWithRows();
    const checkpoints = startBackgroundCheckpoints(store.db, (problem) => { throw new Error(problem); });
    try {
      expect(store.db.pragma("wal_autocheckpoint", { simple: true })).toBe(4096);
      const before = databaseFileBytes(store.dir);
      // 1,500 commits of 1 KiB: a log page or two each, below the server connection's backstop, so
      // only the thread can have moved them into the database file.
      store.write(1500);
      await vi.waitFor(() => expect(databaseFileBytes(store.dir)).toBeGreaterThan(before + 1500 * 1024), { timeout: 5000, interval: 50 });
    } finally {
      await checkpoints.stop();
    }
  });

  it("stops with a last checkpoint, after which the database file holds every commit", async () => {
    const store = storeWithRows();
    const checkpoints = startBackgroundCheckpoints(store.db, (problem) => { throw new Error(problem); });
    store.write(500);
    const before = databaseFileBytes(store.dir);
    await checkpoints.stop();
    expect(databaseFileBytes(store.dir)).toBeGreaterThan(before + 500 * 1024);
    expect(store.db.prepare("SELECT count(*) AS n FROM filler").get()).toEqual({ n: 500 });
  });

  it("reports a thread that fails, without taking the process down, and hands the checkpoints back to the server's connection", async () => {
    const store = storeWithRows();
    // The open connection keeps working; a new one (the thread's) cannot open the file any more.
    rmSync(store.dir, { recursive: true, force: true });
    const problems: string[] = [];
    const checkpoints = startBackgroundCheckpoints(store.db, (problem) => problems.push(problem));
    await vi.waitFor(() => expect(problems).toHaveLength(2), { timeout: 5000, interval: 20 });
    expect(problems[0]).toMatch(/checkpoint thread failed: .*directory does not exist/);
    expect(problems[1]).toMatch(/checkpoint thread ended; the server's own connection checkpoints/);
    expect(store.db.pragma("wal_autocheckpoint", { simple: true })).toBe(1000);
    await checkpoints.stop();
    store.write(1);
  });
});
