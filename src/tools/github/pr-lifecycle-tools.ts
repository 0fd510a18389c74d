// The worker halves of the tools that carry a pull request from a verified branch to a merge. Each
// call is one control-plane call, except the waits: check_pull_request_ci with wait_timeout and
// auto_merge_pull_request poll here, one control-plane call (one attempt) per poll.
import { mergeRequest, type AutoMergePoll, type AutoMergeResult } from "../../github/merge.ts";
import { isTerminalCiReport, type CiReport } from "../../github/pull-request-ci.ts";
import { reviewRequest } from "../../github/review-comment.ts";
import { autoMergeTimeout, ciWait, DEFAULT_AUTO_MERGE_POLL_INTERVAL_MS, type CiWait } from "../../github/waits.ts";
import { formatDuration } from "../../util/duration.ts";
import { OrkaError } from "../../util/errors.ts";
import { defineTool, type ToolContext } from "../define.ts";
import { callGithubTool } from "./github-tool.ts";
import { pollUntil, type PollResult } from "./polling.ts";
import { autoMergePullRequestArgs, checkPullRequestCiArgs, createPullRequestArgs, mergePullRequestArgs, postReviewCommentArgs } from "./pr-lifecycle-schemas.ts";
import { GITHUB_ALIASES } from "./schemas.ts";

const ALIASES = {
  ...GITHUB_ALIASES,
  headBranch: "head_branch", baseBranch: "base_branch", waitTimeout: "wait_timeout", pollInterval: "poll_interval",
  mergeMethod: "merge_method", commitTitle: "commit_title", commitMessage: "commit_message",
};

export const createPullRequest = defineTool({
  name: "create_pull_request",
  family: "pull-requests",
  description:
    "Create a GitHub pull request from the branch Orka verified for a completed child Task (its terminal verified delivery receipt), using the child's forgeCredentialRef. A repeated call returns the existing pull request.",
  parameters: createPullRequestArgs,
  aliases: ALIASES,
  async run(args, ctx) {
    return callGithubTool(ctx, "create_pull_request", args);
  },
});

/** After the wait: the last answer, marked as timed out, as the model should read it. */
function timedOutCiReport(prNumber: number, wait: CiWait, { last, attempts, lastTransientError }: PollResult<CiReport>): CiReport {
  const waited = formatDuration(wait.waitMs);
  if (!last) {
    return {
      status: "unknown", pr_number: prNumber, checks_passed: false, checks_failed: false, checks_pending: false, wait_timed_out: true, attempts,
      message: `timed out after ${waited} waiting for CI status${lastTransientError ? `; last transient error: ${lastTransientError}` : ""}`,
    };
  }
  if (last.status === "no_checks") {
    return { ...last, wait_timed_out: true, attempts, message: `no CI checks have been registered for this pull request after ${waited}; treating as terminal no_checks (the repository may have no CI for it)` };
  }
  return { ...last, status: "pending", checks_pending: true, wait_timed_out: true, attempts, message: `CI_PENDING: timed out after ${waited} waiting for CI checks to finish` };
}

export const checkPullRequestCi = defineTool({
  name: "check_pull_request_ci",
  family: "pull-requests",
  readOnly: true,
  description:
    "Check GitHub CI (check runs and commit statuses) of a pull request's current head without merging it. With wait_timeout, keep checking every poll_interval until the checks finish or the time is up.",
  parameters: checkPullRequestCiArgs,
  aliases: ALIASES,
  async run(args, ctx) {
    if (!args.pr_number) throw new OrkaError("invalid_argument", "pr_number is required");
    const wait = ciWait(args);
    const once = async () => (await callGithubTool(ctx, "check_pull_request_ci", args)) as CiReport;
    if (!wait) return once();
    const polled = await pollUntil(once, isTerminalCiReport, { totalMs: wait.waitMs, intervalMs: wait.pollMs, signal: ctx.signal });
    if (!polled.timedOut) return { ...polled.last!, wait_timed_out: false, attempts: polled.attempts };
    return timedOutCiReport(args.pr_number, wait, polled);
  },
});

export const postReviewComment = defineTool({
  name: "post_review_comment",
  family: "pull-requests",
  description: "Post a review on a GitHub pull request: a verdict (APPROVE, REQUEST_CHANGES or COMMENT), a body, and optional line comments on the new version of files.",
  parameters: postReviewCommentArgs,
  aliases: ALIASES,
  // A review that may have been posted is not posted again after a lost worker.
  onResume: "unknown",
  async run(args, ctx) {
    reviewRequest(args);
    return callGithubTool(ctx, "post_review_comment", args);
  },
});

export const mergePullRequest = defineTool({
  name: "merge_pull_request",
  family: "pull-requests",
  description:
    "Merge a GitHub pull request of a child Task's repository only if every CI check of its head passed; otherwise report why it was not merged. The head that was checked is the one merged.",
  parameters: mergePullRequestArgs,
  aliases: ALIASES,
  async run(args, ctx) {
    mergeRequest(args);
    return callGithubTool(ctx, "merge_pull_request", args);
  },
});

function autoMergeTimedOut(prNumber: number, message: string): AutoMergeResult {
  return { outcome: "timeout", pr_number: prNumber, sha: "", merged: false, checks_passed: false, message };
}

const autoMergePollInterval = (ctx: ToolContext) => ctx.settings.github?.autoMergePollIntervalMs ?? DEFAULT_AUTO_MERGE_POLL_INTERVAL_MS;

export const autoMergePullRequest = defineTool({
  name: "auto_merge_pull_request",
  family: "pull-requests",
  // Each poll reads the pull request afresh and merges only its checked head (sent as `sha`), so a
  // repeated poll finds it merged (already_merged) rather than merging twice: no idempotency key needed.
  readOnly: true,
  description:
    "Wait for a GitHub pull request's CI checks to pass, then merge it (checks every 30 seconds, following force-pushes). Reports merged, ci_failed, closed, already_merged, or timeout.",
  parameters: autoMergePullRequestArgs,
  aliases: ALIASES,
  async run(args, ctx) {
    const request = mergeRequest(args);
    const timeoutMs = autoMergeTimeout(args.timeout);
    const poll = async () => (await callGithubTool(ctx, "auto_merge_pull_request", args)) as AutoMergePoll;
    let polled;
    try {
      polled = await pollUntil(poll, (answer) => answer.outcome !== "pending", { totalMs: timeoutMs, intervalMs: autoMergePollInterval(ctx), signal: ctx.signal });
    } catch (err) {
      if (ctx.signal.aborted) return autoMergeTimedOut(request.prNumber, "context cancelled while waiting for CI checks");
      throw err;
    }
    if (polled.last && polled.last.outcome !== "pending") return polled.last;
    return autoMergeTimedOut(request.prNumber, `timed out after ${formatDuration(timeoutMs)} waiting for CI checks to pass`);
  },
});

