import { z } from "zod";
import { parseWith } from "../../resources/validate.ts";
import type { Attempt } from "../../store/data-store.ts";
import { STEP_KINDS, stepOwnerOf } from "../../store/journal-store.ts";
import { killAtJournalStep } from "../../util/fault-injection.ts";
import { OrkaError } from "../../util/errors.ts";
import { authorizeWorker, bearerToken } from "../auth.ts";
import type { ApiContext } from "../context.ts";
import { eventBatchSchema } from "./execution-events.ts";
import type { WorkerRoute } from "./worker-route.ts";

export const MAX_STEP_BYTES = 12 * 1024 * 1024;
export const MAX_RESULT_BYTES = 10 * 1024 * 1024;

/** A Task's result is at most 10 MB, however it is sent. */
export function refuseOversizedResult(bytes: number): void {
  if (bytes > MAX_RESULT_BYTES) throw new OrkaError("payload_too_large", "result exceeds 10MB limit");
}

/** A worker writes the step it is about to act on, after any it held until then (a model answer whose tool calls had not run). */
const MAX_STEPS_PER_WRITE = 8;

const stepSchema = z.strictObject({
  run: z.number().int().positive(),
  seq: z.number().int().positive(),
  kind: z.enum(STEP_KINDS),
  messages: z.array(z.record(z.string(), z.unknown())).max(10_000),
  detail: z.record(z.string(), z.unknown()).default({}),
});

/** Steps in order, with the execution events emitted since the worker's last call, carried along to save a round trip. */
export const journalWriteSchema = z.strictObject({
  steps: z.array(stepSchema).min(1).max(MAX_STEPS_PER_WRITE),
  events: eventBatchSchema.default([]),
});

/** A write of the journal route: the last step may be the run's final answer, which is also the Task's result. */
const journalRouteSchema = journalWriteSchema.extend({
  answerIsResult: z.literal(true).optional(),
});

export type JournalWrite = z.infer<typeof journalWriteSchema>;

/**
 * Writes the steps and the events that came with them in one commit (a step already written as sent
 * changes nothing); with `result`, the Task's result too, and `inSameCommit` runs in that commit after them.
 */
export function writeSteps(ctx: ApiContext, attempt: Attempt, { steps, events }: JournalWrite, also: { result?: string; inSameCommit?: () => void } = {}): { storedBytes: number } {
  for (const step of steps) killAtJournalStep("server", attempt.task, step.seq);
  const owner = stepOwnerOf(attempt);
  const { written } = ctx.data.appendEventsWith(attempt.namespace, attempt.task, events, () => {
    const storedBytes = steps.reduce((stored, step) => stored + ctx.journal.append(owner, step).storedBytes, 0);
    if (also.result !== undefined) ctx.data.putResult(attempt.namespace, attempt.task, also.result);
    also.inSameCommit?.();
    return { storedBytes };
  });
  for (const step of steps) killAtJournalStep("server-uncommitted", attempt.task, step.seq);
  return written;
}

/** The text of a write's last step when it is a final answer (a response without tool calls) that says something. */
function finalAnswerOf(steps: JournalWrite["steps"]): string {
  const last = steps.at(-1)!;
  const [message] = last.messages as { role?: unknown; content?: unknown; toolCalls?: unknown[] }[];
  const answer = last.kind === "response" && message?.role === "assistant" && !message.toolCalls?.length && typeof message.content === "string" ? message.content : "";
  if (!answer.trim()) throw new OrkaError("invalid_argument", "answerIsResult needs the write's last step to be a final answer: a response without tool calls whose text is not empty");
  refuseOversizedResult(Buffer.byteLength(answer));
  return answer;
}

/** The attempt journal: a worker writes each step before acting on it, and reads its run back to resume. */
export function internalJournalRoutes(ctx: ApiContext): WorkerRoute[] {
  return [
    {
      method: "POST",
      url: "/journal/:ns/:task",
      bodyLimit: MAX_STEP_BYTES,
      handle: (request) => {
        const attempt = authorizeWorker(ctx.data, bearerToken(request), request.params.ns, request.params.task);
        const { answerIsResult, ...write } = parseWith(journalRouteSchema, request.body ?? {});
        return writeSteps(ctx, attempt, write, { result: answerIsResult ? finalAnswerOf(write.steps) : undefined });
      },
    },
    {
      method: "GET",
      url: "/journal/:ns/:task",
      handle: (request) => {
        const attempt = authorizeWorker(ctx.data, bearerToken(request), request.params.ns, request.params.task);
        const { run } = parseWith(z.object({ run: z.coerce.number().int().positive() }), request.query);
        return { steps: ctx.journal.steps(attempt.taskUid, run) };
      },
    },
  ];
}
