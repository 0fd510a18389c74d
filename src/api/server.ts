import Fastify, { LogController, type FastifyBaseLogger, type FastifyInstance } from "fastify";
import { z } from "zod";
import type { Logger } from "../util/logger.ts";
import { namespaceName } from "../resources/meta.ts";
import { parseWith } from "../resources/validate.ts";
import { OrkaError } from "../util/errors.ts";
import { registerAuthentication, requireAdmin } from "./auth.ts";
import { TOKEN_ROLES } from "../auth/principal.ts";
import { GrantRefused } from "../auth/grants.ts";
import { isPublicRoute, routeAction } from "./actions.ts";
import { checkIsolation } from "../auth/isolation.ts";
import { registerDashboard, wantsDashboard } from "./dashboard.ts";
import { principalOf, requestedNamespace, type ApiContext } from "./context.ts";
import { errorHandler, sendError } from "./errors.ts";
import { registerInternalRoutes } from "./internal/routes.ts";
import { registerInternalMemoryRoutes } from "./internal/memory-routes.ts";
import { registerInternalCoordinationRoutes } from "./internal/coordination-routes.ts";
import { registerInternalApprovalRoutes } from "./internal/approval-routes.ts";
import { registerInternalJournalRoutes } from "./internal/journal-routes.ts";
import { registerEffectLedger } from "./internal/effect-ledger.ts";
import { registerKinds } from "./routes/kinds.ts";
import { registerSecretRoutes } from "./routes/secrets.ts";
import { registerMemoryRoutes } from "./routes/memory.ts";
import { registerTaskRoutes } from "./routes/tasks.ts";
import { anthropicError, registerAnthropicCompat } from "./compat/anthropic.ts";
import { openAIError, registerOpenAICompat } from "./compat/openai.ts";

/** The HTTP surface: /api/v1 for people and tools, /internal/v1 for workers, health probes. */
export interface ApiRoute {
  method: string;
  url: string;
}

export function buildApi(ctx: ApiContext, logger: Logger, routes: ApiRoute[] = []): FastifyInstance {
  const app = Fastify({ loggerInstance: logger as FastifyBaseLogger, logController: new LogController({ disableRequestLogging: true }), bodyLimit: 12 * 1024 * 1024, trustProxy: ctx.trustProxy }) as unknown as FastifyInstance;
  app.setErrorHandler((error: Error, request, reply) => {
    if (error instanceof OrkaError && (error.code === "unauthenticated" || error.code === "permission_denied")) {
      request.refusal = error instanceof GrantRefused ? error.auditReason : error.message;
    }
    const compat = compatErrorReply(request.url);
    if (!compat) return errorHandler(error, request, reply);
    const status = error instanceof OrkaError ? error.httpStatus : ((error as { statusCode?: number }).statusCode ?? 500);
    return compat(reply, status, status >= 500 ? "internal error" : error.message);
  });
  const dashboard = registerDashboard(app);
  app.setNotFoundHandler((request, reply) =>
    wantsDashboard(request) ? dashboard(request, reply) : sendError(reply, 404, `no route for ${request.method} ${request.url.split("?")[0]}`),
  );
  app.removeContentTypeParser("text/plain");
  app.addContentTypeParser(["text/plain", "application/octet-stream"], { parseAs: "buffer" }, (_request, body, done) => done(null, body));
  app.decorateRequest("principal", undefined);
  app.decorateRequest("refusal", undefined);
  app.addHook("onRoute", (route) => {
    for (const method of [route.method].flat()) {
      if (method === "HEAD") continue;
      if (isPublicRoute(route.url) && !routeAction(method, route.url)) throw new Error(`${method} ${route.url} has no action in api/actions.ts`);
      routes.push({ method, url: route.url });
    }
  });

  registerAuthentication(app, ctx, compatErrorReply);

  // Namespace isolation for everyone (B9); for transaction-token callers also the route's scope and namespace (B3).
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

  app.get("/healthz", async () => ({ status: "ok" }));
  app.get("/readyz", async (_request, reply) => (ctx.isReady() ? { status: "ready" } : sendError(reply, 503, "controller is starting")));

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
  app.post("/api/v1/auth/tokens", async (request, reply) => {
    requireAdmin(principalOf(request), "creating a token");
    const body = parseWith(
      z.object({ name: z.string().min(1).max(100), namespace: namespaceName, role: z.enum(TOKEN_ROLES).default("user") }),
      request.body ?? {},
    );
    return reply.code(201).send({ ...body, token: ctx.tokens.createToken(body.name, body.namespace, body.role) });
  });

  registerTaskRoutes(app, ctx);
  registerKinds(app, ctx);
  registerSecretRoutes(app, ctx);
  registerMemoryRoutes(app, ctx);
  registerEffectLedger(app, ctx);
  registerInternalRoutes(app, ctx);
  registerInternalMemoryRoutes(app, ctx);
  registerInternalCoordinationRoutes(app, ctx);
  registerInternalApprovalRoutes(app, ctx);
  registerInternalJournalRoutes(app, ctx);
  registerOpenAICompat(app, ctx);
  registerAnthropicCompat(app, ctx);
  return app;
}

/** The compatible endpoints answer errors in their own protocol's shape. */
function compatErrorReply(url: string) {
  if (url.startsWith("/openai/")) return openAIError;
  if (url.startsWith("/anthropic/")) return anthropicError;
  return undefined;
}
