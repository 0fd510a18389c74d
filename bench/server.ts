import { chmodSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { serverConfigFrom } from "../src/config.ts";
import { startOrka } from "../src/server.ts";

export const BENCH_ADMIN_TOKEN = "bench-admin-token-0000";

/** A temporary directory for one benchmark's server. */
export function benchDirectory(name: string): string {
  const dir = mkdtempSync(join(tmpdir(), `orka-bench-${name}-`));
  // As root, sandboxed code and coding CLIs run as nobody, which must be able to pass through to their directories.
  chmodSync(dir, 0o711);
  return dir;
}

/** The admin's REST client of the Orka server at `url`. */
export function adminClient(url: string) {
  /** Calls `/api/v1<path>` as the admin; a refusal throws with its answer, and so does no answer within 2 minutes. */
  async function api(method: string, path: string, body?: unknown): Promise<any> {
    const response = await fetch(`${url}/api/v1${path}`, {
      method,
      headers: { authorization: `Bearer ${BENCH_ADMIN_TOKEN}`, ...(body === undefined ? {} : { "content-type": "application/json" }) },
      body: body === undefined ? undefined : JSON.stringify(body),
      signal: AbortSignal.timeout(120_000),
    });
    const json = await response.json();
    if (!response.ok) throw new Error(`${method} ${path}: HTTP ${response.status} ${JSON.stringify(json)}`);
    return json;
  }
  /** Reads `/api/v1<path>` (an event stream) to its end as the admin. */
  async function stream(path: string): Promise<string> {
    const response = await fetch(`${url}/api/v1${path}`, { headers: { authorization: `Bearer ${BENCH_ADMIN_TOKEN}` } });
    return response.text();
  }
  /** Creates an ai Task and follows its event stream to the end (no polling); throws unless it Succeeded. */
  async function runTask(name: string, agent: string): Promise<void> {
    await api("POST", "/tasks", { name, type: "ai", agentRef: agent, prompt: name });
    const end = /event: stream_complete\ndata: (.*)\n/.exec(await stream(`/tasks/${name}/stream`));
    const phase = end ? JSON.parse(end[1]).type : "unknown";
    if (phase !== "Succeeded") throw new Error(`${name}: ${phase}`);
  }
  return { url, api, stream, runTask };
}

/** An embedded Orka in this process, in a temporary directory, with the admin's REST client. */
export async function startBenchServer(name: string, env: Record<string, string> = {}) {
  const dir = benchDirectory(name);
  const dataDir = join(dir, "state");
  const orka = await startOrka({
    ...serverConfigFrom({ ORKA_PORT: "0", ORKA_DATA_DIR: dataDir, ORKA_WORK_DIR: join(dir, "work"), ORKA_ADMIN_TOKEN: BENCH_ADMIN_TOKEN, ORKA_LOG_LEVEL: "silent", ...env }, dir),
    cliConfigPath: "",
  });
  return {
    ...adminClient(orka.url),
    dataDir,
    async close(): Promise<void> {
      await orka.close();
      rmSync(dir, { recursive: true, force: true });
    },
  };
}
