import rateLimit, { normalizeIP } from "@fastify/rate-limit";
import type { FastifyInstance, FastifyRequest, onRequestAsyncHookHandler } from "fastify";
import { OrkaError } from "../util/errors.ts";
import type { SignInLimit } from "./auth.ts";
import type { ApiContext } from "./context.ts";
import type { ErrorReply } from "./errors.ts";

/** Counts a client's failed sign-ins; with `increment` false it only reads the count. */
export type SignInFailures = (request: FastifyRequest, increment: boolean) => ReturnType<ReturnType<FastifyInstance["createRateLimit"]>>;

/** How a public surface signs its callers in: its errors' shape (for the 429), and where a key may come instead of Authorization. */
export interface SignInOptions {
  errorReply: ErrorReply;
  apiKeyHeader?: string;
}

/** A client as the sign-in limiter counts it and the audit log files it: its address, an IPv6 one by its /64 network. */
export function clientOf(request: FastifyRequest): string {
  return normalizeIP(request.ip);
}

/**
 * One count of failed sign-ins per client for the whole server, so failures on one surface use up the
 * budget on every other. Counted only on failure (the plugin's manual limiter), so valid requests are never throttled.
 */
export function registerSignInLimit(app: FastifyInstance, limit: SignInLimit): SignInFailures {
  void app.register(rateLimit, { global: false });
  let counter: ReturnType<FastifyInstance["createRateLimit"]> | undefined;
  return (request, increment) =>
    (counter ??= app.createRateLimit({ max: limit.maxFailures, timeWindow: limit.windowMs, keyGenerator: clientOf }))(request, { increment });
}

/**
 * Signs in every request of a public surface, unknown paths included, so a caller who is not signed in
 * learns nothing but the 401. A refusal goes to the surface's error handler; past the client's limit of
 * failures it is a 429 with Retry-After (good credentials still pass).
 */
export function signInHook(ctx: ApiContext, failures: SignInFailures, options: SignInOptions): onRequestAsyncHookHandler {
  return async (request, reply) => {
    const header = (name: string) => (typeof request.headers[name] === "string" ? (request.headers[name] as string) : undefined);
    const credentials = {
      authorization: header("authorization"),
      txnToken: header("txn-token"),
      apiKey: options.apiKeyHeader ? header(options.apiKeyHeader) : undefined,
    };
    // A client already past its limit does not get another server (a JWKS, Kubernetes) asked about yet another token.
    const mayCallRemote = async () => {
      const limit = await failures(request, false);
      return limit.isAllowed || !limit.isExceeded;
    };
    try {
      request.principal = await ctx.authenticator.authenticate(credentials, mayCallRemote);
    } catch (err) {
      const status = err instanceof OrkaError ? err.httpStatus : 401;
      if (status === 401) {
        const limit = await failures(request, true);
        if (!limit.isAllowed && limit.isExceeded) {
          request.refusal = "too many failed sign-ins";
          reply.header("retry-after", String(limit.ttlInSeconds));
          return options.errorReply(reply, 429, `too many failed sign-ins from this client; retry in ${limit.ttlInSeconds} s`);
        }
      }
      throw err;
    }
  };
}
