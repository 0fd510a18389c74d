import { mkdir, readdir, writeFile, rm } from "node:fs/promises";
import { join } from "node:path";
import { OrkaError } from "../util/errors.ts";
import { gitOutput, lastLines, runGit, type GitDirs, type GitSettings } from "./git.ts";
import type { Remote } from "./remote.ts";

/** What an attempt's workspace starts as: a repository at a frozen commit, maybe with a prior Task's change on top. */
export interface CheckoutPlan {
  remote: Remote;
  baseSHA: string;
  /** The branch to have checked out at `baseSHA`; without one the commit is checked out detached. */
  branch?: string;
  /** A prior Task's cumulative diff to apply before the model runs (prior_task). */
  priorChange?: { task: string; diff: string };
}

/**
 * Fills an empty workspace from its plan. The repository's git directory is Orka's, beside the
 * workspace and not in it: what the model writes cannot configure the git Orka later runs there.
 */
export async function checkOut(settings: GitSettings, dirs: GitDirs, plan: CheckoutPlan): Promise<void> {
  await mkdir(dirs.gitDir, { recursive: true, mode: 0o700 });
  await gitOutput(settings, ["init", "-q"], { dirs });
  await fetchCommit(settings, dirs, plan);
  await gitOutput(settings, plan.branch ? ["checkout", "-q", "-B", plan.branch, plan.baseSHA] : ["checkout", "-q", "--detach", plan.baseSHA], { dirs });
  if (plan.priorChange?.diff) await applyPriorChange(settings, dirs, plan.priorChange);
}

/** The frozen commit by its id; a server that does not serve unadvertised commits gets a fetch of its branches and tags. */
async function fetchCommit(settings: GitSettings, dirs: GitDirs, plan: CheckoutPlan): Promise<void> {
  const call = { dirs, credential: plan.remote.credential };
  const exact = await runGit(settings, ["fetch", "-q", "--no-tags", plan.remote.url, plan.baseSHA], call);
  if (exact.code === 0) return;
  const all = await runGit(settings, ["fetch", "-q", plan.remote.url, "+refs/heads/*:refs/remotes/origin/*", "+refs/tags/*:refs/tags/*"], call);
  const found = all.code === 0 && (await runGit(settings, ["cat-file", "-e", `${plan.baseSHA}^{commit}`], { dirs })).code === 0;
  if (!found) throw new OrkaError("failed_precondition", `could not clone ${plan.remote.url} at ${plan.baseSHA}: ${lastLines(all.code === 0 ? exact.stderr : all.stderr)}`);
}

/** Whether a workspace was checked out already (a resumed attempt keeps it). */
export async function isCheckedOut(dirs: GitDirs): Promise<boolean> {
  const entries: string[] = await readdir(dirs.gitDir).catch(() => []);
  return entries.includes("HEAD");
}

/** A prior Task's diff, applied once: an already-applied one (it reverses cleanly) is left alone; one that does not apply fails. */
async function applyPriorChange(settings: GitSettings, dirs: GitDirs, change: { task: string; diff: string }): Promise<void> {
  const patch = join(dirs.gitDir, "prior-change.patch");
  await writeFile(patch, change.diff);
  try {
    const check = await runGit(settings, ["apply", "--check", "--binary", patch], { dirs });
    if (check.code === 0) return void (await gitOutput(settings, ["apply", "--binary", patch], { dirs }));
    const applied = await runGit(settings, ["apply", "--check", "--reverse", "--binary", patch], { dirs });
    if (applied.code === 0) return;
    throw new OrkaError("failed_precondition", `the change of prior task "${change.task}" does not apply onto this checkout: ${lastLines(check.stderr)}`);
  } finally {
    await rm(patch, { force: true });
  }
}
