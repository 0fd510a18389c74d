import { chownSync, mkdirSync } from "node:fs";
import { SANDBOX_UID } from "../sandbox/bwrap.ts";
import { runsAsRoot } from "../sandbox/ownership.ts";
import type { AttemptDirs } from "./runner.ts";

/**
 * Makes an attempt's directories, reachable by the sandbox user; those already there are kept. A few
 * metadata calls, made at once: through the thread pool they would queue behind other attempts' file
 * work (a finished attempt's removal) on the way to the attempt's first model request.
 */
export function makeAttemptDirs(dirs: Pick<AttemptDirs, "workspaceDir" | "artifactsDir" | "tmpDir">): void {
  for (const dir of [dirs.workspaceDir, dirs.artifactsDir, dirs.tmpDir]) {
    mkdirSync(dir, { recursive: true, mode: 0o755 });
    if (runsAsRoot()) chownSync(dir, SANDBOX_UID, SANDBOX_UID);
  }
}
