import { autoMergePullRequest, checkPullRequestCi, createPullRequest, mergePullRequest, postReviewComment } from "./pr-lifecycle-tools.ts";
import { listPullRequests } from "./pull-request-tools.ts";

/** The GitHub tools this build implements, pull request tools first, in the order of the built-in tools page. */
export const GITHUB_TOOL_DECLARATIONS = [createPullRequest, listPullRequests, checkPullRequestCi, mergePullRequest, autoMergePullRequest, postReviewComment];
