import { ISSUE_TOOL_DECLARATIONS } from "./issue-tools.ts";
import { autoMergePullRequest, checkPullRequestCi, createPullRequest, mergePullRequest, postReviewComment } from "./pr-lifecycle-tools.ts";
import { checkPrReviewMarker, listPullRequests, reviewPullRequest } from "./pull-request-tools.ts";

/** The GitHub tools this build implements, in the order of the built-in tools page. */
export const GITHUB_TOOL_DECLARATIONS = [
  createPullRequest, listPullRequests, checkPrReviewMarker, checkPullRequestCi, mergePullRequest, autoMergePullRequest, reviewPullRequest, postReviewComment,
  ...ISSUE_TOOL_DECLARATIONS,
];
