import type { FastifyInstance } from "fastify";
import type { ApiContext } from "../context.ts";
import { sendError } from "../errors.ts";

/** Liveness and readiness probes: unauthenticated, outside every surface. */
export function registerHealthProbes(app: FastifyInstance, ctx: ApiContext): void {
  app.get("/healthz", async () => ({ status: "ok" }));
  app.get("/readyz", async (_request, reply) => {
    const problem = ctx.readiness();
    return problem ? sendError(reply, 503, problem) : { status: "ready" };
  });
}
