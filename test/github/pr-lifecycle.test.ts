import { mkdtemp, rm, writeFile } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { Octokit } from "@octokit/rest";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { openVerifiedPullRequest, verifiedPublication } from "../../src/github/create-pull-request.ts";
import { autoMergePoll, mergeRequest, mergeWhenGreen } from "../../src/github/merge.ts";
import { checkPullRequestCiOnce } from "../../src/github/pull-request-ci.ts";
import { postReview, reviewRequest } from "../../src/github/review-comment.ts";
import { autoMergeTimeout, ciWait } from "../../src/github/waits.ts";
import type { Delivery, Task } from "../../src/resources/task.ts";
import { startGitPeer, type GitPeer } from "../peers/git-server.ts";
import { git } from "../peers/git/run-git.ts";
import { startGithubPeer, type GithubPeer } from "../peers/github-server.ts";

const REPO = "acme/app";
const repoName = { owner: "acme", repo: "app" };

/** A Task as the publisher leaves it: a write workspace on REPO and the receipt it wrote. */
function taskWith(delivery: Partial<Delivery> | undefined, workspace: Record<string, string> = {}): Task {
  return {
    apiVersion: "core.orka.ai/v1alpha1",
    kind: "Task",
    metadata: { name: "coder", namespace: "default" },
    spec: { type: "ai", prompt: "code", workspace: { gitRepo: `https://github.com/${REPO}`, intent: "write", ...workspace } },
    status: delivery ? { delivery: { state: "VerifiedExact", ...delivery } as Delivery } : {},
  } as Task;
}

describe("the pull request lifecycle against the GitHub peer, on repositories the git peer serves", () => {
  let gitPeer: GitPeer;
  let github: GithubPeer;
  let octokit: Octokit;
  let work: string;
  let branches = 0;

  beforeAll(async () => {
    gitPeer = await startGitPeer();
    github = await startGithubPeer({ git: gitPeer });
    github.addToken("forge-token", "orka-bot", "write", [REPO]);
    await github.addRepo(REPO, { files: { "app.txt": "one\ntwo\nthree\n" } });
    octokit = new Octokit({ baseUrl: github.baseUrl, auth: "forge-token" });
    work = await mkdtemp(path.join(os.tmpdir(), "orka-pr-lifecycle-"));
  });
  afterAll(async () => {
    await github?.stop();
    await gitPeer?.close();
    await rm(work, { recursive: true, force: true });
  });

  /** Clones, changes a file and pushes a new branch over git, as a publisher does; returns branch and commit. */
  async function pushBranch(content = `change ${branches}\n`): Promise<{ branch: string; sha: string }> {
    const branch = `work-${++branches}`;
    const dir = path.join(work, branch);
    await git(["clone", "--quiet", `https://github.com/${REPO}`, dir], { env: gitPeer.clientEnv("forge-token") });
    await writeFile(path.join(dir, `${branch}.txt`), content);
    await git(["add", "."], { cwd: dir });
    await git(["commit", "--quiet", "-m", `Work on ${branch}`], { cwd: dir, env: gitPeer.clientEnv() });
    await git(["push", "--quiet", "origin", `HEAD:refs/heads/${branch}`], { cwd: dir, env: gitPeer.clientEnv("forge-token") });
    return { branch, sha: await git(["rev-parse", "HEAD"], { cwd: dir }) };
  }

  const receipt = (branch: string, sha: string): Partial<Delivery> => ({
    outcome: "VerifiedExact", publicationID: "pub-1", publicationRepository: `https://github.com/${REPO}`, branch,
    expectedCommitSHA: sha, verifiedRemoteSHA: sha, artifactDigest: "sha256:abc",
  });

  async function openPull(content?: string): Promise<{ number: number; branch: string; sha: string }> {
    const { branch, sha } = await pushBranch(content);
    const text = { headBranch: branch, baseBranch: "main", title: `PR for ${branch}` };
    const opened = await openVerifiedPullRequest(octokit, repoName, verifiedPublication(taskWith(receipt(branch, sha)), branch), text);
    return { number: opened.pr_number, branch, sha };
  }

  const requestsSince = (mark: number) => github.log.slice(mark).map((e) => `${e.method} ${decodeURIComponent(e.path.split("?")[0]!)}`);

  describe("create_pull_request", () => {
    it("opens a pull request for a verified push, and answers a repeat with the same one", async () => {
      const { branch, sha } = await pushBranch();
      const publication = verifiedPublication(taskWith(receipt(branch, sha)), `refs/heads/${branch}`);
      const text = { headBranch: branch, baseBranch: "main", title: "Verified work", body: "From a receipt" };
      const created = await openVerifiedPullRequest(octokit, repoName, publication, text);
      expect(created).toMatchObject({ status: "created", pr_url: `https://github.com/${REPO}/pull/${created.pr_number}` });
      expect(github.pullRequest(REPO, created.pr_number)).toMatchObject({ title: "Verified work", body: "From a receipt", pull: { head: branch, base: "main" } });
      const again = await openVerifiedPullRequest(octokit, repoName, publication, text);
      expect(again).toEqual({ ...created, status: "existing" });
    });

    it("returns a receipt's pull request without calling GitHub", async () => {
      const { branch, sha } = await pushBranch();
      const task = taskWith({ ...receipt(branch, sha), prReceipt: { number: 7, url: "https://github.com/acme/app/pull/7", state: "open", headSHA: sha } });
      const mark = github.log.length;
      expect(await openVerifiedPullRequest(octokit, repoName, verifiedPublication(task, branch), { headBranch: branch, baseBranch: "main", title: "x" })).toEqual({
        pr_url: "https://github.com/acme/app/pull/7", pr_number: 7, status: "existing",
      });
      expect(github.log.length).toBe(mark);
    });

    it("refuses a branch that moved since it was verified, and one that was deleted, without opening anything", async () => {
      const { branch, sha } = await pushBranch();
      await github.commit(REPO, branch, { "later.txt": "pushed after verification\n" });
      const mark = github.log.length;
      const text = { headBranch: branch, baseBranch: "main", title: "x" };
      await expect(openVerifiedPullRequest(octokit, repoName, verifiedPublication(taskWith(receipt(branch, sha)), branch), text)).rejects.toThrow(
        "publication branch moved since verified delivery",
      );
      expect(requestsSince(mark)).toEqual([`GET /repos/acme/app/git/ref/heads/${branch}`]);
      const gone = verifiedPublication(taskWith(receipt("never-pushed", sha)), "never-pushed");
      await expect(openVerifiedPullRequest(octokit, repoName, gone, { ...text, headBranch: "never-pushed" })).rejects.toThrow("publication branch moved since verified delivery");
      expect(requestsSince(mark).filter((r) => r.startsWith("POST"))).toEqual([]);
    });

    it("names the head by owner when the publication repository is not the source", async () => {
      await github.addRepo("fork/app");
      github.addToken("fork-token", "forker", "write", ["fork/app", REPO]);
      const sha = await github.commit("fork/app", "topic", { "f.txt": "from the fork\n" });
      const task = taskWith({ ...receipt("topic", sha), publicationRepository: "https://github.com/fork/app" }, { publicationGitRepo: "https://github.com/fork/app" });
      const mark = github.log.length;
      // The peer serves no cross-repository pull requests: what matters is what was asked.
      await openVerifiedPullRequest(new Octokit({ baseUrl: github.baseUrl, auth: "fork-token" }), repoName, verifiedPublication(task, "topic"), { headBranch: "topic", baseBranch: "main", title: "x" }).catch(() => undefined);
      expect(requestsSince(mark)).toEqual(["GET /repos/fork/app/git/ref/heads/topic", "POST /repos/acme/app/pulls"]);
    });

    it("refuses what is not a complete verified receipt for this workspace and branch", () => {
      const ok = receipt("b", "1".repeat(40));
      const refusal = (task: Task, head = "b") => {
        try {
          verifiedPublication(task, head);
          return "accepted";
        } catch (err) {
          return (err as Error).message;
        }
      };
      expect(refusal(taskWith(undefined))).toBe("task coder has no verified delivery receipt (outcome=none)");
      expect(refusal(taskWith({ ...ok, outcome: "DeliveredSuperseded" }))).toBe("task coder has no verified delivery receipt (outcome=DeliveredSuperseded)");
      expect(refusal(taskWith({ ...ok, outcome: undefined, state: "Publishing" }))).toBe("task coder has no verified delivery receipt (outcome=Publishing)");
      expect(refusal(taskWith({ ...ok, verifiedRemoteSHA: "2".repeat(40) }))).toMatch(/incomplete verified delivery receipt: the commit read back differs/);
      expect(refusal(taskWith({ ...ok, publicationID: undefined }))).toMatch(/incomplete .*publicationID/);
      expect(refusal(taskWith({ ...ok, artifactDigest: "" }))).toMatch(/incomplete .*artifactDigest/);
      expect(refusal(taskWith({ ...ok, publicationRepository: "https://github.com/evil/app" }))).toMatch(/names publication repository "https:\/\/github.com\/evil\/app"/);
      expect(refusal(taskWith(ok), "other")).toBe('head_branch "other" is not the verified delivery branch "b" of task coder');
      expect(refusal(taskWith({ ...ok, publicationRepository: "https://github.com/ACME/App.git" }))).toBe("accepted");
    });
  });

  describe("merge_pull_request", () => {
    it("does not merge a red or unchecked pull request, and sends no merge", async () => {
      const { number, sha } = await openPull();
      const request = mergeRequest({ task_name: "coder", pr_number: number });
      const mark = github.log.length;
      expect(await mergeWhenGreen(octokit, repoName, request)).toEqual({
        sha: "", merged: false, checks_passed: false, checks_details: "no CI checks configured", message: "CI checks have not all passed: no CI checks configured",
      });
      await github.addCheckRun(REPO, sha, { name: "lint", conclusion: "failure" });
      expect(await mergeWhenGreen(octokit, repoName, request)).toMatchObject({ merged: false, message: "CI checks have not all passed: lint (conclusion=failure)" });
      expect(requestsSince(mark).filter((r) => r.startsWith("PUT"))).toEqual([]);
    });

    it("merges a green pull request for real, sending the checked head, and reports a merged or closed one", async () => {
      const { number, sha } = await openPull();
      await github.addCheckRun(REPO, sha, { name: "build" });
      await github.addCheckRun(REPO, sha, { name: "docs", conclusion: "skipped" });
      const mark = github.log.length;
      const merged = await mergeWhenGreen(octokit, repoName, mergeRequest({ task_name: "coder", pr_number: number, merge_method: "merge", commit_title: "Ship it" }));
      expect(merged).toEqual({ sha: await github.head(REPO, "main"), merged: true, checks_passed: true, message: "Pull request merged successfully" });
      const put = github.log.slice(mark).find((e) => e.method === "PUT")!;
      expect(put).toMatchObject({ token: "forge-token", body: { sha, merge_method: "merge", commit_title: "Ship it" } });
      expect(github.pullRequest(REPO, number).pull).toMatchObject({ merged: true, mergeCommitSha: merged.sha });
      const clone = path.join(work, `merged-${number}`);
      await git(["clone", "--quiet", `https://github.com/${REPO}`, clone], { env: gitPeer.clientEnv("forge-token") });
      expect(await git(["log", "-1", "--format=%s%n%P"], { cwd: clone })).toBe(`Ship it\n${(await git(["rev-parse", "HEAD^1"], { cwd: clone }))} ${sha}`);
      expect(await mergeWhenGreen(octokit, repoName, mergeRequest({ task_name: "coder", pr_number: number }))).toMatchObject({ merged: true, message: "Pull request was already merged", sha: merged.sha });
      const closed = await openPull();
      await github.closePullRequest(REPO, closed.number);
      expect(await mergeWhenGreen(octokit, repoName, mergeRequest({ task_name: "coder", pr_number: closed.number }))).toEqual({ sha: "", merged: false, checks_passed: false, message: "Pull request is closed" });
    });

    it("does not merge a head pushed after its CI was checked", async () => {
      const { number, branch, sha } = await openPull();
      await github.addCheckRun(REPO, sha, { name: "build" });
      const mainBefore = await github.head(REPO, "main");
      let pushedLate = "";
      github.beforeNext({ method: "PUT" }, async () => {
        pushedLate = await github.commit(REPO, branch, { "unreviewed.txt": "sneaked in\n" });
      });
      await expect(mergeWhenGreen(octokit, repoName, mergeRequest({ task_name: "coder", pr_number: number }))).rejects.toThrow(
        /^failed to merge pull request: GitHub API returned 409: .*Head branch was modified/,
      );
      expect(pushedLate).not.toBe("");
      expect(await github.head(REPO, "main")).toBe(mainBefore);
      expect(github.pullRequest(REPO, number)).toMatchObject({ state: "open", pull: { merged: false } });
    });

    it("refuses a missing pull request number or an unknown merge method before anything is sent", () => {
      expect(() => mergeRequest({ task_name: "coder" })).toThrow("task_name and pr_number are required");
      expect(() => mergeRequest({ pr_number: 1 })).toThrow("task_name and pr_number are required");
      expect(() => mergeRequest({ task_name: "coder", pr_number: 1, merge_method: "fast-forward" })).toThrow('invalid merge_method "fast-forward"');
      expect(mergeRequest({ task_name: "coder", pr_number: 1 }).method).toBe("squash");
    });
  });

  describe("auto_merge_pull_request, one poll at a time", () => {
    it("waits on pending or missing checks, follows a force-push, then merges the new head", async () => {
      const { number, branch, sha } = await openPull();
      const request = mergeRequest({ task_name: "coder", pr_number: number, merge_method: "squash" });
      expect(await autoMergePoll(octokit, repoName, request)).toEqual({ outcome: "pending", pr_number: number, head_sha: sha, checks_details: "no CI checks configured" });
      await github.addCheckRun(REPO, sha, { name: "build", status: "in_progress" });
      expect(await autoMergePoll(octokit, repoName, request)).toMatchObject({ outcome: "pending", checks_details: "build (status=in_progress)" });
      const rewritten = await github.commit(REPO, `${branch}-v2`, { "v2.txt": "second try\n" });
      await github.forcePush(REPO, branch, rewritten);
      await github.addCheckRun(REPO, rewritten, { name: "build" });
      const mark = github.log.length;
      const merged = await autoMergePoll(octokit, repoName, request);
      expect(merged).toMatchObject({ outcome: "merged", merged: true, checks_passed: true, message: "Pull request merged successfully", sha: await github.head(REPO, "main") });
      expect(github.log.slice(mark).some((e) => e.path.includes(`/commits/${rewritten}/check-runs`))).toBe(true);
      expect(github.log.slice(mark).find((e) => e.method === "PUT")?.body).toMatchObject({ sha: rewritten, merge_method: "squash" });
      expect(await autoMergePoll(octokit, repoName, request)).toMatchObject({ outcome: "already_merged", merged: true, checks_passed: true, message: "Pull request was already merged" });
    });

    it("reports a failed check at once, with its details, and a closed pull request", async () => {
      const { number, sha } = await openPull();
      await github.addCheckRun(REPO, sha, { name: "unit", conclusion: "failure" });
      const request = mergeRequest({ task_name: "coder", pr_number: number });
      expect(await autoMergePoll(octokit, repoName, request)).toEqual({
        outcome: "ci_failed", pr_number: number, sha: "", merged: false, checks_passed: false, checks_details: "unit (conclusion=failure)", message: "CI checks failed: unit (conclusion=failure)",
      });
      await github.closePullRequest(REPO, number);
      expect(await autoMergePoll(octokit, repoName, request)).toMatchObject({ outcome: "closed", merged: false, checks_passed: false, message: "Pull request is closed" });
    });
  });

  describe("check_pull_request_ci, one attempt", () => {
    it("reports each status with the SEED fields", async () => {
      const { number, sha } = await openPull();
      expect(await checkPullRequestCiOnce(octokit, repoName, number)).toEqual({
        status: "no_checks", pr_number: number, head_sha: sha, checks_passed: false, checks_failed: false, checks_pending: false,
        message: "no CI checks have been registered yet for this pull request (may still be queueing)",
      });
      const run = await github.addCheckRun(REPO, sha, { name: "build", status: "queued" });
      expect(await checkPullRequestCiOnce(octokit, repoName, number)).toMatchObject({ status: "pending", checks_pending: true, checks_details: "build (status=queued)", message: "one or more CI checks are still pending" });
      github.updateCheckRun(REPO, run, { conclusion: "success" });
      expect(await checkPullRequestCiOnce(octokit, repoName, number)).toMatchObject({ status: "passed", checks_passed: true, message: "all CI checks passed" });
      await github.addStatus(REPO, sha, { context: "ci/legacy", state: "error" });
      expect(await checkPullRequestCiOnce(octokit, repoName, number)).toMatchObject({ status: "failed", checks_failed: true, checks_details: "ci/legacy (state=error)", message: "one or more CI checks failed" });
      await github.closePullRequest(REPO, number);
      expect(await checkPullRequestCiOnce(octokit, repoName, number)).toMatchObject({ status: "closed", message: "pull request is closed" });
    });

    it("tells a missing pull request apart", async () => {
      await expect(checkPullRequestCiOnce(octokit, repoName, 999)).rejects.toThrow(/failed to get pull request #999: GitHub API returned 404/);
    });
  });

  describe("post_review_comment", () => {
    it("posts a review whose line comments land on the pull request, and reports GitHub's refusal of a line outside the diff", async () => {
      const { number } = await openPull("first\nsecond\nthird\n");
      const branchFile = `work-${branches}.txt`;
      const posted = await postReview(octokit, repoName, reviewRequest({ pr_number: number, body: "Looks good", event: "COMMENT", comments: [{ path: branchFile, line: 2, body: "nit" }] }));
      expect(posted).toEqual({ review_id: expect.any(Number), status: "submitted", html_url: `https://github.com/${REPO}/pull/${number}#pullrequestreview-${posted.review_id}` });
      expect(github.pullRequest(REPO, number).pull.reviews.at(-1)).toMatchObject({ body: "Looks good", state: "COMMENTED", comments: [{ path: branchFile, line: 2, body: "nit" }] });
      await expect(postReview(octokit, repoName, reviewRequest({ pr_number: number, body: "x", event: "COMMENT", comments: [{ path: branchFile, line: 40, body: "far" }] }))).rejects.toThrow(
        /^failed to post review: GitHub API returned 422: .*Line could not be resolved/,
      );
    });

    it("refuses a missing field, a bad event and bad line comments before anything is sent", () => {
      const refusal = (args: Parameters<typeof reviewRequest>[0]) => {
        try {
          reviewRequest(args);
          return "accepted";
        } catch (err) {
          return (err as Error).message;
        }
      };
      expect(refusal({ pr_number: 1, body: "x" })).toBe("pr_number, body, and event are required");
      expect(refusal({ pr_number: 1, body: "x", event: "approve" })).toBe('invalid event value "approve": must be APPROVE, REQUEST_CHANGES, or COMMENT');
      const bad = (comment: { path: string; line: number; body: string }) => refusal({ pr_number: 1, body: "x", event: "COMMENT", comments: [comment] });
      expect(bad({ path: "../secrets.txt", line: 1, body: "x" })).toMatch(/^comments\[0\]: path must be relative/);
      expect(bad({ path: "/etc/passwd", line: 1, body: "x" })).toMatch(/^comments\[0\]: path must be relative/);
      expect(bad({ path: "a/../../b", line: 1, body: "x" })).toMatch(/^comments\[0\]: path must be relative/);
      expect(bad({ path: "a.txt", line: 0, body: "x" })).toBe("comments[0]: line must be a new-file line number (1 or more)");
      expect(bad({ path: "a.txt", line: 3, body: "  " })).toBe("comments[0]: body must not be empty");
      expect(bad({ path: "src/a..b.ts", line: 3, body: "ok" })).toBe("accepted");
    });
  });
});

describe("waits of the polling tools", () => {
  const refusal = (fn: () => unknown) => {
    try {
      fn();
      return "accepted";
    } catch (err) {
      return (err as Error).message;
    }
  };

  it("reads wait_timeout and poll_interval in Go syntax, refusing negative, zero and bad values", () => {
    expect(ciWait({})).toBeUndefined();
    expect(ciWait({ wait_timeout: "0s" })).toBeUndefined();
    expect(ciWait({ wait_timeout: "1m30s" })).toEqual({ waitMs: 90_000, pollMs: 30_000 });
    expect(ciWait({ wait_timeout: "2s", poll_interval: "250ms" })).toEqual({ waitMs: 2000, pollMs: 250 });
    expect(refusal(() => ciWait({ wait_timeout: "-5s" }))).toBe("wait_timeout must be non-negative");
    expect(refusal(() => ciWait({ wait_timeout: "soon" }))).toMatch(/^invalid wait_timeout "soon": /);
    expect(refusal(() => ciWait({ wait_timeout: "1m", poll_interval: "0s" }))).toBe("poll_interval must be positive");
    expect(refusal(() => ciWait({ wait_timeout: "1m", poll_interval: "-1s" }))).toBe("poll_interval must be positive");
    expect(refusal(() => ciWait({ poll_interval: "often" }))).toMatch(/^invalid poll_interval "often": /);
    expect(refusal(() => ciWait({ wait_timeout: "10000h" }))).toMatch(/^invalid wait_timeout "10000h": longer than/);
  });

  it("reads auto-merge's timeout, 30m by default, refusing zero or less", () => {
    expect(autoMergeTimeout(undefined)).toBe(30 * 60_000);
    expect(autoMergeTimeout("1h")).toBe(3_600_000);
    expect(refusal(() => autoMergeTimeout("0s"))).toBe("timeout must be positive");
    expect(refusal(() => autoMergeTimeout("-1m"))).toBe("timeout must be positive");
    expect(refusal(() => autoMergeTimeout("later"))).toMatch(/^invalid timeout "later": /);
  });
});
