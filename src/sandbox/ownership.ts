import { lchown, readdir } from "node:fs/promises";
import { join } from "node:path";
import { SANDBOX_UID } from "./bwrap.ts";

/** Sandboxed code runs as nobody when Orka runs as root: what it must reach is handed to that user. */
export const runsAsRoot = () => process.getuid?.() === 0;

/** Gives `dir` and everything under it (symbolic links themselves, not their targets) to the sandbox user, when Orka runs as root. */
export async function handToSandboxUser(dir: string): Promise<void> {
  if (!runsAsRoot()) return;
  await lchown(dir, SANDBOX_UID, SANDBOX_UID);
  for (const entry of await readdir(dir, { recursive: true })) await lchown(join(dir, entry), SANDBOX_UID, SANDBOX_UID);
}
