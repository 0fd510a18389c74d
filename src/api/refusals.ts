import type { FastifyInstance, FastifyRequest } from "fastify";
import { GrantRefused } from "../auth/grants.ts";
import { redact } from "../policy/redact.ts";
import { namespaceName } from "../resources/meta.ts";
import { OrkaError } from "../util/errors.ts";
import { requestedNamespace, type ApiContext, type NamespaceSource } from "./context.ts";
import { clientOf } from "./sign-in.ts";

/** Why a request was refused (401/403), for the audit log: a refused grant's reason, else the error's message. */
export function refusalReason(error: Error): string | undefined {
  if (!(error instanceof OrkaError && (error.code === "unauthenticated" || error.code === "permission_denied"))) return undefined;
  return error instanceof GrantRefused ? error.auditReason : error.message;
}

/** Keeps why a request was refused for the audit log. */
export function noteRefusal(error: Error, request: FastifyRequest): void {
  const reason = refusalReason(error);
  if (reason !== undefined) request.refusal = reason;
}

/** Keeps every refusal (401/403/429) of every surface in the audit log with a redacted reason, never the presented token. */
export function registerRefusalAudit(app: FastifyInstance, ctx: ApiContext): void {
  app.addHook("onResponse", async (request, reply) => {
    auditRefusal(ctx, request, { status: reply.statusCode, route: request.routeOptions.url, client: clientOf(request) });
  });
}

/** A request as the audit log files it. */
type AuditedRequest = Pick<FastifyRequest, "method" | "url" | "principal" | "refusal"> & NamespaceSource;

/** Files a refused request (401/403/429) in the audit log; any other answer is not a refusal. */
export function auditRefusal(ctx: ApiContext, request: AuditedRequest, answer: { status: number; route?: string; client: string }): void {
  const { status } = answer;
  if (status !== 401 && status !== 403 && status !== 429) return;
  ctx.audit.record({
    method: request.method,
    path: request.url.split("?")[0],
    // Paths that match no route coalesce as one, or a flood of made-up paths would be a row each.
    route: answer.route ?? "(no route)",
    status,
    principal: request.principal?.name,
    client: answer.client,
    namespace: refusedNamespace(request),
    reason: redact(request.refusal ?? (status === 401 ? "unauthenticated" : "forbidden")),
  });
}

/** The namespace a refusal is filed under: the one asked for (or the caller's) when it is a valid name, else none. */
function refusedNamespace(request: AuditedRequest): string | undefined {
  let namespace: string | undefined;
  try {
    namespace = requestedNamespace(request);
  } catch {
    // A body naming two different namespaces names none; the refusal is kept all the same.
    return undefined;
  }
  return namespaceName.safeParse(namespace).success ? namespace : undefined;
}
