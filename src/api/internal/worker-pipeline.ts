import { apiError, errorBody } from "../errors.ts";
import { refusalReason } from "../refusals.ts";
import type { ApiContext } from "../context.ts";
import { closeEffect, openEffect } from "./effect-ledger.ts";
import { scrubWorkerInput } from "./secret-scrub.ts";
import { jsonAnswer, WorkerReply, type WorkerAnswer, type WorkerRequest, type WorkerRoute } from "./worker-route.ts";

/**
 * Answers a worker API call, whichever way it came: the route's own check on the body as sent, the body
 * scrubbed of the Task's Secret values, the effect ledger (a keyed call answered from its record, or
 * recorded as started and committed first), the route, and its answer or error recorded as the call's
 * outcome. The route runs once the ledger's record of a keyed call is committed; the way out holds the
 * answer until the route's own writes are.
 */
export async function answerWorkerRequest(ctx: ApiContext, route: WorkerRoute, request: WorkerRequest): Promise<WorkerAnswer> {
  let answer: WorkerAnswer;
  try {
    route.check?.(request);
    scrubWorkerInput(ctx, request);
    const recorded = await openEffect(ctx, route, request);
    if (recorded) return recorded;
    answer = answerOf(await route.handle(request));
  } catch (error) {
    answer = errorAnswer(ctx, request, error as Error);
  }
  try {
    return closeEffect(ctx, request, answer);
  } catch (error) {
    return errorAnswer(ctx, request, error as Error);
  }
}

function answerOf(value: unknown): WorkerAnswer {
  return value instanceof WorkerReply ? jsonAnswer(value.status, value.body) : jsonAnswer(200, value ?? null);
}

/** Every error is noted (a failed write marks the store not ready at once) and answered in the API's one shape. */
export function errorAnswer(ctx: ApiContext, request: Pick<WorkerRequest, "headers" | "log">, error: Error): WorkerAnswer {
  ctx.noteFailure(error);
  const { status, message } = apiError(error, request);
  return { ...jsonAnswer(status, errorBody(status, message)), refusal: refusalReason(error) };
}
