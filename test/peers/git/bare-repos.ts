// The git peer's repositories on disk: bare repositories under one root, created, read and changed
// server-side with git plumbing (as if someone else had pushed), never through the HTTP front.
import { mkdtemp, rm } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { OrkaError } from "../../../src/util/errors.ts";
import { git, isolatedGitEnv, runGit } from "./run-git.ts";

export interface SeedOptions {
  /** Files of the first commit on `branch`; with none, the repository starts empty. */
  files?: Record<string, string>;
  branch?: string;
  message?: string;
}

export interface CommitOptions {
  files: Record<string, string>;
  message?: string;
  /**
   * The commit to build on; by default the branch's head (or nothing on a new branch). Naming an
   * older commit rewrites the branch's history, as a force-push by someone else does.
   */
  parent?: string | null;
}

const REPOSITORY_NAME = /^[A-Za-z0-9._-]+\/[A-Za-z0-9._-]+$/;

export class BareRepositories {
  readonly root: string;

  private constructor(root: string) {
    this.root = root;
  }

  static async create(): Promise<BareRepositories> {
    return new BareRepositories(await mkdtemp(path.join(os.tmpdir(), "orka-git-peer-")));
  }

  /** Where `owner/repo` lives on disk; the same name with or without `.git`, in any case. */
  dirOf(fullName: string): string {
    const name = fullName.replace(/\.git$/, "").toLowerCase();
    if (!REPOSITORY_NAME.test(name) || name.split("/").some((part) => part === "." || part === "..")) {
      throw new OrkaError("invalid_argument", `"${fullName}" is not an owner/repo name`);
    }
    return path.join(this.root, `${name}.git`);
  }

  async exists(fullName: string): Promise<boolean> {
    return (await runGit(["rev-parse", "--is-bare-repository"], { cwd: this.dirOf(fullName), env: isolatedGitEnv() })).stdout.trim() === "true";
  }

  async createRepo(fullName: string, seed: SeedOptions = {}): Promise<void> {
    const dir = this.dirOf(fullName);
    const branch = seed.branch ?? "main";
    await git(["init", "--bare", "--quiet", `--initial-branch=${branch}`, dir], { env: isolatedGitEnv() });
    if (seed.files) await this.commit(fullName, branch, { files: seed.files, message: seed.message ?? "Initial commit" });
  }

  /** The commit a ref (`main`, `refs/heads/main`, a tag) points at, or undefined when it does not exist. */
  async refSha(fullName: string, ref: string): Promise<string | undefined> {
    const run = await runGit(["rev-parse", "--verify", "--quiet", `${ref}^{commit}`], { cwd: this.dirOf(fullName), env: isolatedGitEnv() });
    return run.code === 0 ? run.stdout.trim() : undefined;
  }

  /** Adds a commit writing `files` on `branch` and moves the branch to it; returns the new commit. */
  async commit(fullName: string, branch: string, options: CommitOptions): Promise<string> {
    const dir = this.dirOf(fullName);
    const parent = options.parent === undefined ? await this.refSha(fullName, `refs/heads/${branch}`) : (options.parent ?? undefined);
    const indexDir = await mkdtemp(path.join(os.tmpdir(), "orka-git-index-"));
    try {
      const env = isolatedGitEnv({ GIT_INDEX_FILE: path.join(indexDir, "index") });
      const run = (args: string[], input?: string) => git(args, { cwd: dir, env, input });
      if (parent) await run(["read-tree", parent]);
      for (const [file, content] of Object.entries(options.files)) {
        const blob = await run(["hash-object", "-w", "--stdin"], content);
        await run(["update-index", "--add", "--cacheinfo", `100644,${blob},${file}`]);
      }
      const tree = await run(["write-tree"]);
      const commit = await run(["commit-tree", tree, ...(parent ? ["-p", parent] : []), "-m", options.message ?? `Change ${Object.keys(options.files).join(", ")}`]);
      await run(["update-ref", `refs/heads/${branch}`, commit]);
      return commit;
    } finally {
      await rm(indexDir, { recursive: true, force: true });
    }
  }

  async remove(): Promise<void> {
    await rm(this.root, { recursive: true, force: true });
  }
}
