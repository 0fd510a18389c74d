import type { FastifyInstance, FastifyRequest } from "fastify";
import { GrantRefused } from "../auth/grants.ts";
import { redact } from "../policy/redact.ts";
import { namespaceName } from "../resources/meta.ts";
import { OrkaError } from "../util/errors.ts";
import { requestedNamespace, type ApiContext } from "./context.ts";
import { clientOf } from "./sign-in.ts";

/** Keeps why a request was refused (401/403) for the audit log: a refused grant's reason, else the error's message. */
export function noteRefusal(error: Error, request: FastifyRequest): void {
  if (error instanceof OrkaError && (error.code === "unauthenticated" || error.code === "permission_denied")) {
    request.refusal = error instanceof GrantRefused ? error.auditReason : error.message;
  }
}

/** Keeps every refusal (401/403/429) of every surface in the audit log with a redacted reason, never the presented token. */
export function registerRefusalAudit(app: FastifyInstance, ctx: ApiContext): void {
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
