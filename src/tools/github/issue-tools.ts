import { githubTool } from "./github-tool.ts";
import { commentOnIssueArgs, getIssueArgs, listIssuesArgs } from "./schemas.ts";

export const listIssues = githubTool({
  name: "list_issues",
  family: "issues",
  readOnly: true,
  description: "List open issues (number, title, body truncated to 500 characters, labels, author) of the task's GitHub repository; only unassigned ones unless unassigned_only is false.",
  parameters: listIssuesArgs,
});

export const getIssue = githubTool({
  name: "get_issue",
  family: "issues",
  readOnly: true,
  description: "Fetch a GitHub issue's title, body, labels, assignees, state and first page of comments.",
  parameters: getIssueArgs,
});

export const commentOnIssue = githubTool({
  name: "comment_on_issue",
  family: "issues",
  readOnly: false,
  description: "Post a Markdown comment on a GitHub issue, with the task's forge credential.",
  parameters: commentOnIssueArgs,
});

export const ISSUE_TOOL_DECLARATIONS = [listIssues, getIssue, commentOnIssue];
