import { z } from "zod";
import { scopeFields } from "./schemas.ts";

/**
 * The arguments of the tools that carry a pull request from a verified branch to a merge: create it,
 * watch its CI, review it, merge it. Checked by the worker's executor and again by the control plane.
 * Fields a model may leave out are optional here, so a missing one is refused with the tool's own words.
 */
const prNumber = z.number().int().optional().describe("GitHub pull request number");

const mergeFields = {
  task_name: z.string().max(253).optional().describe("Name of the child task whose workspace config has the repo and git credentials"),
  pr_number: prNumber.describe("GitHub pull request number to merge"),
  merge_method: z.string().max(32).optional().describe("merge, squash, or rebase (defaults to squash)"),
  commit_title: z.string().max(1024).optional().describe("Custom merge commit title"),
  commit_message: z.string().max(65_536).optional().describe("Custom merge commit message"),
};

export const createPullRequestArgs = z.object({
  task_name: z.string().max(253).optional().describe("Name of the completed child Task whose workspace and delivery receipt identify the publication repository/branch"),
  head_branch: z.string().max(255).optional().describe("Branch containing the changes (the pushBranch from the coder task)"),
  base_branch: z.string().max(255).optional().describe("Target branch to merge into (e.g. main)"),
  title: z.string().max(4096).optional().describe("Pull request title"),
  body: z.string().max(200_000).optional().describe("Pull request body in Markdown"),
});

export const checkPullRequestCiArgs = z.object({
  pr_number: prNumber.describe("GitHub pull request number to inspect"),
  ...scopeFields,
  wait_timeout: z.string().max(64).optional().describe("Maximum time to wait for pending checks, e.g. 30m. Empty means one immediate check"),
  poll_interval: z.string().max(64).optional().describe("Delay between checks while waiting, e.g. 30s. Defaults to 30s when waiting"),
});

export const postReviewCommentArgs = z.object({
  pr_number: prNumber,
  body: z.string().max(65_536).optional().describe("Top-level review body text"),
  event: z.string().max(64).optional().describe("Review verdict: APPROVE, REQUEST_CHANGES, or COMMENT"),
  comments: z
    .array(
      z.object({
        path: z.string().max(4096).describe("File path relative to the repository root"),
        line: z.number().int().describe("Line number in the new version of the file"),
        body: z.string().max(65_536).describe("Comment text"),
      }),
    )
    .max(100)
    .optional()
    .describe("Line-level comments"),
  ...scopeFields,
});

export const mergePullRequestArgs = z.object(mergeFields);

export const autoMergePullRequestArgs = z.object({
  ...mergeFields,
  timeout: z.string().max(64).optional().describe("Maximum wait, e.g. 30m or 1h (defaults to 30m)"),
});
