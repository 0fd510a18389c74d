import type { FastifyInstance } from "fastify";
import { z } from "zod";
import { parseWith } from "../../resources/validate.ts";
import { requireAdmin } from "../auth.ts";
import { principalOf, type ApiContext } from "../context.ts";

/** What only the admin reads about the server itself: the audit log of refusals and the open event streams. */
export function registerAdminRoutes(app: FastifyInstance, ctx: ApiContext): void {
  app.get("/audit", async (request) => {
    requireAdmin(principalOf(request), "reading the audit log");
    const { limit } = parseWith(z.object({ limit: z.coerce.number().int().min(1).max(1000).default(100) }), request.query ?? {});
    return { items: ctx.audit.recent(limit), metadata: {} };
  });

  app.get("/streams", async (request) => {
    requireAdmin(principalOf(request), "counting the open event streams");
    return { open: app.sseStreams.size };
  });
}
