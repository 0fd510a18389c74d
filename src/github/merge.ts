// Merging a pull request only when its CI passed: once (merge_pull_request), or as one poll of
// auto_merge_pull_request, whose worker half repeats it until an outcome or its deadline.
import type { Octokit } from "@octokit/rest";
import { OrkaError } from "../util/errors.ts";
import { evaluateCi, type CiVerdict, type RepoName } from "./ci.ts";
import { githubFailure } from "./failure.ts";
import { readPullRequestHead, type PullRequestHead } from "./pull-request-ci.ts";

export const MERGE_METHODS = ["merge", "squash", "rebase"] as const;
export type MergeMethod = (typeof MERGE_METHODS)[number];

export interface MergeRequest {
  prNumber: number;
  method: MergeMethod;
  commitTitle?: string;
  commitMessage?: string;
}

export interface MergeArgs {
  task_name?: string;
  pr_number?: number;
  merge_method?: string;
  commit_title?: string;
  commit_message?: string;
}

/** The merge as the arguments ask for it: squash unless told otherwise, and only a method GitHub knows. */
export function mergeRequest(args: MergeArgs): MergeRequest {
  if (!args.task_name?.trim() || !args.pr_number) throw new OrkaError("invalid_argument", "task_name and pr_number are required");
  const method = args.merge_method?.trim() || "squash";
  if (!MERGE_METHODS.includes(method as MergeMethod)) throw new OrkaError("invalid_argument", `invalid merge_method "${method}"`);
  return { prNumber: args.pr_number, method: method as MergeMethod, commitTitle: args.commit_title, commitMessage: args.commit_message };
}

export interface MergeResult {
  sha: string;
  merged: boolean;
  checks_passed: boolean;
  checks_details?: string;
  message: string;
}

const MERGE_MESSAGES = {
  merged: "Pull request merged successfully",
  alreadyMerged: "Pull request was already merged",
  closed: "Pull request is closed",
} as const;

/** With no checks at all there is nothing to name, and that is why the merge did not happen. */
const NO_CHECKS_DETAILS = "no CI checks configured";

async function verdictOf(client: Octokit, repo: RepoName, pull: PullRequestHead): Promise<CiVerdict> {
  try {
    return await evaluateCi(client, { owner: repo.owner, repo: repo.repo, sha: pull.headSha });
  } catch (err) {
    throw githubFailure(err, "failed to read CI status");
  }
}

/** Merges the head that was checked, and no other: a head that moved since is refused by GitHub (409). */
async function mergeCheckedHead(client: Octokit, repo: RepoName, request: MergeRequest, headSha: string): Promise<string> {
  try {
    const { data } = await client.rest.pulls.merge({
      owner: repo.owner,
      repo: repo.repo,
      pull_number: request.prNumber,
      sha: headSha,
      merge_method: request.method,
      ...(request.commitTitle ? { commit_title: request.commitTitle } : {}),
      ...(request.commitMessage ? { commit_message: request.commitMessage } : {}),
    });
    return data.sha;
  } catch (err) {
    throw githubFailure(err, "failed to merge pull request");
  }
}

/** An answer for a pull request that can no longer be merged, or undefined while it is open. */
function settled(pull: PullRequestHead): MergeResult | undefined {
  if (pull.merged) return { sha: pull.mergeCommitSha ?? "", merged: true, checks_passed: true, message: MERGE_MESSAGES.alreadyMerged };
  if (pull.state === "closed") return { sha: "", merged: false, checks_passed: false, message: MERGE_MESSAGES.closed };
  return undefined;
}

/** merge_pull_request: reads the head, checks its CI once, and merges it only when every check passed. */
export async function mergeWhenGreen(client: Octokit, repo: RepoName, request: MergeRequest): Promise<MergeResult> {
  const pull = await readPullRequestHead(client, repo, request.prNumber);
  const done = settled(pull);
  if (done) return done;
  const verdict = await verdictOf(client, repo, pull);
  if (verdict.state !== "passed") {
    const details = verdict.details || NO_CHECKS_DETAILS;
    return { sha: "", merged: false, checks_passed: false, checks_details: details, message: `CI checks have not all passed: ${details}` };
  }
  const sha = await mergeCheckedHead(client, repo, request, pull.headSha);
  return { sha, merged: true, checks_passed: true, message: MERGE_MESSAGES.merged };
}

export type AutoMergeOutcome = "merged" | "ci_failed" | "closed" | "already_merged" | "timeout";

export interface AutoMergeResult extends MergeResult {
  outcome: AutoMergeOutcome;
  pr_number: number;
}

/**
 * One poll of auto_merge_pull_request: an outcome, or `pending` (no registered checks count as pending)
 * to poll again. A merge GitHub refuses (405, 409, 422) is a tool error; one it could not answer (5xx,
 * rate limit) is left to the next poll like a failed read, which is safe: that poll reads the pull
 * request again and merges only its checked head, or finds it merged.
 */
export type AutoMergePoll = AutoMergeResult | { outcome: "pending"; pr_number: number; head_sha: string; checks_details: string };

export async function autoMergePoll(client: Octokit, repo: RepoName, request: MergeRequest): Promise<AutoMergePoll> {
  const pr_number = request.prNumber;
  // The pull request is read again on every poll, so a force-pushed head is the one checked and merged.
  const pull = await readPullRequestHead(client, repo, pr_number);
  const done = settled(pull);
  if (done) return { ...done, outcome: pull.merged ? "already_merged" : "closed", pr_number };
  const verdict = await verdictOf(client, repo, pull);
  if (verdict.state === "failed") {
    return { outcome: "ci_failed", pr_number, sha: "", merged: false, checks_passed: false, checks_details: verdict.details, message: `CI checks failed: ${verdict.details}` };
  }
  if (verdict.state !== "passed") return { outcome: "pending", pr_number, head_sha: pull.headSha, checks_details: verdict.details || NO_CHECKS_DETAILS };
  const sha = await mergeCheckedHead(client, repo, request, pull.headSha);
  return { outcome: "merged", pr_number, sha, merged: true, checks_passed: true, message: MERGE_MESSAGES.merged };
}
