import { Octokit } from "@octokit/rest";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { combineCi, evaluateCi } from "../../src/github/ci.ts";
import { startGithubPeer, type GithubPeer } from "../peers/github-server.ts";

const REPO = "acme/ci";
const owner = "acme";
const repo = "ci";

describe("CI verdict of a commit, read from the GitHub peer through Octokit", () => {
  let peer: GithubPeer;
  let octokit: Octokit;
  let branches = 0;

  beforeAll(async () => {
    peer = await startGithubPeer();
    peer.addToken("read", "reader", "read");
    await peer.addRepo(REPO);
    octokit = new Octokit({ baseUrl: peer.baseUrl, auth: "read" });
  });
  afterAll(() => peer?.stop());

  /** A fresh commit, so each case starts with no checks at all. */
  async function freshCommit(): Promise<string> {
    const branch = `b${++branches}`;
    return peer.commit(REPO, branch, { [`${branch}.txt`]: "x\n" });
  }

  const verdict = (sha: string, signal?: AbortSignal) => evaluateCi(octokit, { owner, repo, sha }, signal);

  it("has no checks on a commit nothing reported on", async () => {
    expect(await verdict(await freshCommit())).toEqual({ state: "no_checks", details: "" });
  });

  it("passes success, neutral and skipped check runs, and ignores an empty status list", async () => {
    const sha = await freshCommit();
    for (const conclusion of ["success", "neutral", "skipped"] as const) await peer.addCheckRun(REPO, sha, { name: conclusion, conclusion });
    expect(await verdict(sha)).toEqual({ state: "passed", details: "" });
  });

  it("is pending while a run has not completed, and failed as soon as one failed, naming each", async () => {
    const sha = await freshCommit();
    const build = await peer.addCheckRun(REPO, sha, { name: "build", status: "in_progress" });
    expect(await verdict(sha)).toEqual({ state: "pending", details: "build (status=in_progress)" });
    await peer.addCheckRun(REPO, sha, { name: "lint", conclusion: "failure" });
    await peer.addCheckRun(REPO, sha, { name: "e2e", conclusion: "timed_out" });
    expect(await verdict(sha)).toEqual({ state: "failed", details: "build (status=in_progress); lint (conclusion=failure); e2e (conclusion=timed_out)" });
    peer.updateCheckRun(REPO, build, { conclusion: "success" });
    expect((await verdict(sha)).details).toBe("lint (conclusion=failure); e2e (conclusion=timed_out)");
  });

  it("combines commit statuses with check runs: a failed status beats passing runs, a pending one holds them", async () => {
    const sha = await freshCommit();
    await peer.addCheckRun(REPO, sha, { name: "build" });
    await peer.addStatus(REPO, sha, { context: "ci/deploy", state: "pending" });
    expect(await verdict(sha)).toEqual({ state: "pending", details: "ci/deploy (state=pending)" });
    await peer.addStatus(REPO, sha, { context: "ci/deploy", state: "error" });
    expect(await verdict(sha)).toEqual({ state: "failed", details: "ci/deploy (state=error)" });
    await peer.addStatus(REPO, sha, { context: "ci/deploy", state: "success" });
    expect(await verdict(sha)).toEqual({ state: "passed", details: "" });
  });

  it("passes on commit statuses alone when no check run exists", async () => {
    const sha = await freshCommit();
    await peer.addStatus(REPO, sha, { context: "legacy-ci", state: "success" });
    expect((await verdict(sha)).state).toBe("passed");
    await peer.addStatus(REPO, sha, { context: "other-ci", state: "failure" });
    expect(await verdict(sha)).toEqual({ state: "failed", details: "other-ci (state=failure)" });
  });

  it("reads every page of check runs up to total_count, so a failure on page two is seen", async () => {
    const sha = await freshCommit();
    for (let i = 0; i < 120; i++) await peer.addCheckRun(REPO, sha, { name: `job-${i}` });
    await peer.addCheckRun(REPO, sha, { name: "late", conclusion: "failure" });
    const before = peer.log.length;
    expect(await verdict(sha)).toEqual({ state: "failed", details: "late (conclusion=failure)" });
    expect(peer.log.slice(before).filter((e) => e.path.includes("/check-runs")).map((e) => new URL(e.path, peer.baseUrl).searchParams.get("page"))).toEqual(["1", "2"]);
  });

  it("stops when its abort signal fires", async () => {
    const sha = await freshCommit();
    await expect(verdict(sha, AbortSignal.abort())).rejects.toThrow(/abort/i);
  });
});

describe("combining CI results", () => {
  const run = (name: string, status: string, conclusion: string | null = null) => ({ name, status, conclusion });

  it("counts a fetch shorter than GitHub's total_count as pending", () => {
    expect(combineCi({ runs: [run("a", "completed", "success")], totalCount: 3 }, [])).toEqual({ state: "pending", details: "2 of 3 check runs not yet read" });
  });

  it("lets a failure beat a short fetch, and treats an unknown conclusion as a failure", () => {
    expect(combineCi({ runs: [run("a", "completed", "startup_failure")], totalCount: 2 }, [])).toEqual({
      state: "failed",
      details: "a (conclusion=startup_failure); 1 of 2 check runs not yet read",
    });
    expect(combineCi({ runs: [run("a", "completed", null)], totalCount: 1 }, []).state).toBe("failed");
  });
});
