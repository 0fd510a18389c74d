import { githubFailure } from "./failure.ts";
import { cutCodePoints, labelNames, pageOf, type GithubOperation } from "./operation.ts";

/** list_pull_requests: one page of open pull requests; `total_count` counts this page. */
export const listPullRequests: GithubOperation<{ per_page?: number; page?: number }> = {
  access: "read",
  async run(args, { client, owner, repo }) {
    const { data } = await client.rest.pulls.list({ owner, repo, state: "open", ...pageOf(args) }).catch((err) => {
      throw githubFailure(err, "failed to list pull requests");
    });
    return {
      pull_requests: data.map((pull) => ({
        number: pull.number,
        title: pull.title,
        body: cutCodePoints(pull.body),
        author: pull.user?.login ?? "",
        base_branch: pull.base.ref,
        head_branch: pull.head.ref,
        labels: labelNames(pull.labels),
        created_at: pull.created_at,
        html_url: pull.html_url,
        draft: pull.draft ?? false,
      })),
      total_count: data.length,
    };
  },
};
