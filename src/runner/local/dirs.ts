import { chmod, chown, mkdir, rm, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { SANDBOX_UID } from "../../sandbox/bwrap.ts";
import type { AttemptDirs, AttemptFiles } from "../runner.ts";

/** Sandboxed code runs as nobody when Orka runs as root: what it must reach is handed to that user. */
const runsAsRoot = () => process.getuid?.() === 0;

/**
 * Creates an attempt's workspace, artifacts and tmp directories, reachable by the sandbox user,
 * and writes its files beside them.
 */
export async function prepareAttemptDirs(attemptsDir: string, attemptId: string, files: AttemptFiles = {}): Promise<AttemptDirs> {
  // Traversable but not listable: one attempt cannot discover another's directory name.
  await mkdir(attemptsDir, { recursive: true, mode: 0o711 });
  await chmod(attemptsDir, 0o711);
  const root = join(attemptsDir, attemptId);
  const dirs = { workspaceDir: join(root, "workspace"), artifactsDir: join(root, "artifacts"), tmpDir: join(root, "tmp") };
  for (const dir of Object.values(dirs)) {
    await mkdir(dir, { recursive: true, mode: 0o755 });
    if (runsAsRoot()) await chown(dir, SANDBOX_UID, SANDBOX_UID);
  }
  if (files.transactionToken === undefined) return dirs;
  return { ...dirs, transactionTokenFile: await writeReadOnly(join(root, "transaction-token"), files.transactionToken) };
}

/** A file readable by the attempt alone. */
async function writeReadOnly(file: string, content: string): Promise<string> {
  await rm(file, { force: true }); // a resumed attempt's directories may hold a read-only copy
  await writeFile(file, content, { mode: 0o400 });
  if (runsAsRoot()) await chown(file, SANDBOX_UID, SANDBOX_UID);
  return file;
}
