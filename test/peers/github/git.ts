// Real bare repositories behind the GitHub peer: heads, diffs, files and merges come from git itself.
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { gitOutput, isolatedGitEnv } from "../git/run-git.ts";

export interface FileChange {
  filename: string;
  status: "added" | "removed" | "modified" | "renamed";
  additions: number;
  deletions: number;
  patch: string;
  /** The blob SHA of the file at head (at base when removed). */
  sha: string;
}

export interface CommitInfo {
  sha: string;
  tree: string;
  parents: string[];
  author: { name: string; email: string; date: string };
  message: string;
}

export class BareRepo {
  readonly dir: string;

  constructor(dir: string) {
    this.dir = dir;
  }

  /** Initialises a bare repository at `dir`, or adopts the one already there (`git init` keeps its refs). */
  static async create(dir: string, defaultBranch: string): Promise<BareRepo> {
    await gitOutput(["init", "--bare", "--quiet", `--initial-branch=${defaultBranch}`, dir], { env: isolatedGitEnv() });
    return new BareRepo(dir);
  }

  async git(args: string[], env: Record<string, string> = {}, input?: string): Promise<string> {
    return gitOutput(["--git-dir", this.dir, ...args], { env: isolatedGitEnv(env), input });
  }

  async head(branch: string): Promise<string | undefined> {
    try {
      return (await this.git(["rev-parse", "--verify", "--quiet", `refs/heads/${branch}^{commit}`])).trim();
    } catch {
      return undefined;
    }
  }

  /** Commits `files` (a null content deletes the file) on top of `branch`, creating it from `from` if new. */
  async commit(branch: string, files: Record<string, string | null>, message: string, from?: string): Promise<string> {
    const parent = (await this.head(branch)) ?? (from ? await this.head(from) : undefined);
    const scratch = await mkdtemp(path.join(tmpdir(), "gh-peer-index-"));
    const env = { GIT_INDEX_FILE: path.join(scratch, "index") };
    try {
      await this.git(parent ? ["read-tree", parent] : ["read-tree", "--empty"], env);
      for (const [name, content] of Object.entries(files)) {
        if (content === null) {
          await this.git(["update-index", "--force-remove", name], env);
        } else {
          const blob = (await this.git(["hash-object", "-w", "--stdin"], {}, content)).trim();
          await this.git(["update-index", "--add", "--cacheinfo", `100644,${blob},${name}`], env);
        }
      }
      const tree = (await this.git(["write-tree"], env)).trim();
      return await this.commitTree(branch, tree, parent ? [parent] : [], message);
    } finally {
      await rm(scratch, { recursive: true, force: true });
    }
  }

  async commitTree(branch: string, tree: string, parents: string[], message: string): Promise<string> {
    const sha = await this.commitObject(tree, parents, message);
    await this.setHead(branch, sha);
    return sha;
  }

  /** A commit object of `tree` on `parents`, on no branch yet. */
  async commitObject(tree: string, parents: string[], message: string): Promise<string> {
    const parentArgs = parents.flatMap((p) => ["-p", p]);
    return (await this.git(["commit-tree", tree, ...parentArgs, "-m", message])).trim();
  }

  /** Points `branch` at `sha` unconditionally, as a force-push does. */
  async setHead(branch: string, sha: string): Promise<void> {
    await this.git(["update-ref", `refs/heads/${branch}`, sha]);
  }

  diff(base: string, head: string, file?: string): Promise<string> {
    return this.git(["diff", `${base}...${head}`, ...(file ? ["--", file] : [])]);
  }

  async files(base: string, head: string): Promise<FileChange[]> {
    const numstat = await this.git(["diff", "--numstat", "--no-renames", `${base}...${head}`]);
    const raw = await this.git(["diff", "--raw", "--no-abbrev", "--no-renames", `${base}...${head}`]);
    // A raw line reads ":<old mode> <new mode> <old blob> <new blob> <status>\t<path>".
    const rawOf = new Map(
      raw.trim().split("\n").filter(Boolean).map((line) => {
        const [meta, filename] = line.split("\t") as [string, string];
        const [, , oldBlob, newBlob, letter] = meta.split(" ") as [string, string, string, string, string];
        return [filename, { letter, blob: letter === "D" ? oldBlob : newBlob }];
      }),
    );
    const rows = numstat.trim().split("\n").filter(Boolean);
    return Promise.all(
      rows.map(async (row) => {
        const [added, deleted, filename] = row.split("\t") as [string, string, string];
        const { letter, blob } = rawOf.get(filename) ?? { letter: "M", blob: "" };
        const patch = await this.diff(base, head, filename);
        return {
          filename,
          status: letter === "A" ? "added" : letter === "D" ? "removed" : "modified",
          additions: Number(added) || 0,
          deletions: Number(deleted) || 0,
          patch: patch.slice(patch.indexOf("@@")),
          sha: blob,
        };
      }),
    );
  }

  /** The tree of merging `head` into `base`, or undefined when they conflict. */
  async mergeTree(base: string, head: string): Promise<string | undefined> {
    try {
      return (await this.git(["merge-tree", "--write-tree", base, head])).split("\n")[0]?.trim();
    } catch {
      return undefined;
    }
  }

  /** Replays the commits of `head` onto `base` in a scratch worktree (a real `git rebase`); the new tip. */
  async rebase(base: string, head: string): Promise<string | undefined> {
    const scratch = await mkdtemp(path.join(tmpdir(), "gh-peer-rebase-"));
    const worktree = path.join(scratch, "tree");
    try {
      await this.git(["worktree", "add", "--quiet", "--detach", worktree, head]);
      await gitOutput(["-C", worktree, "rebase", "--quiet", "--force-rebase", base], { env: isolatedGitEnv() });
      return (await gitOutput(["-C", worktree, "rev-parse", "HEAD"], { env: isolatedGitEnv() })).trim();
    } catch {
      return undefined;
    } finally {
      await this.git(["worktree", "remove", "--force", worktree]).catch(() => undefined);
      await rm(scratch, { recursive: true, force: true });
    }
  }

  async mergeBase(a: string, b: string): Promise<string> {
    return (await this.git(["merge-base", a, b])).trim();
  }

  /** The commits of `range` ("a..b"), oldest first. */
  async log(range: string, limit = 250): Promise<CommitInfo[]> {
    const out = await this.git(["log", "--reverse", `--max-count=${limit}`, "--format=%H%x00%T%x00%P%x00%an%x00%ae%x00%aI%x00%B%x1e", range]);
    return out.split("\x1e").map((r) => r.replace(/^\n/, "")).filter(Boolean).map((record) => {
      const [sha, tree, parents, name, email, date, message] = record.split("\0") as string[];
      return { sha: sha!, tree: tree!, parents: parents ? parents.split(" ") : [], author: { name: name!, email: email!, date: date! }, message: message!.trimEnd() };
    });
  }

  async count(range: string): Promise<number> {
    return Number((await this.git(["rev-list", "--count", range])).trim());
  }
}
