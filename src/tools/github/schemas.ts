import { z } from "zod";

/**
 * The arguments of the GitHub tools, checked by the worker's executor and again, strictly, by the
 * control plane that runs them.
 */
export const scopeFields = {
  task_name: z.string().max(253).optional().describe("Name of this task or one of its child tasks whose workspace config has the repo and git credentials (defaults to this task)"),
  repo_url: z.string().max(2048).optional().describe("GitHub repository URL; it must be a repository of the task's workspace or transaction (defaults to the workspace repository)"),
};

const paging = {
  per_page: z.number().int().min(1, "per_page must be between 1 and 100; leave it out for 30").max(100, "per_page must be between 1 and 100; leave it out for 30")
    .optional().describe("Results per page (default 30, max 100)"),
  page: z.number().int().min(1, "page must be 1 or more; leave it out for the first page").optional().describe("Page number (default 1)"),
};

const prNumber = z.number().int().describe("GitHub pull request number");
const issueNumber = z.number().int().describe("GitHub issue number");

/** camelCase spellings a model may use. */
export const GITHUB_ALIASES = {
  taskName: "task_name", repoUrl: "repo_url", perPage: "per_page", prNumber: "pr_number", issueNumber: "issue_number",
  unassignedOnly: "unassigned_only", headSha: "head_sha",
};

export const listPullRequestsArgs = z.object({ ...scopeFields, ...paging });

export const listIssuesArgs = z.object({
  ...scopeFields,
  ...paging,
  unassigned_only: z.boolean().default(true).describe("Return only issues with no assignee (default true)"),
});

export const getIssueArgs = z.object({ issue_number: issueNumber, ...scopeFields });

export const commentOnIssueArgs = z.object({
  issue_number: issueNumber,
  body: z.string().max(65_536).describe("Comment text in Markdown"),
  ...scopeFields,
});

export const reviewPullRequestArgs = z.object({ pr_number: prNumber.describe("GitHub pull request number to review"), ...scopeFields });

export const checkPrReviewMarkerArgs = z.object({
  pr_number: prNumber.describe("GitHub pull request number to inspect"),
  ...scopeFields,
  head_sha: z.string().regex(/^[0-9a-fA-F]{7,64}$/, "must be a commit SHA (hex)").optional().describe("PR head SHA to check; if omitted, the current PR head SHA is fetched"),
});
