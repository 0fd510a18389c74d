import { spawn } from "node:child_process";
import { chmodSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it, vi } from "vitest";
import { findBwrap } from "../../src/sandbox/bwrap.ts";
import { killMarked, processesMarked } from "../helpers/processes.ts";

const BWRAP_MODULE = join(import.meta.dirname, "../../src/sandbox/bwrap.ts");

/** A Node process that starts a sandbox running `sleep mark`, then exits after `exitAfterMs` (0: in the same turn). */
function startAndExit(workDir: string, mark: string, exitAfterMs: number) {
  const script = `
    const { spawnSandboxed, DEFAULT_LIMITS } = await import(${JSON.stringify(BWRAP_MODULE)});
    spawnSandboxed({ command: ["sleep", ${JSON.stringify(mark)}], workDir: ${JSON.stringify(workDir)}, env: {}, network: false, limits: DEFAULT_LIMITS });
    setTimeout(() => process.exit(0), ${exitAfterMs});`;
  const child = spawn(process.execPath, ["--input-type=module", "-e", script], { stdio: "ignore" });
  return new Promise<number | null>((resolve) => child.on("exit", resolve));
}

// bubblewrap's --die-with-parent does not hold while a sandbox is being set up, nor always after: the
// process that started a sandbox kills it itself when it exits.
describe.skipIf(!findBwrap())("a sandbox's lifetime", () => {
  const workDir = mkdtempSync(join(tmpdir(), "orka-sandbox-lifetime-"));
  // As root the command runs as nobody, which must be able to enter its workspace.
  chmodSync(workDir, 0o777);
  const marks: string[] = [];
  afterAll(() => {
    killMarked(marks);
    rmSync(workDir, { recursive: true, force: true });
  });

  it("ends with the process that started it, whether that exits during the setup or after", async () => {
    for (const [round, exitAfterMs] of [0, 1, 3, 10, 30, 300, 0, 3].entries()) {
      const mark = `${process.pid}${round}.75`;
      marks.push(mark);
      expect(await startAndExit(workDir, mark, exitAfterMs)).toBe(0);
      await vi.waitFor(() => expect(processesMarked(mark)).toEqual([]), { timeout: 3_000, interval: 50 });
    }
  });
});
