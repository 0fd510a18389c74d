import { githubTool } from "./github-tool.ts";
import { listPullRequestsArgs } from "./schemas.ts";

export const listPullRequests = githubTool({
  name: "list_pull_requests",
  family: "pull-requests",
  readOnly: true,
  description: "List open pull requests (number, title, author, branches, labels, URL) of the task's GitHub repository.",
  parameters: listPullRequestsArgs,
});
