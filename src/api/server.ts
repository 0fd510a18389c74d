import Fastify, { LogController, type FastifyBaseLogger, type FastifyInstance, type FastifyReply, type FastifyRequest } from "fastify";
import { z } from "zod";
import type { Logger } from "../util/logger.ts";
import { parseWith } from "../resources/validate.ts";
import { OrkaError } from "../util/errors.ts";
import { registerAuthentication, requireAdmin } from "./auth.ts";
import { GrantRefused } from "../auth/grants.ts";
import { isPublicRoute, routeAction } from "./actions.ts";
import { checkIsolation } from "../auth/isolation.ts";
import { registerDashboard, wantsDashboard } from "./dashboard.ts";
import { principalOf, requestedNamespace, type ApiContext } from "./context.ts";
import { errorHandler, knownError, sendError } from "./errors.ts";
import { refuseNonObjectBody, refuseRepeatedQuery, registerJsonParser } from "./request-input.ts";
import { registerInternalRoutes } from "./internal/routes.ts";
import { registerInternalMemoryRoutes } from "./internal/memory-routes.ts";
import { registerInternalCoordinationRoutes } from "./internal/coordination-routes.ts";
import { registerInternalApprovalRoutes } from "./internal/approval-routes.ts";
import { registerInternalJournalRoutes } from "./internal/journal-routes.ts";
import { registerWorkerInputScrub } from "./internal/secret-scrub.ts";
import { registerEffectLedger } from "./internal/effect-ledger.ts";
import { registerKinds } from "./routes/kinds.ts";
import { registerSecretRoutes } from "./routes/secrets.ts";
import { registerMemoryRoutes } from "./routes/memory.ts";
import { registerTaskRoutes } from "./routes/tasks.ts";
import { registerTaskWatch } from "./routes/task-watch.ts";
import { registerSseStreams } from "./sse.ts";
import { registerTokenRoutes } from "./routes/tokens.ts";
import { anthropicError, registerAnthropicCompat } from "./compat/anthropic.ts";
import { openAIError, registerOpenAICompat } from "./compat/openai.ts";

/** The HTTP surface: /api/v1 for people and tools, /internal/v1 for workers, health probes. */
export interface ApiRoute {
  method: string;
  url: string;
}

/** Route parameters reach every valid object name (253 characters) and a percent-encoded file name (255 bytes). */
const MAX_PARAM_LENGTH = 3 * 255;

export function buildApi(ctx: ApiContext, logger: Logger, routes: ApiRoute[] = []): FastifyInstance {
  const app = Fastify({
    loggerInstance: logger as FastifyBaseLogger,
    logController: new LogController({ disableRequestLogging: true }),
    bodyLimit: 12 * 1024 * 1024,
    routerOptions: { maxParamLength: MAX_PARAM_LENGTH },
    trustProxy: ctx.trustProxy,
    // A URL the router refuses (too long a segment, bad encoding) is answered like any other error.
    frameworkErrors: (error, request, reply) => handleError(error, request, reply),
  }) as unknown as FastifyInstance;
  app.setErrorHandler((error: Error, request, reply) => {
    ctx.noteFailure(error);
    return handleError(error, request, reply);
  });
  const dashboard = registerDashboard(app);
  app.setNotFoundHandler((request, reply) => {
    if (wantsDashboard(request)) return dashboard(request, reply);
    const notFound = compatErrorReply(request.url) ?? sendError;
    return notFound(reply, 404, `no route for ${request.method} ${request.url.split("?")[0]}`);
  });
  app.removeContentTypeParser("text/plain");
  registerJsonParser(app);
  app.decorateRequest("principal", undefined);
  app.decorateRequest("refusal", undefined);
  app.addHook("onRoute", (route) => {
    for (const method of [route.method].flat()) {
      if (method === "HEAD") continue;
      if (isPublicRoute(route.url) && !routeAction(method, route.url)) throw new Error(`${method} ${route.url} has no action in api/actions.ts`);
      routes.push({ method, url: route.url });
    }
  });

  // After authentication, so a caller who is not signed in learns nothing about its request but the 401.
  app.addHook("preValidation", refuseRepeatedQuery);
  registerAuthentication(app, ctx, compatErrorReply);

  // Namespace isolation for everyone; for transaction-token callers also the route's scope and namespace.
  app.addHook("preHandler", async (request) => {
    const principal = request.principal;
    const route = principal && request.routeOptions.url ? routeAction(request.method, request.routeOptions.url) : undefined;
    if (!principal || !route?.scope) return;
    const namespace = requestedNamespace(request);
    checkIsolation(ctx.isolation, principal, namespace, request.body);
    if (!principal.transaction) return;
    const site = { method: request.method, path: request.url.split("?")[0], principal: principal.name, namespace };
    ctx.grants.operation(principal.transaction, route.action, route.scope, namespace, site);
  });

  app.get("/api/v1/audit", async (request) => {
    requireAdmin(principalOf(request), "reading the audit log");
    const { limit } = parseWith(z.object({ limit: z.coerce.number().int().min(1).max(1000).default(100) }), request.query ?? {});
    return { items: ctx.audit.recent(limit), metadata: {} };
  });

  registerSseStreams(app);
  app.get("/api/v1/streams", async (request) => {
    requireAdmin(principalOf(request), "counting the open event streams");
    return { open: app.sseStreams.size };
  });

  app.get("/healthz", async () => ({ status: "ok" }));
  app.get("/readyz", async (_request, reply) => {
    const problem = ctx.readiness();
    return problem ? sendError(reply, 503, problem) : { status: "ready" };
  });

  app.get("/api/v1/auth/validate", async () => ({ authenticated: true }));
  app.get("/api/v1/auth/whoami", async (request) => {
    const principal = principalOf(request);
    return {
      name: principal.name,
      admin: principal.admin,
      role: principal.role,
      namespace: principal.namespace ?? principal.transaction?.context.namespace ?? null,
      ...(principal.transaction ? { transaction: { id: principal.transaction.id, scopes: principal.transaction.scopes } } : {}),
    };
  });
  // The REST API takes JSON objects only; the worker API also takes raw results and artifacts.
  void app.register(async (api) => {
    api.addHook("preValidation", refuseNonObjectBody);
    registerTokenRoutes(api, ctx);
    registerTaskRoutes(api, ctx);
    registerTaskWatch(api, ctx);
    registerKinds(api, ctx);
    registerSecretRoutes(api, ctx);
    registerMemoryRoutes(api, ctx);
  });
  void app.register(async (internal) => {
    internal.addContentTypeParser(["text/plain", "application/octet-stream"], { parseAs: "buffer" }, (_request, body, done) => done(null, body));
    registerWorkerInputScrub(internal, ctx);
    registerEffectLedger(internal, ctx);
    registerInternalRoutes(internal, ctx);
    registerInternalMemoryRoutes(internal, ctx);
    registerInternalCoordinationRoutes(internal, ctx);
    registerInternalApprovalRoutes(internal, ctx);
    registerInternalJournalRoutes(internal, ctx);
  });
  registerOpenAICompat(app, ctx);
  registerAnthropicCompat(app, ctx);
  return app;
}

/** Every error, the router's included, in the API's shape or the compatible endpoint's own. */
function handleError(error: Error, request: FastifyRequest, reply: FastifyReply) {
  if (error instanceof OrkaError && (error.code === "unauthenticated" || error.code === "permission_denied")) {
    request.refusal = error instanceof GrantRefused ? error.auditReason : error.message;
  }
  const compat = compatErrorReply(request.url);
  if (!compat) return errorHandler(error, request, reply);
  const known = knownError(error, request);
  const status = known instanceof OrkaError ? known.httpStatus : ((known as { statusCode?: number }).statusCode ?? 500);
  return compat(reply, status, status === 500 ? "internal error" : known.message);
}

/** The compatible endpoints answer errors in their own protocol's shape. */
function compatErrorReply(url: string) {
  if (url.startsWith("/openai/")) return openAIError;
  if (url.startsWith("/anthropic/")) return anthropicError;
  return undefined;
}
