// The server halves of the tools that carry a pull request from a verified branch to a merge. Tools
// that wait (check_pull_request_ci with wait_timeout, auto_merge_pull_request) do one attempt here
// per call; their worker halves repeat it.
import { OrkaError } from "../util/errors.ts";
import { checkPullRequestText, openVerifiedPullRequest, verifiedPublication } from "./create-pull-request.ts";
import { autoMergePoll, mergeRequest, mergeWhenGreen, type MergeArgs } from "./merge.ts";
import type { GithubOperation } from "./operation.ts";
import { checkPullRequestCiOnce } from "./pull-request-ci.ts";
import { postReview, reviewRequest } from "./review-comment.ts";
import { autoMergeTimeout, ciWait } from "./waits.ts";

interface CreateArgs {
  task_name?: string;
  head_branch?: string;
  base_branch?: string;
  title?: string;
  body?: string;
}

export const createPullRequest: GithubOperation<CreateArgs> = {
  access: "write",
  check(args) {
    if (!args.task_name?.trim() || !args.head_branch?.trim() || !args.base_branch?.trim() || !args.title) {
      throw new OrkaError("invalid_argument", "task_name, head_branch, base_branch, and title are required");
    }
    checkPullRequestText({ headBranch: args.head_branch, baseBranch: args.base_branch, title: args.title, body: args.body });
  },
  // A Task without a verified receipt for this branch is refused before its forge credential is read.
  checkTask: (args, task) => void verifiedPublication(task, args.head_branch!),
  async run(args, { client, owner, repo, target }) {
    const text = { headBranch: args.head_branch!, baseBranch: args.base_branch!, title: args.title!, body: args.body };
    return openVerifiedPullRequest(client, { owner, repo }, verifiedPublication(target.task, text.headBranch), text);
  },
};

interface CiArgs {
  pr_number?: number;
  wait_timeout?: string;
  poll_interval?: string;
}

export const checkPullRequestCi: GithubOperation<CiArgs> = {
  access: "read",
  check(args) {
    if (!args.pr_number) throw new OrkaError("invalid_argument", "pr_number is required");
    ciWait(args);
  },
  run: (args, { client, owner, repo }) => checkPullRequestCiOnce(client, { owner, repo }, args.pr_number!),
};

interface ReviewArgs {
  pr_number?: number;
  body?: string;
  event?: string;
  comments?: { path: string; line: number; body: string }[];
}

export const postReviewComment: GithubOperation<ReviewArgs> = {
  access: "write",
  check: (args) => void reviewRequest(args),
  run: (args, { client, owner, repo }) => postReview(client, { owner, repo }, reviewRequest(args)),
};

export const mergePullRequest: GithubOperation<MergeArgs> = {
  access: "write",
  check: (args) => void mergeRequest(args),
  run: (args, { client, owner, repo }) => mergeWhenGreen(client, { owner, repo }, mergeRequest(args)),
};

export const autoMergePullRequest: GithubOperation<MergeArgs & { timeout?: string }> = {
  access: "write",
  check(args) {
    mergeRequest(args);
    autoMergeTimeout(args.timeout);
  },
  run: (args, { client, owner, repo }) => autoMergePoll(client, { owner, repo }, mergeRequest(args)),
};
