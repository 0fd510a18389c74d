import Fastify, { LogController, type FastifyBaseLogger, type FastifyInstance } from "fastify";
import type { Logger } from "../util/logger.ts";
import type { ApiContext } from "./context.ts";
import { apiErrorAnswer, protocolErrorAnswer, sendError, type ErrorReply } from "./errors.ts";
import { jsonBodyParser, MAX_REQUEST_BODY_BYTES, refuseNonObjectBody, refuseRepeatedQuery, registerJsonParser } from "./request-input.ts";
import { registerRefusalAudit } from "./refusals.ts";
import { registerSignInLimit } from "./sign-in.ts";
import { errorHandler, surfacePlugin, type Surface } from "./surface.ts";
import { dashboardPlugin } from "./dashboard.ts";
import { registerSseStreams } from "./sse.ts";
import { registerHealthProbes } from "./routes/health.ts";
import { registerAdminRoutes } from "./routes/admin.ts";
import { registerTokenRoutes } from "./routes/tokens.ts";
import { registerTaskRoutes } from "./routes/tasks.ts";
import { registerApprovalRoutes } from "./routes/approvals.ts";
import { registerTaskWatch } from "./routes/task-watch.ts";
import { registerKinds } from "./routes/kinds.ts";
import { registerSecretRoutes } from "./routes/secrets.ts";
import { registerMemoryRoutes } from "./routes/memory.ts";
import { internalRoutes } from "./internal/routes.ts";
import { internalMemoryRoutes } from "./internal/memory-routes.ts";
import { internalCoordinationRoutes } from "./internal/coordination-routes.ts";
import { internalApprovalRoutes } from "./internal/approval-routes.ts";
import { internalJournalRoutes } from "./internal/journal-routes.ts";
import { internalGithubRoutes } from "./internal/github-routes.ts";
import { internalBrokerRoutes } from "./internal/broker-routes.ts";
import { registerWorkerHttpRoutes } from "./internal/worker-http.ts";
import { workerCallAnswerer, type WorkerCallAnswerer } from "./internal/worker-calls.ts";
import type { WorkerRoute } from "./internal/worker-route.ts";
import { holdRepliesUntilCommitted } from "./held-output.ts";
import { anthropicError, registerAnthropicCompat } from "./compat/anthropic.ts";
import { openAIError, registerOpenAICompat } from "./compat/openai.ts";

declare module "fastify" {
  interface FastifyInstance {
    /** Answers a pooled worker's call to the worker API. */
    workerCalls: WorkerCallAnswerer;
  }
}

/** A route the server serves, as the route-authorization tests walk them. */
export interface ApiRoute {
  method: string;
  url: string;
}

/** Route parameters reach every valid object name (253 characters) and a percent-encoded file name (255 bytes). */
const MAX_PARAM_LENGTH = 3 * 255;

/**
 * The HTTP server: /api/v1 for people and tools, /internal/v1 for workers, /openai/v1 and /anthropic/v1
 * for clients of those protocols, each a surface with its own errors and caller checks; health probes;
 * the dashboard at / for everything else.
 */
export function buildApi(ctx: ApiContext, logger: Logger, routes: ApiRoute[] = []): FastifyInstance {
  const workerRoutes = workerApiRoutes(ctx);
  const surfaces = apiSurfaces(ctx, workerRoutes);
  const rootErrors = errorHandler(ctx, apiErrorAnswer);
  const app = Fastify({
    loggerInstance: logger as FastifyBaseLogger,
    logController: new LogController({ disableRequestLogging: true }),
    bodyLimit: MAX_REQUEST_BODY_BYTES,
    routerOptions: { maxParamLength: MAX_PARAM_LENGTH },
    trustProxy: ctx.trustProxy,
    // A URL the router cannot read (too long a segment, bad encoding) has no route, and so no surface to answer
    // it: the surface whose prefix it starts with does, as it answers its other errors.
    frameworkErrors: (error, request, reply) => {
      const surface = surfaces.find((s) => request.url.startsWith(s.prefix));
      return (surface ? errorHandler(ctx, surface.errorAnswer) : rootErrors)(error, request, reply);
    },
  }) as unknown as FastifyInstance;
  app.setErrorHandler(rootErrors);

  // What every surface shares: JSON bodies, the route list, single query parameters, the refusal audit,
  // open event streams, and one count of failed sign-ins per client.
  app.removeContentTypeParser("text/plain");
  registerJsonParser(app);
  app.decorateRequest("principal", undefined);
  app.decorateRequest("refusal", undefined);
  app.addHook("onRoute", (route) => {
    for (const method of [route.method].flat()) if (method !== "HEAD") routes.push({ method, url: route.url });
  });
  holdRepliesUntilCommitted(app, ctx.gate);
  app.addHook("preValidation", refuseRepeatedQuery);
  registerRefusalAudit(app, ctx);
  registerSseStreams(app);
  const failures = registerSignInLimit(app, ctx.signInLimit);

  registerHealthProbes(app, ctx);
  for (const surface of surfaces) void app.register(surfacePlugin(ctx, surface, failures), { prefix: surface.prefix });
  void app.register(dashboardPlugin({ surfaceSegments: surfaces.map((s) => s.prefix.split("/")[1]) }), { prefix: "/" });
  // Pooled workers reach the same routes over their IPC channel, through the same pipeline, without HTTP.
  app.decorate("workerCalls", workerCallAnswerer(ctx, workerRoutes, { parseJson: jsonBodyParser(app), maxParamLength: MAX_PARAM_LENGTH, log: app.log }));
  return app;
}

/** The surfaces, each the only one under its prefix. */
function apiSurfaces(ctx: ApiContext, workerRoutes: readonly WorkerRoute[]): Surface[] {
  const protocol = (errorReply: ErrorReply) => ({ errorReply, errorAnswer: protocolErrorAnswer(errorReply), public: true });
  return [
    { prefix: "/api/", errorReply: sendError, errorAnswer: apiErrorAnswer, public: true, v1: (v1) => registerRestApi(v1, ctx) },
    { prefix: "/internal/", errorReply: sendError, errorAnswer: apiErrorAnswer, public: false, v1: (v1) => registerWorkerHttpRoutes(v1, ctx, workerRoutes) },
    { prefix: "/openai/", ...protocol(openAIError), v1: (v1) => registerOpenAICompat(v1, ctx) },
    { prefix: "/anthropic/", ...protocol(anthropicError), apiKeyHeader: "x-api-key", v1: (v1) => registerAnthropicCompat(v1, ctx) },
  ];
}

/** The REST API takes JSON objects only. */
function registerRestApi(api: FastifyInstance, ctx: ApiContext): void {
  api.addHook("preValidation", refuseNonObjectBody);
  registerTokenRoutes(api, ctx);
  registerAdminRoutes(api, ctx);
  registerTaskRoutes(api, ctx);
  registerApprovalRoutes(api, ctx);
  registerTaskWatch(api, ctx);
  registerKinds(api, ctx);
  registerSecretRoutes(api, ctx);
  registerMemoryRoutes(api, ctx);
}

/** The worker API: the worker's side of the control plane, every route checked against the attempt's token. */
function workerApiRoutes(ctx: ApiContext): WorkerRoute[] {
  return [
    ...internalRoutes(ctx),
    ...internalMemoryRoutes(ctx),
    ...internalCoordinationRoutes(ctx),
    ...internalApprovalRoutes(ctx),
    ...internalJournalRoutes(ctx),
    ...internalGithubRoutes(ctx),
    ...internalBrokerRoutes(ctx),
  ];
}
