import type { FastifyInstance } from "fastify";
import { z } from "zod";
import { parseWith } from "../../resources/validate.ts";
import { STEP_KINDS, stepOwnerOf } from "../../store/journal-store.ts";
import { killBeforeJournalStep } from "../../util/fault-injection.ts";
import { authorizeWorker, bearerToken } from "../auth.ts";
import type { ApiContext } from "../context.ts";
import { eventBatchSchema } from "./routes.ts";

type TaskParams = { ns: string; task: string };

const MAX_STEP_BYTES = 12 * 1024 * 1024;
const stepSchema = z.object({
  run: z.number().int().positive(),
  seq: z.number().int().positive(),
  kind: z.enum(STEP_KINDS),
  messages: z.array(z.record(z.string(), z.unknown())).max(10_000),
  detail: z.record(z.string(), z.unknown()).default({}),
  /** Execution events emitted since the worker's last call, carried along to save a round trip. */
  events: eventBatchSchema.default([]),
});

/** The attempt journal: a worker writes each step before acting on it, and reads its run back to resume. */
export function registerInternalJournalRoutes(app: FastifyInstance, ctx: ApiContext): void {
  app.post<{ Params: TaskParams }>("/journal/:ns/:task", { bodyLimit: MAX_STEP_BYTES }, async (request) => {
    const attempt = authorizeWorker(ctx.data, bearerToken(request), request.params.ns, request.params.task);
    const step = parseWith(stepSchema, request.body ?? {});
    killBeforeJournalStep("server", attempt.task, step.seq);
    const { events, ...journalled } = step;
    // The step and the events that came with it are one commit.
    return ctx.data.appendEventsWith(attempt.namespace, attempt.task, events, () => ctx.journal.append(stepOwnerOf(attempt), journalled)).written;
  });

  app.get<{ Params: TaskParams; Querystring: { run?: string } }>("/journal/:ns/:task", async (request) => {
    const attempt = authorizeWorker(ctx.data, bearerToken(request), request.params.ns, request.params.task);
    const { run } = parseWith(z.object({ run: z.coerce.number().int().positive() }), request.query ?? {});
    return { steps: ctx.journal.steps(attempt.taskUid, run) };
  });
}
