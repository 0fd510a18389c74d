import { boundNamespace, canReadNamespace, type Principal } from "../auth/principal.ts";
import { parseBearer } from "../auth/authenticator.ts";
import { hashToken, type Attempt, type TaskDataStore } from "../store/data-store.ts";
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
export function bearerToken(request: WithHeaders): string {
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

/** A request with headers: an HTTP request, or a worker's call over IPC. */
type WithHeaders = { headers: { authorization?: string } };

/** Each request's token digest, made once: a keyed tool call's token is looked up by up to four steps of its way in. */
const tokenDigests = new WeakMap<WithHeaders["headers"], string>();

/** The attempt whose worker token the request presents (in any state), or undefined; a malformed header throws as `bearerToken` does. */
export function attemptOfToken(data: TaskDataStore, request: WithHeaders): Attempt | undefined {
  let digest = tokenDigests.get(request.headers);
  if (digest === undefined) {
    digest = hashToken(bearerToken(request));
    tokenDigests.set(request.headers, digest);
  }
  return data.attemptByTokenHash(digest);
}

/** A worker acting on its namespace's shared data (memory, sessions): the namespace must be its own. */
export function authorizeWorkerInNamespace(data: TaskDataStore, request: WithHeaders, namespace: string): Attempt {
  const attempt = attemptOfToken(data, request);
  if (!attempt) throw new OrkaError("unauthenticated", "authentication required");
  if (attempt.state !== "running") throw new OrkaError("permission_denied", "attempt is no longer running");
  if (attempt.namespace !== namespace) throw new OrkaError("permission_denied", "cross-namespace access denied");
  return attempt;
}

/** The running attempt whose token the caller presents, or undefined: a route refuses a bad credential with its own message. */
export function runningAttemptOf(data: TaskDataStore, request: WithHeaders): Attempt | undefined {
  let attempt: Attempt | undefined;
  try {
    attempt = attemptOfToken(data, request);
  } catch {
    return undefined;
  }
  return attempt?.state === "running" ? attempt : undefined;
}

/** Worker tokens: one per attempt, valid only for that attempt's Task while it runs. */
export function authorizeWorker(data: TaskDataStore, request: WithHeaders, namespace: string, task: string): Attempt {
  const attempt = attemptOfToken(data, request);
  if (!attempt) throw new OrkaError("unauthenticated", "invalid token");
  if (attempt.namespace !== namespace) throw new OrkaError("permission_denied", "namespace not allowed");
  if (attempt.task !== task) throw new OrkaError("permission_denied", `token is not valid for task ${task}`);
  if (attempt.state !== "running") throw new OrkaError("permission_denied", "attempt is no longer running");
  return attempt;
}
