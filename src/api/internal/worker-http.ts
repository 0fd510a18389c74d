import type { FastifyInstance, FastifyReply, FastifyRequest } from "fastify";
import type { ApiContext } from "../context.ts";
import { answerWorkerRequest } from "./worker-pipeline.ts";
import { WORKER_API_PREFIX, type WorkerRequest, type WorkerRoute } from "./worker-route.ts";

/**
 * The worker API's routes over HTTP, for workers outside the server's process (a Job's): each route a
 * Fastify route that answers through the same pipeline as a pooled worker's call over IPC, with the
 * surface's body parsers, limits and reply hold around it. Raw results and artifacts come as bytes.
 */
export function registerWorkerHttpRoutes(app: FastifyInstance, ctx: ApiContext, routes: readonly WorkerRoute[]): void {
  app.addContentTypeParser(["text/plain", "application/octet-stream"], { parseAs: "buffer" }, (_request, body, done) => done(null, body));
  for (const route of routes) {
    app.route({
      method: route.method,
      url: route.url,
      bodyLimit: route.bodyLimit,
      handler: async (request, reply) => {
        const answer = await answerWorkerRequest(ctx, route, {
          method: request.method,
          route: WORKER_API_PREFIX + route.url,
          params: request.params as Record<string, string>,
          query: request.query as Record<string, string>,
          headers: request.headers as WorkerRequest["headers"],
          body: request.body,
          gone: connectionGone(request, reply),
          log: request.log,
        });
        if (answer.refusal !== undefined) request.refusal = answer.refusal;
        if (answer.replayed) reply.header("orka-replayed", "true");
        if (answer.type && answer.text !== "") reply.type(answer.type);
        return reply.code(answer.status).send(answer.text === "" ? undefined : answer.text);
      },
    });
  }
}

/** Aborted once the caller's connection closes: a route that started long work for it stops. */
function connectionGone(request: FastifyRequest, reply: FastifyReply): () => AbortSignal {
  let gone: AbortController | undefined;
  return () => {
    if (gone) return gone.signal;
    gone = new AbortController();
    if (reply.raw.destroyed || request.raw.socket?.destroyed) gone.abort();
    else reply.raw.on("close", () => gone!.abort());
    return gone.signal;
  };
}
