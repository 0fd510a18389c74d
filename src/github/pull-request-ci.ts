// One look at a pull request's CI, as check_pull_request_ci reports it; the waiting lives in the tool's
// worker half, which asks for one of these per poll.
import type { Octokit } from "@octokit/rest";
import { evaluateCi, type CiState, type RepoName } from "./ci.ts";
import { githubFailure } from "./failure.ts";

export type CiReportStatus = CiState | "merged" | "closed" | "unknown";

export interface CiReport {
  status: CiReportStatus;
  pr_number: number;
  head_sha?: string;
  checks_passed: boolean;
  checks_failed: boolean;
  checks_pending: boolean;
  checks_details?: string;
  wait_timed_out?: boolean;
  attempts?: number;
  message: string;
}

const CI_MESSAGES: Record<Exclude<CiReportStatus, "unknown">, string> = {
  merged: "pull request is already merged",
  closed: "pull request is closed",
  failed: "one or more CI checks failed",
  passed: "all CI checks passed",
  pending: "one or more CI checks are still pending",
  no_checks: "no CI checks have been registered yet for this pull request (may still be queueing)",
};

/** A report that ends a wait: everything but pending and no_checks (CI may register its checks late). */
export function isTerminalCiReport(report: CiReport): boolean {
  return report.status !== "pending" && report.status !== "no_checks";
}

/** The pull request's state and head, as the merge and CI tools read it. */
export interface PullRequestHead {
  state: string;
  merged: boolean;
  headSha: string;
  mergeCommitSha: string | null;
}

export async function readPullRequestHead(client: Octokit, repo: RepoName, prNumber: number): Promise<PullRequestHead> {
  try {
    const { data } = await client.rest.pulls.get({ owner: repo.owner, repo: repo.repo, pull_number: prNumber });
    return { state: data.state, merged: data.merged, headSha: data.head.sha, mergeCommitSha: data.merge_commit_sha };
  } catch (err) {
    throw githubFailure(err, `failed to get pull request #${prNumber}`);
  }
}

/** Reads the pull request, then the CI of its current head (so a force-push is followed). */
export async function checkPullRequestCiOnce(client: Octokit, repo: RepoName, prNumber: number): Promise<CiReport> {
  const pull = await readPullRequestHead(client, repo, prNumber);
  const base = { pr_number: prNumber, head_sha: pull.headSha, checks_passed: false, checks_failed: false, checks_pending: false };
  if (pull.merged) return { ...base, status: "merged", message: CI_MESSAGES.merged };
  if (pull.state === "closed") return { ...base, status: "closed", message: CI_MESSAGES.closed };
  let verdict;
  try {
    verdict = await evaluateCi(client, { owner: repo.owner, repo: repo.repo, sha: pull.headSha });
  } catch (err) {
    throw githubFailure(err, "failed to read CI status");
  }
  return {
    ...base,
    status: verdict.state,
    checks_passed: verdict.state === "passed",
    checks_failed: verdict.state === "failed",
    checks_pending: verdict.state === "pending",
    ...(verdict.details ? { checks_details: verdict.details } : {}),
    message: CI_MESSAGES[verdict.state],
  };
}
