import { z } from "zod";
import { parseWith } from "../../resources/validate.ts";
import { ERROR_CODES } from "../../util/errors.ts";
import { bearerToken } from "../auth.ts";
import type { ApiContext } from "../context.ts";
import { noContent, type WorkerRoute } from "./worker-route.ts";

const MAX_NOTE_CHARS = 4096;
const MAX_OUTCOME_BYTES = 12 * 1024 * 1024;

const outcomeSchema = z.union([
  z.object({ answer: z.object({ text: z.string(), usage: z.object({ inputTokens: z.number().int().min(0), outputTokens: z.number().int().min(0) }) }) }),
  z.object({ error: z.object({ message: z.string(), code: z.enum(ERROR_CODES).optional(), field: z.string().optional() }) }),
]);

/** A compat attempt reports to the request waiting for it: progress notes while it works, then its answer or failure. */
export function internalCompatRoutes(ctx: ApiContext): WorkerRoute[] {
  return [
    {
      method: "POST",
      url: "/compat/:attempt/progress",
      handle: (request) => {
        const attempt = ctx.compat.reporter(bearerToken(request), request.params.attempt);
        const { note } = parseWith(z.object({ note: z.string().max(MAX_NOTE_CHARS) }), request.body ?? {});
        attempt.progress(note);
        return noContent();
      },
    },
    {
      method: "POST",
      url: "/compat/:attempt/outcome",
      bodyLimit: MAX_OUTCOME_BYTES,
      handle: (request) => {
        const attempt = ctx.compat.reporter(bearerToken(request), request.params.attempt);
        attempt.finish(parseWith(outcomeSchema, request.body ?? {}));
        return noContent();
      },
    },
  ];
}
