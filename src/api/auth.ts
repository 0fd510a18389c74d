import rateLimit, { normalizeIP } from "@fastify/rate-limit";
import type { FastifyInstance, FastifyReply, FastifyRequest } from "fastify";
import { boundNamespace, canReadNamespace, type Principal } from "../auth/principal.ts";
import { sha256Hex } from "../util/hash.ts";
import { parseBearer } from "../auth/authenticator.ts";
import type { Attempt, TaskDataStore } from "../store/data-store.ts";
import { OrkaError } from "../util/errors.ts";
import { DEFAULT_NAMESPACE, namespaceName } from "../resources/meta.ts";
import { redact } from "../policy/redact.ts";
import { isPublicRoute } from "./actions.ts";
import { requestedNamespace, type ApiContext } from "./context.ts";
import { sendError } from "./errors.ts";

/** Failed sign-ins one client may make per window; past it, failures are answered 429 (good credentials still pass). */
export interface SignInLimit {
  maxFailures: number;
  windowMs: number;
}

/** Fastify's trustProxy: no proxy, every proxy, or the proxies at these addresses and CIDR ranges. */
export type TrustProxy = boolean | string[];

/** How a surface answers an error: the API's shape, or a compatible protocol's. */
export type ErrorReply = (reply: FastifyReply, status: number, message: string) => FastifyReply;

/** A client as the sign-in limiter counts it and the audit log files it: its address, an IPv6 one by its /64 network. */
function clientOf(request: FastifyRequest): string {
  return normalizeIP(request.ip);
}

/**
 * Authenticates every /api/v1, /openai/v1 and /anthropic/v1 request, bounds failed sign-ins per client,
 * and keeps every refusal (401/403/429) in the audit log with a redacted reason, never the presented token.
 */
export function registerAuthentication(app: FastifyInstance, ctx: ApiContext, protocolErrorReply: (url: string) => ErrorReply | undefined): void {
  // Counted only on failure (the plugin's manual limiter), so a client's valid requests are never throttled.
  app.register(rateLimit, { global: false });
  let failureCounter: ReturnType<FastifyInstance["createRateLimit"]> | undefined;
  const failures = (request: FastifyRequest, increment: boolean) =>
    (failureCounter ??= app.createRateLimit({ max: ctx.signInLimit.maxFailures, timeWindow: ctx.signInLimit.windowMs, keyGenerator: clientOf }))(request, { increment });

  app.addHook("onRequest", async (request, reply) => {
    if (!isPublicRoute(request.url)) return;
    const header = (name: string) => (typeof request.headers[name] === "string" ? (request.headers[name] as string) : undefined);
    const credentials = {
      authorization: header("authorization"),
      txnToken: header("txn-token"),
      apiKey: request.url.startsWith("/anthropic/") ? header("x-api-key") : undefined,
    };
    // A client already past its limit does not get another server (a JWKS, Kubernetes) asked about yet another token.
    const mayCallRemote = async () => {
      const limit = await failures(request, false);
      return limit.isAllowed || !limit.isExceeded;
    };
    // The compatible endpoints authenticate like the API, but answer in their own protocol's error shape.
    const compat = protocolErrorReply(request.url);
    try {
      request.principal = await ctx.authenticator.authenticate(credentials, mayCallRemote);
    } catch (err) {
      const status = err instanceof OrkaError ? err.httpStatus : 401;
      if (status === 401) {
        const limit = await failures(request, true);
        if (!limit.isAllowed && limit.isExceeded) {
          request.refusal = "too many failed sign-ins";
          reply.header("retry-after", String(limit.ttlInSeconds));
          return (compat ?? sendError)(reply, 429, `too many failed sign-ins from this client; retry in ${limit.ttlInSeconds} s`);
        }
      }
      if (!compat) throw err;
      request.refusal = err instanceof Error ? err.message : "invalid token";
      return compat(reply, status, request.refusal);
    }
  });

  app.addHook("onResponse", async (request, reply) => {
    if (reply.statusCode !== 401 && reply.statusCode !== 403 && reply.statusCode !== 429) return;
    ctx.audit.record({
      method: request.method,
      path: request.url.split("?")[0],
      // Paths that match no route coalesce as one, or a flood of made-up paths would be a row each.
      route: request.routeOptions.url ?? "(no route)",
      status: reply.statusCode,
      principal: request.principal?.name,
      client: clientOf(request),
      namespace: refusedNamespace(request),
      reason: redact(request.refusal ?? (reply.statusCode === 401 ? "unauthenticated" : "forbidden")),
    });
  });
}

/** The namespace a refusal is filed under: the one asked for (or the caller's) when it is a valid name, else none. */
function refusedNamespace(request: FastifyRequest): string | undefined {
  let namespace: string | undefined;
  try {
    namespace = requestedNamespace(request);
  } catch {
    // A body naming two different namespaces names none; the refusal is kept all the same.
    return undefined;
  }
  return namespaceName.safeParse(namespace).success ? namespace : undefined;
}

export function bearerToken(request: FastifyRequest): string {
  return parseBearer(request.headers.authorization);
}

/** The namespace a caller acts in when it asks for `requested` (from the query or the body): that one, else its own, else default. */
export function actingNamespace(principal: Principal, requested: string | undefined): string {
  return requested || principal.namespace || principal.transaction?.context.namespace || DEFAULT_NAMESPACE;
}

/** The namespace a request acts in, refused when the caller may not read it. */
export function resolveNamespace(principal: Principal, requested: string | undefined): string {
  const namespace = actingNamespace(principal, requested);
  if (!canReadNamespace(principal, namespace)) {
    throw new OrkaError("permission_denied", `namespace "${namespace}" not allowed, restricted to "${boundNamespace(principal)}"`);
  }
  return namespace;
}

export function requireAdmin(principal: Principal, what: string): void {
  if (!principal.admin) throw new OrkaError("permission_denied", `${what} needs an admin token`);
}

/** Operators run a namespace: Secrets and operator-only fields (provider endpoints, tool credentials). */
export function isOperator(principal: Principal): boolean {
  return principal.admin || principal.role === "operator";
}

export function requireOperator(principal: Principal, what: string): void {
  if (!isOperator(principal)) throw new OrkaError("permission_denied", `${what} needs an admin or operator token`);
}

/** A worker acting on its namespace's shared data (memory, sessions): the namespace must be its own. */
export function authorizeWorkerInNamespace(data: TaskDataStore, token: string, namespace: string): Attempt {
  const attempt = data.attemptByTokenHash(sha256Hex(token));
  if (!attempt) throw new OrkaError("unauthenticated", "authentication required");
  if (attempt.state !== "running") throw new OrkaError("permission_denied", "attempt is no longer running");
  if (attempt.namespace !== namespace) throw new OrkaError("permission_denied", "cross-namespace access denied");
  return attempt;
}

/** Worker tokens: one per attempt, valid only for that attempt's Task while it runs. */
export function authorizeWorker(data: TaskDataStore, token: string, namespace: string, task: string): Attempt {
  const attempt = data.attemptByTokenHash(sha256Hex(token));
  if (!attempt) throw new OrkaError("unauthenticated", "invalid token");
  if (attempt.namespace !== namespace) throw new OrkaError("permission_denied", "namespace not allowed");
  if (attempt.task !== task) throw new OrkaError("permission_denied", `token is not valid for task ${task}`);
  if (attempt.state !== "running") throw new OrkaError("permission_denied", "attempt is no longer running");
  return attempt;
}
