import { chmodSync, mkdirSync } from "node:fs";
import { chown, mkdir, mkdtemp, rm, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { SANDBOX_UID } from "../../sandbox/bwrap.ts";
import { handToSandboxUser, runsAsRoot } from "../../sandbox/ownership.ts";
import { checkOut, isCheckedOut, type CheckoutPlan } from "../../workspace/checkout.ts";
import { DEFAULT_GIT_SETTINGS, type GitDirs, type GitSettings } from "../../workspace/git.ts";
import { makeAttemptDirs } from "../attempt-dirs.ts";
import type { AttemptDirs, AttemptFiles } from "../runner.ts";

/**
 * Names an attempt's workspace, artifacts and tmp directories and writes its files beside them. Without
 * files the directories are made by the worker that runs the attempt (`makeAttemptDirs`: when it starts,
 * or for an ai attempt before its first built-in tool runs), off the control plane's thread; with files
 * they are made here first.
 */
export async function prepareAttemptDirs(attemptsDir: string, attemptId: string, files: AttemptFiles = {}, git: GitSettings = DEFAULT_GIT_SETTINGS): Promise<AttemptDirs> {
  ensureAttemptsDir(attemptsDir);
  const root = join(attemptsDir, attemptId);
  const dirs = { workspaceDir: join(root, "workspace"), artifactsDir: join(root, "artifacts"), tmpDir: join(root, "tmp") };
  if (!files.checkout && files.transactionToken === undefined) return dirs;
  makeAttemptDirs(dirs);
  if (files.checkout) await checkOutOnce(git, attemptGitDirs(attemptsDir, attemptId), files.checkout);
  if (files.transactionToken === undefined) return dirs;
  return { ...dirs, transactionTokenFile: await writeReadOnly(join(root, "transaction-token"), files.transactionToken) };
}

const readyAttemptsDirs = new Set<string>();

/**
 * Traversable but not listable: one attempt cannot discover another's directory name. A directory made
 * here gets that mode; one that was there already is set to it once per process.
 */
function ensureAttemptsDir(attemptsDir: string): void {
  mkdirSync(attemptsDir, { recursive: true, mode: 0o711 });
  if (readyAttemptsDirs.has(attemptsDir)) return;
  chmodSync(attemptsDir, 0o711);
  readyAttemptsDirs.add(attemptsDir);
}

/** A file readable by the attempt alone. */
async function writeReadOnly(file: string, content: string): Promise<string> {
  await rm(file, { force: true }); // a resumed attempt's directories may hold a read-only copy
  await writeFile(file, content, { mode: 0o400 });
  if (runsAsRoot()) await chown(file, SANDBOX_UID, SANDBOX_UID);
  return file;
}

/** The attempt's workspace, and the git directory Orka keeps for it outside what the sandbox sees. */
export function attemptGitDirs(attemptsDir: string, attemptId: string): GitDirs {
  const root = join(attemptsDir, attemptId);
  return { workTree: join(root, "workspace"), gitDir: join(root, "git") };
}

/** A resumed attempt's workspace holds its run's work already: it is never checked out again. */
async function checkOutOnce(git: GitSettings, dirs: GitDirs, plan: CheckoutPlan): Promise<void> {
  if (await isCheckedOut(dirs)) return;
  await checkOut(git, dirs, plan);
  await handToSandboxUser(dirs.workTree);
}

/**
 * A commit checked out in a directory of its own under the attempt's (`checkouts/`), for the worker to
 * read; nothing sandboxed is pointed at it. A checkout that fails leaves nothing behind.
 */
export async function checkOutBeside(attemptsDir: string, attemptId: string, plan: CheckoutPlan, git: GitSettings): Promise<string> {
  const parent = join(attemptsDir, attemptId, "checkouts");
  await mkdir(parent, { recursive: true, mode: 0o700 });
  const root = await mkdtemp(join(parent, `${plan.baseSHA.slice(0, 12)}-`));
  const dirs = { workTree: join(root, "tree"), gitDir: join(root, "git") };
  try {
    await mkdir(dirs.workTree);
    await checkOut(git, dirs, plan);
    return dirs.workTree;
  } catch (err) {
    await rm(root, { recursive: true, force: true });
    throw err;
  }
}
