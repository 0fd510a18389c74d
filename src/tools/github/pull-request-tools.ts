import { githubTool } from "./github-tool.ts";
import { checkPrReviewMarkerArgs, listPullRequestsArgs, reviewPullRequestArgs } from "./schemas.ts";

export const listPullRequests = githubTool({
  name: "list_pull_requests",
  family: "pull-requests",
  readOnly: true,
  description: "List open pull requests (number, title, author, branches, labels, URL) of the task's GitHub repository.",
  parameters: listPullRequestsArgs,
});

export const checkPrReviewMarker = githubTool({
  name: "check_pr_review_marker",
  family: "pull-requests",
  readOnly: true,
  description:
    "Check whether a pull request already has an Orka review marker for its current head, so the same head is not reviewed twice. Returns the hidden marker to include unchanged in the body of a later post_review_comment.",
  parameters: checkPrReviewMarkerArgs,
});

export const reviewPullRequest = githubTool({
  name: "review_pull_request",
  family: "pull-requests",
  readOnly: true,
  description: "Fetch a pull request's unified diff, per-file patches with change statistics, and metadata (title, body, author, branches, head SHA).",
  parameters: reviewPullRequestArgs,
});
