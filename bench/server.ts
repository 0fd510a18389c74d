import { chmodSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { serverConfigFrom } from "../src/config.ts";
import { startOrka } from "../src/server.ts";

const ADMIN_TOKEN = "bench-admin-token-0000";

/** An embedded Orka in this process, in a temporary directory, with the admin's REST client. */
export async function startBenchServer(name: string, env: Record<string, string> = {}) {
  const dir = mkdtempSync(join(tmpdir(), `orka-bench-${name}-`));
  // As root, sandboxed code and coding CLIs run as nobody, which must be able to pass through to their directories.
  chmodSync(dir, 0o711);
  const dataDir = join(dir, "state");
  const orka = await startOrka({
    ...serverConfigFrom({ ORKA_PORT: "0", ORKA_DATA_DIR: dataDir, ORKA_WORK_DIR: join(dir, "work"), ORKA_ADMIN_TOKEN: ADMIN_TOKEN, ORKA_LOG_LEVEL: "silent", ...env }, dir),
    cliConfigPath: "",
  });
  return {
    url: orka.url,
    dataDir,
    /** Calls `/api/v1<path>` as the admin; a refusal throws with its answer. */
    async api(method: string, path: string, body?: unknown): Promise<any> {
      const response = await fetch(`${orka.url}/api/v1${path}`, {
        method,
        headers: { authorization: `Bearer ${ADMIN_TOKEN}`, ...(body === undefined ? {} : { "content-type": "application/json" }) },
        body: body === undefined ? undefined : JSON.stringify(body),
      });
      const json = await response.json();
      if (!response.ok) throw new Error(`${method} ${path}: HTTP ${response.status} ${JSON.stringify(json)}`);
      return json;
    },
    /** Reads `/api/v1<path>` (an event stream) to its end as the admin. */
    async stream(path: string): Promise<string> {
      const response = await fetch(`${orka.url}/api/v1${path}`, { headers: { authorization: `Bearer ${ADMIN_TOKEN}` } });
      return response.text();
    },
    async close(): Promise<void> {
      await orka.close();
      rmSync(dir, { recursive: true, force: true });
    },
  };
}
