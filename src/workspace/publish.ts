import { credentialRefused, lastLines, runGit, type GitDirs, type GitSettings } from "./git.ts";
import type { Remote } from "./remote.ts";

export type PushOutcome = { pushed: true } | { pushed: false; credentialRefused: boolean; reason: string };

/**
 * Pushes `commit` to `branch` as a compare-and-swap: the remote must still hold `before` (no branch
 * when undefined), or git refuses and nothing changes.
 */
export async function pushLeased(settings: GitSettings, dirs: GitDirs, remote: Remote, commit: string, branch: string, before: string | undefined): Promise<PushOutcome> {
  const ref = `refs/heads/${branch}`;
  const run = await runGit(settings, ["push", "--porcelain", "--no-verify", `--force-with-lease=${ref}:${before ?? ""}`, remote.url, `${commit}:${ref}`], {
    dirs,
    credential: remote.credential,
  });
  if (run.code === 0) return { pushed: true };
  return { pushed: false, credentialRefused: credentialRefused(run.stderr), reason: lastLines(`${run.stdout}\n${run.stderr}`) };
}
