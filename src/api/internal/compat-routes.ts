import type { FastifyInstance } from "fastify";
import { z } from "zod";
import { parseWith } from "../../resources/validate.ts";
import { ERROR_CODES } from "../../util/errors.ts";
import { bearerToken } from "../auth.ts";
import type { ApiContext } from "../context.ts";

type AttemptParams = { attempt: string };

const MAX_NOTE_CHARS = 4096;
const MAX_OUTCOME_BYTES = 12 * 1024 * 1024;

const outcomeSchema = z.union([
  z.object({ answer: z.object({ text: z.string(), usage: z.object({ inputTokens: z.number().int().min(0), outputTokens: z.number().int().min(0) }) }) }),
  z.object({ error: z.object({ message: z.string(), code: z.enum(ERROR_CODES).optional(), field: z.string().optional() }) }),
]);

/** A compat attempt reports to the request waiting for it: progress notes while it works, then its answer or failure. */
export function registerInternalCompatRoutes(app: FastifyInstance, ctx: ApiContext): void {
  app.post<{ Params: AttemptParams }>("/compat/:attempt/progress", async (request, reply) => {
    const attempt = ctx.compat.reporter(bearerToken(request), request.params.attempt);
    const { note } = parseWith(z.object({ note: z.string().max(MAX_NOTE_CHARS) }), request.body ?? {});
    attempt.progress(note);
    return reply.code(204).send();
  });

  app.post<{ Params: AttemptParams }>("/compat/:attempt/outcome", { bodyLimit: MAX_OUTCOME_BYTES }, async (request, reply) => {
    const attempt = ctx.compat.reporter(bearerToken(request), request.params.attempt);
    attempt.finish(parseWith(outcomeSchema, request.body ?? {}));
    return reply.code(204).send();
  });
}
