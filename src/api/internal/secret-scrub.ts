import { runningAttemptOf } from "../auth.ts";
import type { ApiContext } from "../context.ts";
import type { WorkerRequest } from "./worker-route.ts";

/**
 * Everything a worker sends to the control plane — results, events, journal steps, approval requests,
 * memory proposals, messages, plans, artifacts — is scrubbed of its Task's Secret values here, before
 * any route stores it: an upstream that echoed a key into a model answer or a tool result cannot get
 * it into anything a reader of the Task (its export, approvals, proposals, siblings) can see.
 */
export function scrubWorkerInput(ctx: ApiContext, request: WorkerRequest): void {
  if (request.body === undefined || request.body === null) return;
  const attempt = runningAttemptOf(ctx.data, request);
  if (attempt) request.body = ctx.secrets.redactBody(attempt.namespace, attempt.task, request.body);
}
