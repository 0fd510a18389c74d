import { z } from "zod";
import { parseWith } from "../../resources/validate.ts";
import { OrkaError } from "../../util/errors.ts";
import { authorizeWorker } from "../auth.ts";
import type { ApiContext } from "../context.ts";
import { journalWriteSchema, writeSteps, type JournalWrite } from "./journal-write.ts";
import type { WorkerRoute } from "./worker-route.ts";

export const MAX_STEP_BYTES = 12 * 1024 * 1024;
export const MAX_RESULT_BYTES = 10 * 1024 * 1024;

/** A Task's result is at most 10 MB, however it is sent. */
export function refuseOversizedResult(bytes: number): void {
  if (bytes > MAX_RESULT_BYTES) throw new OrkaError("payload_too_large", "result exceeds 10MB limit");
}

/** A write of the journal route: the last step may be the run's final answer, which is also the Task's result. */
const journalRouteSchema = journalWriteSchema.extend({
  answerIsResult: z.literal(true).optional(),
});

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
        const attempt = authorizeWorker(ctx.data, request, request.params.ns, request.params.task);
        const { answerIsResult, ...write } = parseWith(journalRouteSchema, request.body ?? {});
        return writeSteps(ctx, attempt, write, { result: answerIsResult ? finalAnswerOf(write.steps) : undefined });
      },
    },
    {
      method: "GET",
      url: "/journal/:ns/:task",
      handle: (request) => {
        const attempt = authorizeWorker(ctx.data, request, request.params.ns, request.params.task);
        const { run } = parseWith(z.object({ run: z.coerce.number().int().positive() }), request.query);
        return { steps: ctx.journal.steps(attempt.taskUid, run) };
      },
    },
  ];
}
