import { chmod, chown, mkdir } from "node:fs/promises";
import { join } from "node:path";
import { SANDBOX_UID } from "../../sandbox/bwrap.ts";
import type { AttemptDirs } from "../runner.ts";

/** Creates an attempt's workspace, artifacts and tmp directories, reachable by the sandbox user. */
export async function prepareAttemptDirs(attemptsDir: string, attemptId: string): Promise<AttemptDirs> {
  // Traversable but not listable: one attempt cannot discover another's directory name.
  await mkdir(attemptsDir, { recursive: true, mode: 0o711 });
  await chmod(attemptsDir, 0o711);
  const root = join(attemptsDir, attemptId);
  const dirs = { workspaceDir: join(root, "workspace"), artifactsDir: join(root, "artifacts"), tmpDir: join(root, "tmp") };
  for (const dir of Object.values(dirs)) {
    await mkdir(dir, { recursive: true, mode: 0o755 });
    // Sandboxed code runs as nobody when Orka runs as root; it must still write these.
    if (process.getuid?.() === 0) await chown(dir, SANDBOX_UID, SANDBOX_UID);
  }
  return dirs;
}
