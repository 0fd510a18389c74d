import { ISSUE_TOOL_DECLARATIONS } from "./issue-tools.ts";
import { checkPrReviewMarker, listPullRequests, reviewPullRequest } from "./pull-request-tools.ts";

/** The GitHub tools this build implements, in the order of the built-in tools page. */
export const GITHUB_TOOL_DECLARATIONS = [listPullRequests, checkPrReviewMarker, reviewPullRequest, ...ISSUE_TOOL_DECLARATIONS];
