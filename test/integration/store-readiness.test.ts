import { spawn, spawnSync, type ChildProcess } from "node:child_process";
import { mkdtempSync, rmSync, statSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import Database from "better-sqlite3";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { READINESS_TTL_MS } from "../../src/store/sqlite/db.ts";
import { startOrkaServer, type OrkaUnderTest } from "../helpers/orka-server.ts";

const CLI = resolve(import.meta.dirname, "../../src/cli/main.ts");
// Tests run as root, which file modes do not stop. A read-only bind mount does, and a private mount
// namespace (unshare -m) keeps it to the server under test.
const canMountPrivately = spawnSync("unshare", ["-m", "true"], { stdio: "ignore" }).status === 0;
if (!canMountPrivately) {
  console.warn("store-readiness: skipping the read-only store test: `unshare -m` failed here (it needs root, as CI runs); run as root to cover it");
}

// Issue 12 item 13: a data directory that cannot be written is noticed by /readyz and answered 503.
describe.skipIf(!canMountPrivately)("a store that cannot be written", () => {
  const dir = mkdtempSync(join(tmpdir(), "orka-ro-"));
  const token = `test-admin-token-${Math.random().toString(36).slice(2)}`;
  const env = {
    ...process.env,
    ORKA_PORT: "0",
    ORKA_HOST: "127.0.0.1",
    ORKA_DATA_DIR: join(dir, "state"),
    ORKA_ADMIN_TOKEN: token,
    ORKA_CLI_CONFIG: join(dir, "cli-config.yaml"),
    ORKA_WORKER_PROCESSES: "1",
    ORKA_LOG_LEVEL: "warn",
  };
  const running: ChildProcess[] = [];

  /** `orka serve`, optionally with its data directory bind-mounted read-only in its own mount namespace. */
  async function serve(readOnly: boolean): Promise<{ url: string; child: ChildProcess }> {
    const mountThenServe = 'mount --bind -o ro "$ORKA_DATA_DIR" "$ORKA_DATA_DIR" && exec "$0" "$1" serve';
    const child = readOnly
      ? spawn("unshare", ["-m", "sh", "-c", mountThenServe, process.execPath, CLI], { env, stdio: ["ignore", "pipe", "pipe"] })
      : spawn(process.execPath, [CLI, "serve"], { env, stdio: ["ignore", "pipe", "pipe"] });
    running.push(child);
    let output = "";
    const url = await new Promise<string>((resolveUrl, reject) => {
      const timer = setTimeout(() => reject(new Error(`orka serve did not start:\n${output}`)), 30_000);
      child.stderr!.on("data", (chunk) => (output += chunk));
      child.stdout!.on("data", (chunk) => {
        output += chunk;
        const match = /orka listening on (http:\/\/\S+)/.exec(output);
        if (match) {
          clearTimeout(timer);
          resolveUrl(match[1]);
        }
      });
      child.on("exit", (code) => reject(new Error(`orka serve exited with ${code}:\n${output}`)));
    });
    return { url, child };
  }

  const stop = (child: ChildProcess, signal: NodeJS.Signals) =>
    new Promise<void>((done) => {
      if (child.exitCode !== null || child.signalCode !== null) return done();
      child.once("exit", () => done());
      child.kill(signal);
    });

  afterAll(async () => {
    for (const child of running) await stop(child, "SIGKILL");
    rmSync(dir, { recursive: true, force: true });
  });

  const call = async (url: string, method: string, path: string, body?: unknown) => {
    const response = await fetch(`${url}${path}`, {
      method,
      headers: { authorization: `Bearer ${token}`, ...(body ? { "content-type": "application/json" } : {}) },
      body: body ? JSON.stringify(body) : undefined,
    });
    return { status: response.status, body: (await response.json()) as any };
  };

  it("says not ready and answers writes with 503 in the API's shape, while reads still work", async () => {
    const writable = await serve(false);
    expect((await call(writable.url, "POST", "/api/v1/agents", { metadata: { name: "before" }, spec: {} })).status).toBe(201);
    expect((await call(writable.url, "GET", "/readyz")).status).toBe(200);
    // Killed, as after a crash: the write-ahead log stays, so SQLite reopens the read-only files and reads them.
    await stop(writable.child, "SIGKILL");

    const readOnly = await serve(true);
    const unavailable = {
      status: 503,
      body: { error: { code: 503, message: "the data store cannot be written (the database is read-only): make the data directory writable and give it free space; reads still work" } },
    };
    expect(await call(readOnly.url, "GET", "/readyz")).toEqual(unavailable);
    expect((await call(readOnly.url, "GET", "/healthz")).status).toBe(200);
    expect((await call(readOnly.url, "GET", "/api/v1/agents/before")).body.metadata.name).toBe("before");
    expect(await call(readOnly.url, "POST", "/api/v1/agents", { metadata: { name: "after" }, spec: {} })).toEqual(unavailable);
    expect(await call(readOnly.url, "POST", "/api/v1/tasks", { name: "after", type: "container", command: ["true"] })).toEqual(unavailable);
    await stop(readOnly.child, "SIGTERM");
  }, 90_000);
});

// Review of issue 12 item 13: /readyz needs no token, so its write is rationed, and a locked store is 503.
describe("readiness of a writable store", () => {
  let orka: OrkaUnderTest;
  let other: Database.Database;
  const dbFile = () => join(orka.dataDir, "state", "orka.db");
  beforeAll(async () => {
    orka = await startOrkaServer();
    other = new Database(dbFile());
    other.pragma("busy_timeout = 10000");
  });
  afterAll(async () => {
    other?.close();
    await orka?.stop();
  });
  const readyz = async () => {
    const response = await fetch(`${orka.url}/readyz`);
    return { status: response.status, body: await response.json() };
  };

  it("answers 503, not 500, while another process holds the store's lock", async () => {
    await new Promise((resolveWait) => setTimeout(resolveWait, READINESS_TTL_MS + 100));
    other.exec("BEGIN IMMEDIATE");
    try {
      expect(await readyz()).toEqual({ status: 503, body: { error: { code: 503, message: "the data store is busy (another process holds its lock): retry in a moment" } } });
    } finally {
      other.exec("ROLLBACK");
    }
  }, 30_000);

  it("writes at most once per interval however often it is asked", async () => {
    await new Promise((resolveWait) => setTimeout(resolveWait, READINESS_TTL_MS + 100));
    expect(other.pragma("wal_checkpoint(TRUNCATE)", { simple: true })).toBe(0);
    expect(statSync(`${dbFile()}-wal`).size).toBe(0);
    for (let i = 0; i < 100; i++) expect((await readyz()).status).toBe(200);
    // One probe writes one page (a 32-byte WAL header, then 24 bytes and 4 KiB per frame); 100 probes wrote 100 pages.
    expect(statSync(`${dbFile()}-wal`).size).toBeLessThan(5 * 4120);
  }, 30_000);
});
