import { execFile } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { promisify } from "node:util";
import { expect, it } from "vitest";

// The README's first command, as a new user runs it (on a free port and a temp data dir).
it("npm run demo runs the quickstart end to end", async () => {
  const dir = mkdtempSync(join(tmpdir(), "orka-demo-"));
  try {
    const { stdout } = await promisify(execFile)(process.execPath, [resolve(import.meta.dirname, "../../scripts/demo.ts"), "--once"], {
      env: { ...process.env, ORKA_PORT: "0", ORKA_DATA_DIR: dir, ORKA_CLI_CONFIG: join(dir, "cli.yaml") },
      timeout: 60_000,
    });
    expect(stdout).toContain("task/hello: Succeeded");
    expect(stdout).toContain(`result: The Orka server's health check answered: {"status":"ok"}. Hello from your first Orka Task!`);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});
