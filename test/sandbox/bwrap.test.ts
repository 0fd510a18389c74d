import { chmodSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { DEFAULT_LIMITS, runSandboxed } from "../../src/sandbox/bwrap.ts";

// What a sandboxed command can write outside its workspace: nothing on the root, and a private /tmp
// (held in the host's memory) only up to its limit, however many files it makes.
describe("the sandbox's own filesystems", () => {
  const workDir = mkdtempSync(join(tmpdir(), "orka-bwrap-test-"));
  // As root the command runs as nobody, which must be able to enter its workspace.
  chmodSync(workDir, 0o777);
  afterAll(() => rmSync(workDir, { recursive: true, force: true }));

  it("keeps the root read-only and a private /tmp within its size", async () => {
    const run = await runSandboxed({
      command: ["sh", "-c", "touch /pwned 2>/dev/null && echo root-writable; for i in 1 2 3 4; do head -c 3000000 /dev/zero > /tmp/fill$i 2>/dev/null; done; du -sk /tmp | cut -f1"],
      workDir,
      env: {},
      network: false,
      limits: { ...DEFAULT_LIMITS, tmpBytes: 8 * 1024 ** 2 },
      maxOutputBytes: 4096,
      signal: AbortSignal.timeout(20_000),
    });
    expect(run.stdout).not.toContain("root-writable");
    expect(Number(run.stdout.trim())).toBeGreaterThan(4_000);
    expect(Number(run.stdout.trim())).toBeLessThanOrEqual(8 * 1024);
  });
});
