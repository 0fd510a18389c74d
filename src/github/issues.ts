import { OrkaError } from "../util/errors.ts";
import { githubFailure } from "./failure.ts";
import { cutCodePoints, hasNextPage, labelNames, pageOf, type GithubOperation } from "./operation.ts";

const COMMENTS_PAGE = 30;

function requireIssueNumber(args: { issue_number: number }): void {
  if (!(args.issue_number > 0)) throw new OrkaError("invalid_argument", "issue_number is required and must be positive");
}

/** list_issues: one page of open issues (unassigned ones by default), pull requests left out. */
export const listIssues: GithubOperation<{ per_page?: number; page?: number; unassigned_only: boolean }> = {
  access: "read",
  async run(args, { client, owner, repo }) {
    const page = pageOf(args);
    const { data, headers } = await client.rest.issues
      .listForRepo({ owner, repo, state: "open", ...(args.unassigned_only ? { assignee: "none" } : {}), ...page })
      .catch((err) => {
        throw githubFailure(err, "failed to list issues");
      });
    const issues = data
      .filter((issue) => !issue.pull_request)
      .map((issue) => ({
        number: issue.number,
        title: issue.title,
        body: cutCodePoints(issue.body),
        author: issue.user?.login ?? "",
        labels: labelNames(issue.labels),
        created_at: issue.created_at,
        html_url: issue.html_url,
      }));
    return { issues, count: issues.length, has_next_page: hasNextPage(headers.link) };
  },
};

/** get_issue: the issue and its first page of comments; comments that cannot be read are left out, not an error. */
export const getIssue: GithubOperation<{ issue_number: number }> = {
  access: "read",
  check: requireIssueNumber,
  async run({ issue_number }, { client, owner, repo }) {
    const { data: issue } = await client.rest.issues.get({ owner, repo, issue_number }).catch((err) => {
      throw githubFailure(err, "failed to get issue");
    });
    const comments = await client.rest.issues
      .listComments({ owner, repo, issue_number, per_page: COMMENTS_PAGE })
      .then(({ data }) => data.map((c) => ({ author: c.user?.login ?? "", body: c.body ?? "", created_at: c.created_at })))
      .catch(() => []);
    return {
      number: issue.number,
      title: issue.title,
      body: issue.body ?? "",
      author: issue.user?.login ?? "",
      labels: labelNames(issue.labels),
      assignees: (issue.assignees ?? []).map((a) => a.login),
      state: issue.state,
      created_at: issue.created_at,
      html_url: issue.html_url,
      comment_count: issue.comments,
      comments,
    };
  },
};

/** comment_on_issue: one comment with the forge credential, never sent twice by Orka. */
export const commentOnIssue: GithubOperation<{ issue_number: number; body: string }> = {
  access: "write",
  check(args) {
    requireIssueNumber(args);
    if (!args.body.trim()) throw new OrkaError("invalid_argument", "body is required");
  },
  async run({ issue_number, body }, { client, owner, repo }) {
    const { data } = await client.rest.issues.createComment({ owner, repo, issue_number, body }).catch((err) => {
      throw githubFailure(err, "failed to comment on issue");
    });
    return { comment_id: data.id, html_url: data.html_url, status: "created" };
  },
};
