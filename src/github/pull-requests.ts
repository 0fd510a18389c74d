import { OrkaError } from "../util/errors.ts";
import { cutUtf8 } from "../util/text.ts";
import { githubFailure } from "./failure.ts";
import { cutCodePoints, hasNextPage, labelNames, pageOf, type GithubOperation } from "./operation.ts";

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

/** The diff a review returns is cut here (GitHub's answer is read up to 10 MiB). */
export const MAX_REVIEW_DIFF_BYTES = 1024 * 1024;
export const MAX_REVIEW_FILES = 300;
/** What all files' patches may add up to, so that a review stays within a tool result's 2 MiB beside the diff. */
export const MAX_REVIEW_PATCH_BYTES = 384 * 1024;
const FILES_PAGE = 100;

export function requirePrNumber(args: { pr_number: number }): void {
  if (!(args.pr_number > 0)) throw new OrkaError("invalid_argument", "pr_number is required");
}

/**
 * review_pull_request: metadata, the unified diff (cut at 1 MiB) and up to 300 files with their patches
 * (cut once they add up to 384 KiB; a cut patch is marked).
 */
export const reviewPullRequest: GithubOperation<{ pr_number: number }> = {
  access: "read",
  check: requirePrNumber,
  async run({ pr_number }, { client, owner, repo }) {
    const failed = (err: unknown): never => {
      throw githubFailure(err, "failed to fetch pull request");
    };
    const { data: pull } = await client.rest.pulls.get({ owner, repo, pull_number: pr_number }).catch(failed);
    const { data: diffText } = await client.rest.pulls.get({ owner, repo, pull_number: pr_number, mediaType: { format: "diff" } }).catch(failed);
    const diff = cutUtf8(String(diffText), MAX_REVIEW_DIFF_BYTES);
    const files: { filename: string; status: string; additions: number; deletions: number; patch: string; patch_truncated?: true }[] = [];
    let more = false;
    let patchBudget = MAX_REVIEW_PATCH_BYTES;
    const fileOf = (file: { filename: string; status: string; additions: number; deletions: number; patch?: string }) => {
      const patch = cutUtf8(file.patch ?? "", patchBudget);
      patchBudget -= Buffer.byteLength(patch.text);
      return { filename: file.filename, status: file.status, additions: file.additions, deletions: file.deletions, patch: patch.text, ...(patch.cut ? { patch_truncated: true as const } : {}) };
    };
    try {
      for await (const page of client.paginate.iterator(client.rest.pulls.listFiles, { owner, repo, pull_number: pr_number, per_page: FILES_PAGE })) {
        for (const file of page.data) {
          if (files.length < MAX_REVIEW_FILES) files.push(fileOf(file));
          else more = true;
        }
        if (files.length >= MAX_REVIEW_FILES) {
          more ||= hasNextPage(page.headers.link);
          break;
        }
      }
    } catch (err) {
      failed(err);
    }
    return {
      pr_title: pull.title,
      pr_body: pull.body ?? "",
      pr_author: pull.user?.login ?? "",
      base_branch: pull.base.ref,
      head_branch: pull.head.ref,
      head_sha: pull.head.sha,
      diff: diff.text,
      diff_truncated: diff.cut,
      files,
      files_truncated: more,
      status: "fetched",
    };
  },
};
