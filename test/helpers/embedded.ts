import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { serverConfigFrom } from "../../src/config.ts";
import { startOrka, type RunningOrka } from "../../src/server.ts";

export const EMBEDDED_ADMIN_TOKEN = "embedded-admin-token-123";

/** Orka in the test process (for tests that must reach the stores directly); close() removes its data. */
export async function startEmbeddedOrka(overrides: { workerSlots?: number } = {}, env: Record<string, string> = {}): Promise<RunningOrka> {
  const dir = mkdtempSync(join(tmpdir(), "orka-embedded-"));
  const orka = await startOrka({
    ...serverConfigFrom({ ORKA_PORT: "0", ORKA_DATA_DIR: join(dir, "state"), ORKA_ADMIN_TOKEN: EMBEDDED_ADMIN_TOKEN, ORKA_LOG_LEVEL: "warn", ...env }, dir),
    workerProcesses: 1,
    cliConfigPath: "",
    ...overrides,
  });
  return {
    ...orka,
    async close() {
      await orka.close();
      rmSync(dir, { recursive: true, force: true });
    },
  };
}
