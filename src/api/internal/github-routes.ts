import { z } from "zod";
import { githubClientFor } from "../../github/client.ts";
import { githubFailure } from "../../github/failure.ts";
import type { GithubOperation } from "../../github/operation.ts";
import { commentOnIssue, getIssue, listIssues } from "../../github/issues.ts";
import { autoMergePullRequest, checkPullRequestCi, createPullRequest, mergePullRequest, postReviewComment } from "../../github/pull-request-actions.ts";
import { listPullRequests, reviewPullRequest } from "../../github/pull-requests.ts";
import { checkPrReviewMarker } from "../../github/review-marker.ts";
import { resolveGithubTarget } from "../../github/scope.ts";
import { parseWith } from "../../resources/validate.ts";
import { autoMergePullRequestArgs, checkPullRequestCiArgs, createPullRequestArgs, mergePullRequestArgs, postReviewCommentArgs } from "../../tools/github/pr-lifecycle-schemas.ts";
import {
  checkPrReviewMarkerArgs, commentOnIssueArgs, getIssueArgs, listIssuesArgs, listPullRequestsArgs, reviewPullRequestArgs,
} from "../../tools/github/schemas.ts";
import { runValidationArgs } from "../../tools/monitors/validation-args.ts";
import { runValidation } from "../../github/validation.ts";
import type { CheckoutPlan } from "../../workspace/checkout.ts";
import { OrkaError } from "../../util/errors.ts";
import { authorizeWorker } from "../auth.ts";
import type { ApiContext } from "../context.ts";
import { authorizeToolUse } from "./tool-use.ts";
import { WORKER_API_PREFIX, type WorkerRoute } from "./worker-route.ts";

const ROUTE = "/github/:ns/:task/:tool";
const SITE = `${WORKER_API_PREFIX}${ROUTE}`;

interface RouteOperation {
  schema: z.ZodObject;
  operation: GithubOperation<never>;
}

/** One table line: the tool's argument schema (the worker's own) and its server half, type-checked against each other. */
function operation<S extends z.ZodObject>(schema: S, op: GithubOperation<z.output<S>>): RouteOperation {
  return { schema, operation: op as GithubOperation<never> };
}

/** Every GitHub tool's server half, by tool name. */
const GITHUB_OPERATIONS: Record<string, RouteOperation> = {
  list_pull_requests: operation(listPullRequestsArgs, listPullRequests),
  create_pull_request: operation(createPullRequestArgs, createPullRequest),
  check_pr_review_marker: operation(checkPrReviewMarkerArgs, checkPrReviewMarker),
  check_pull_request_ci: operation(checkPullRequestCiArgs, checkPullRequestCi),
  merge_pull_request: operation(mergePullRequestArgs, mergePullRequest),
  auto_merge_pull_request: operation(autoMergePullRequestArgs, autoMergePullRequest),
  review_pull_request: operation(reviewPullRequestArgs, reviewPullRequest),
  post_review_comment: operation(postReviewCommentArgs, postReviewComment),
  list_issues: operation(listIssuesArgs, listIssues),
  get_issue: operation(getIssueArgs, getIssue),
  comment_on_issue: operation(commentOnIssueArgs, commentOnIssue),
  run_validation: operation(runValidationArgs, runValidation),
};

/**
 * /internal/v1/github/<ns>/<task>/<tool>: the server half of the GitHub tools. The attempt must have been
 * given the tool (and its Task's grant must allow it); the body is checked with the tool's own schema,
 * strictly; then the scope and the credential are resolved (see src/github/scope.ts) and GitHub is called
 * with a client of this call's token. What GitHub answers is scrubbed of that token and the Task's Secrets.
 */
export function internalGithubRoutes(ctx: ApiContext): WorkerRoute[] {
  return [
    {
      method: "POST",
      url: ROUTE,
      handle: async (request) => {
        const { ns, task: taskName, tool } = request.params;
        const attempt = authorizeWorker(ctx.data, request, ns, taskName);
        const entry = Object.hasOwn(GITHUB_OPERATIONS, tool) ? GITHUB_OPERATIONS[tool] : undefined;
        if (!entry) throw new OrkaError("not_found", `"${tool}" is not a GitHub tool of this Orka build`);
        const caller = await authorizeToolUse(ctx, attempt, [tool], SITE);
        const args = parseWith(z.strictObject(entry.schema.shape), request.body ?? {}) as never;
        const { operation: op } = entry;
        op.check?.(args, caller);
        const target = await resolveGithubTarget({ store: ctx.store, grants: ctx.grants, settings: ctx.github, site: SITE }, caller, args, op.access, (task) => op.checkTask?.(args, task));
        const scrub = (text: string) => ctx.secrets.redact(ns, attempt.task, text, [target.token]);
        // A worker that goes away (its Task cancelled, its process lost) ends the GitHub requests it started.
        const client = githubClientFor(ctx.github, target.token, request.gone());
        try {
          const checkOutForAttempt = (plan: CheckoutPlan) => ctx.runner.checkOutForAttempt(attempt.id, plan);
          const result = await op.run(args, { client, owner: target.owner, repo: target.repo, target, settings: ctx.github, caller, checkOutForAttempt });
          return JSON.parse(scrub(JSON.stringify(result ?? null)));
        } catch (err) {
          const failure = githubFailure(err);
          throw new OrkaError(failure.code, scrub(failure.message));
        }
      },
    },
  ];
}
