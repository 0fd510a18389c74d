import { mkdtemp, readFile, rm, writeFile } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { Octokit } from "@octokit/rest";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startGitPeer, type GitPeer } from "./git-server.ts";
import { git, runGit } from "./git/run-git.ts";
import { startGithubPeer, type GithubPeer } from "./github-server.ts";

const REPO = "acme/shop";
const owner = "acme";
const repo = "shop";

// A branch a coding agent pushes over git must be the head a pull request shows, and a merge GitHub
// performs must be what the next clone sees: both peers serve one set of bare repositories.
describe("the git peer and the GitHub peer share repositories and tokens", () => {
  let gitPeer: GitPeer;
  let github: GithubPeer;
  let work: string;
  let clones = 0;

  beforeAll(async () => {
    gitPeer = await startGitPeer();
    github = await startGithubPeer({ git: gitPeer });
    work = await mkdtemp(path.join(os.tmpdir(), "orka-shared-peers-"));
    github.addToken("push-token", "orka-bot", "write", [REPO]);
    github.addToken("read-token", "reader", "read");
    await github.addRepo(REPO, { files: { "shop.txt": "v1\n" } });
  });
  afterAll(async () => {
    await github?.stop();
    await gitPeer?.close();
    await rm(work, { recursive: true, force: true });
  });

  async function clone(token: string): Promise<string> {
    const dir = path.join(work, `clone-${++clones}`);
    await git(["clone", "--quiet", `https://github.com/${REPO}`, dir], { env: gitPeer.clientEnv(token) });
    return dir;
  }

  it("serves a branch pushed over git HTTP as a pull request head, and a merge done over REST to the next clone", async () => {
    const dir = await clone("push-token");
    await writeFile(path.join(dir, "shop.txt"), "v2\n");
    await git(["commit", "--quiet", "-am", "Bump to v2"], { cwd: dir, env: gitPeer.clientEnv() });
    const pushed = await git(["rev-parse", "HEAD"], { cwd: dir });
    await git(["push", "--quiet", "origin", "HEAD:refs/heads/bump"], { cwd: dir, env: gitPeer.clientEnv("push-token") });

    const octokit = new Octokit({ baseUrl: github.baseUrl, auth: "push-token" });
    expect((await octokit.rest.git.getRef({ owner, repo, ref: "heads/bump" })).data.object.sha).toBe(pushed);
    const pull = await octokit.rest.pulls.create({ owner, repo, head: "bump", base: "main", title: "Bump" });
    expect(pull.data.head.sha).toBe(pushed);
    const diff = await octokit.rest.pulls.get({ owner, repo, pull_number: pull.data.number, mediaType: { format: "diff" } });
    expect(String(diff.data)).toContain("+v2");
    const merged = await octokit.rest.pulls.merge({ owner, repo, pull_number: pull.data.number, sha: pushed, merge_method: "merge" });

    const after = await clone("read-token");
    expect(await git(["rev-parse", "HEAD"], { cwd: after })).toBe(merged.data.sha);
    expect(await git(["rev-parse", "HEAD^2"], { cwd: after })).toBe(pushed);
    expect(await readFile(path.join(after, "shop.txt"), "utf8")).toBe("v2\n");
  });

  it("gives a token added to the GitHub peer the same permission over git, and logs it by the same name", async () => {
    const dir = await clone("read-token");
    await writeFile(path.join(dir, "shop.txt"), "v3\n");
    await git(["commit", "--quiet", "-am", "Bump to v3"], { cwd: dir, env: gitPeer.clientEnv() });
    const mark = gitPeer.requests.length;
    const refused = await runGit(["push", "--quiet", "origin", "HEAD:refs/heads/sneaky"], { cwd: dir, env: gitPeer.clientEnv("read-token") });
    expect(refused.code).not.toBe(0);
    expect(gitPeer.requests.slice(mark).some((r) => r.identity === "reader" && r.status === 403)).toBe(true);
    expect(await github.head(REPO, "sneaky")).toBeUndefined();
    // The push token reaches only the repository it was granted, over git as over REST.
    await github.addRepo("acme/other");
    const other = await runGit(["clone", "--quiet", "https://github.com/acme/other", path.join(work, "other")], { env: gitPeer.clientEnv("push-token") });
    expect(other.code).not.toBe(0);
  });

  it("adopts a repository first created on the git peer, keeping its history", async () => {
    await gitPeer.createRepo("acme/legacy", { files: { "old.txt": "old\n" } });
    const before = await gitPeer.refSha("acme/legacy", "main");
    await github.addRepo("acme/legacy");
    expect(await github.head("acme/legacy", "main")).toBe(before);
    const moved = await github.commit("acme/legacy", "main", { "new.txt": "new\n" });
    expect(await gitPeer.refSha("acme/legacy", "main")).toBe(moved);
  });
});
