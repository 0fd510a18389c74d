// post_review_comment: one review with a verdict and optional line comments. The arguments are
// checked before any credential is read, and the POST is never repeated by the client.
import type { Octokit } from "@octokit/rest";
import { OrkaError } from "../util/errors.ts";
import type { RepoName } from "./ci.ts";
import { githubFailure, isGithubRequestError } from "./failure.ts";

export const REVIEW_EVENTS = ["APPROVE", "REQUEST_CHANGES", "COMMENT"] as const;
export type ReviewEvent = (typeof REVIEW_EVENTS)[number];

export interface LineComment {
  path: string;
  line: number;
  body: string;
}

export interface ReviewRequest {
  prNumber: number;
  body: string;
  event: ReviewEvent;
  comments: LineComment[];
}

export interface SubmittedReview {
  review_id: number;
  status: "submitted";
  html_url: string;
}

function lineCommentProblem(comment: { path: string; line: number; body: string }): string | undefined {
  const path = comment.path.trim();
  if (!path || path.startsWith("/") || path.split("/").includes("..")) return "path must be relative to the repository root, without '..'";
  if (!Number.isInteger(comment.line) || comment.line < 1) return "line must be a new-file line number (1 or more)";
  if (!comment.body.trim()) return "body must not be empty";
  return undefined;
}

/** The review as the arguments ask for it, or the refusal that says what to fix. */
export function reviewRequest(args: { pr_number?: number; body?: string; event?: string; comments?: { path: string; line: number; body: string }[] }): ReviewRequest {
  if (!args.pr_number || !args.body || !args.event) throw new OrkaError("invalid_argument", "pr_number, body, and event are required");
  if (!REVIEW_EVENTS.includes(args.event as ReviewEvent)) {
    throw new OrkaError("invalid_argument", `invalid event value "${args.event}": must be APPROVE, REQUEST_CHANGES, or COMMENT`);
  }
  const comments = args.comments ?? [];
  comments.forEach((comment, index) => {
    const problem = lineCommentProblem(comment);
    if (problem) throw new OrkaError("invalid_argument", `comments[${index}]: ${problem}`);
  });
  return { prNumber: args.pr_number, body: args.body, event: args.event as ReviewEvent, comments: comments.map((c) => ({ ...c, path: c.path.trim() })) };
}

export async function postReview(client: Octokit, repo: RepoName, review: ReviewRequest): Promise<SubmittedReview> {
  try {
    const { data } = await client.rest.pulls.createReview({
      owner: repo.owner,
      repo: repo.repo,
      pull_number: review.prNumber,
      body: review.body,
      event: review.event,
      ...(review.comments.length ? { comments: review.comments } : {}),
    });
    return { review_id: data.id, status: "submitted", html_url: data.html_url };
  } catch (err) {
    const failure = githubFailure(err, "failed to post review");
    // GitHub refuses the whole review when one line comment names a line outside the diff: say how to fix it.
    if (review.comments.length && isGithubRequestError(err) && err.status === 422) {
      throw new OrkaError(failure.code, `${failure.message} (nothing was posted; each line comment must name a path and a new-file line that the pull request's diff changes or shows — read them with review_pull_request, or move the remark into the review body)`);
    }
    throw failure;
  }
}
