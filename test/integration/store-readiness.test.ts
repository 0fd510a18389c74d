import { spawn, spawnSync, type ChildProcess } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { afterAll, describe, expect, it } from "vitest";

const CLI = resolve(import.meta.dirname, "../../src/cli/main.ts");
// Tests run as root, which file modes do not stop. A read-only bind mount does, and a private mount
// namespace (unshare -m) keeps it to the server under test.
const canMountPrivately = spawnSync("unshare", ["-m", "true"], { stdio: "ignore" }).status === 0;

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
