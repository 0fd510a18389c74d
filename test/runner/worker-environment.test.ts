import { readdirSync, readFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it, vi } from "vitest";
import { poolPerTest } from "../helpers/pool.ts";

/** The environment of this process's pooled worker, read from /proc once it is running. */
async function workerEnviron(): Promise<Record<string, string>> {
  for (const deadline = Date.now() + 10_000; Date.now() < deadline; await new Promise((done) => setTimeout(done, 50))) {
    for (const pid of readdirSync("/proc").filter((name) => /^\d+$/.test(name))) {
      try {
        const parent = Number(/^PPid:\s+(\d+)/m.exec(readFileSync(`/proc/${pid}/status`, "utf8"))?.[1]);
        if (parent !== process.pid || !readFileSync(`/proc/${pid}/cmdline`, "utf8").includes("worker-process.ts")) continue;
        const entries = readFileSync(`/proc/${pid}/environ`, "utf8").split("\0").filter(Boolean);
        return Object.fromEntries(entries.map((entry) => [entry.slice(0, entry.indexOf("=")), entry.slice(entry.indexOf("=") + 1)]));
      } catch {
        // gone meanwhile
      }
    }
  }
  throw new Error("no pooled worker seen");
}

describe("a pooled worker's environment", () => {
  const secrets = { ORKA_ADMIN_TOKEN: "admin-token-of-the-server", GITHUB_TOKEN: "ghp_server0000000000000000000000000000", ORKA_PR_REVIEW_MARKER_SECRET: "marker-secret" };
  const newPool = poolPerTest("pool-env");
  afterEach(() => {
    for (const name of Object.keys(secrets)) delete process.env[name];
    vi.unstubAllEnvs();
  });

  it("holds none of the server's secrets, only what the worker reads (PATH, HOME, the log level)", async () => {
    Object.assign(process.env, secrets, { ORKA_LOG_LEVEL: process.env.ORKA_LOG_LEVEL ?? "warn" });
    newPool();
    const env = await workerEnviron();
    for (const value of Object.values(secrets)) expect(Object.values(env)).not.toContain(value);
    expect(Object.keys(env).filter((name) => name.startsWith("ORKA_"))).toEqual(["ORKA_LOG_LEVEL"]);
    expect(env.PATH).toBe(process.env.PATH);
  });

  it("keeps the server's compile cache settings, so a worker's modules load from where the server's do", async () => {
    const settings = { NODE_COMPILE_CACHE: join(tmpdir(), "orka-unused-compile-cache"), NODE_DISABLE_COMPILE_CACHE: "1", XDG_CACHE_HOME: join(tmpdir(), "orka-unused-cache-home") };
    for (const [name, value] of Object.entries(settings)) vi.stubEnv(name, value);
    newPool();
    const env = await workerEnviron();
    expect(Object.fromEntries(Object.keys(settings).map((name) => [name, env[name]]))).toEqual(settings);
  });
});
