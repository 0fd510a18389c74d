import { boundNamespace, canReadNamespace, type Principal } from "../auth/principal.ts";
import { sha256Hex } from "../util/hash.ts";
import { parseBearer } from "../auth/authenticator.ts";
import type { Attempt, TaskDataStore } from "../store/data-store.ts";
import { OrkaError } from "../util/errors.ts";
import { DEFAULT_NAMESPACE } from "../resources/meta.ts";

/** Failed sign-ins one client may make per window; past it, failures are answered 429 (good credentials still pass). */
export interface SignInLimit {
  maxFailures: number;
  windowMs: number;
}

/** Fastify's trustProxy: no proxy, every proxy, or the proxies at these addresses and CIDR ranges. */
export type TrustProxy = boolean | string[];

/** The caller's bearer token, from any request with headers: an HTTP request or a worker's call over IPC. */
export function bearerToken(request: { headers: { authorization?: string } }): string {
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

/** The running attempt whose token the caller presents, or undefined: a route refuses a bad credential with its own message. */
export function runningAttemptOf(data: TaskDataStore, request: { headers: { authorization?: string } }): Attempt | undefined {
  let token: string;
  try {
    token = bearerToken(request);
  } catch {
    return undefined;
  }
  const attempt = data.attemptByTokenHash(sha256Hex(token));
  return attempt?.state === "running" ? attempt : undefined;
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
