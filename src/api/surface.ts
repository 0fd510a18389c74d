import type { FastifyInstance, FastifyPluginAsync, preHandlerAsyncHookHandler } from "fastify";
import { checkIsolation } from "../auth/isolation.ts";
import { OrkaError } from "../util/errors.ts";
import { routeAction } from "./actions.ts";
import { requestedNamespace, type ApiContext } from "./context.ts";
import { notFound, type ErrorAnswer, type ErrorReply } from "./errors.ts";
import { noteRefusal } from "./refusals.ts";
import { signInHook, type SignInFailures } from "./sign-in.ts";
import { takeTurns } from "./request-turns.ts";

/** One HTTP surface, mounted at its prefix: it owns every path under it, its routes under /v1. */
export interface Surface {
  /** With its trailing slash: the surface owns `/api/…`; a bare `/api` is an unknown path of the root. */
  prefix: string;
  /** How it answers unknown paths and refused sign-ins. */
  errorReply: ErrorReply;
  /** How it answers every other error. */
  errorAnswer: ErrorAnswer;
  /**
   * A public surface signs in every caller and checks each route's action against the caller's
   * namespace and transaction; the worker surface's routes each check the attempt's token instead.
   */
  public: boolean;
  /** A header that carries the key instead of Authorization (Anthropic clients send `x-api-key`). */
  apiKeyHeader?: string;
  /** Registers the surface's routes, relative to `<prefix>v1`. */
  v1: (v1: FastifyInstance) => void;
}

/** The surface as an encapsulated plugin: its error handler, its not-found handler and, when public, its callers' turns and checks. */
export function surfacePlugin(ctx: ApiContext, surface: Surface, failures: SignInFailures): FastifyPluginAsync {
  return async (app) => {
    app.setErrorHandler(errorHandler(ctx, surface.errorAnswer));
    app.setNotFoundHandler(notFound(surface.errorReply));
    if (surface.public) {
      app.addHook("onRoute", requireRouteAction);
      app.addHook("onRequest", takeTurns);
      app.addHook("onRequest", signInHook(ctx, failures, surface));
      app.addHook("preHandler", authorizeRoute(ctx));
    }
    await app.register(async (v1) => surface.v1(v1), { prefix: "/v1" });
  };
}

/** Every error is noted (a failed write marks the store not ready at once) and kept for the audit log when it refuses the caller. */
export function errorHandler(ctx: ApiContext, answer: ErrorAnswer): ErrorAnswer {
  return (error, request, reply) => {
    ctx.noteFailure(error);
    noteRefusal(error, request);
    return answer(error, request, reply);
  };
}

/** A public route without an action in api/actions.ts would go unchecked: the server refuses to start with one. */
function requireRouteAction(route: { method: string | string[]; url: string }): void {
  for (const method of [route.method].flat()) {
    if (method !== "HEAD" && !routeAction(method, route.url)) throw new OrkaError("internal", `${method} ${route.url} has no action in api/actions.ts`);
  }
}

/** Namespace isolation for every caller; for transaction-token callers also the route's scope and namespace. */
function authorizeRoute(ctx: ApiContext): preHandlerAsyncHookHandler {
  return async (request) => {
    const principal = request.principal;
    const route = principal && request.routeOptions.url ? routeAction(request.method, request.routeOptions.url) : undefined;
    if (!principal || !route?.scope) return;
    const namespace = requestedNamespace(request);
    checkIsolation(ctx.isolation, principal, namespace, request.body);
    if (!principal.transaction) return;
    const site = { method: request.method, path: request.url.split("?")[0], principal: principal.name, namespace };
    ctx.grants.operation(principal.transaction, route.action, route.scope, namespace, site);
  };
}
