import { createHash, randomBytes, timingSafeEqual } from "node:crypto";
import type { FastifyRequest } from "fastify";
import type { Db } from "../store/sqlite/db.ts";
import type { Attempt, TaskDataStore } from "../store/data-store.ts";
import { OrkaError } from "../util/errors.ts";
import { DEFAULT_NAMESPACE } from "../resources/meta.ts";

export interface Principal {
  name: string;
  admin: boolean;
  /** admin; operator (also operator-only fields and Secrets, in its namespace); reviewer (also memory review); user. */
  role: TokenRole | "admin";
  /** A token bound to one namespace may act only there. */
  namespace?: string;
}

const sha256 = (text: string) => createHash("sha256").update(text).digest("hex");

export const TOKEN_ROLES = ["user", "reviewer", "operator"] as const;
export type TokenRole = (typeof TOKEN_ROLES)[number];

export function bearerToken(request: FastifyRequest): string {
  const header = request.headers.authorization;
  if (!header) throw new OrkaError("unauthenticated", "missing authorization header");
  const match = /^Bearer\s+(\S+)$/i.exec(header);
  if (!match) throw new OrkaError("unauthenticated", "invalid token");
  return match[1];
}

/** API tokens: the admin token, and static tokens bound to a namespace (stored hashed). */
export class TokenAuthenticator {
  private readonly adminHash: Buffer;
  private readonly db: Db;

  constructor(db: Db, adminToken: string) {
    this.db = db;
    this.adminHash = Buffer.from(sha256(adminToken), "hex");
  }

  authenticate(token: string): Principal {
    if (timingSafeEqual(Buffer.from(sha256(token), "hex"), this.adminHash)) return { name: "admin", admin: true, role: "admin" };
    const row = this.db.prepare<[string], { name: string; namespace: string | null; role: string }>(
      "SELECT name, namespace, role FROM api_tokens WHERE token_hash = ?",
    ).get(sha256(token));
    if (!row) throw new OrkaError("unauthenticated", "invalid token");
    return { name: row.name, admin: row.role === "admin", role: row.role as Principal["role"], namespace: row.namespace ?? undefined };
  }

  /** Creates a token bound to one namespace; the plain value is returned once and never stored. */
  createToken(name: string, namespace: string, role: TokenRole = "user"): string {
    const token = `orka_${randomBytes(24).toString("base64url")}`;
    this.db.prepare("INSERT INTO api_tokens (token_hash, name, namespace, role, created_at) VALUES (?, ?, ?, ?, ?)").run(
      sha256(token), name, namespace, role, new Date().toISOString(),
    );
    return token;
  }
}

/** The namespace a request acts in (P4.1): query, then body, then the token's, then default. */
export function resolveNamespace(principal: Principal, requested: string | undefined): string {
  const namespace = requested || principal.namespace || DEFAULT_NAMESPACE;
  if (principal.namespace && namespace !== principal.namespace) {
    throw new OrkaError("permission_denied", `namespace "${namespace}" not allowed, restricted to "${principal.namespace}"`);
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
  const attempt = data.attemptByTokenHash(sha256(token));
  if (!attempt) throw new OrkaError("unauthenticated", "authentication required");
  if (attempt.state !== "running") throw new OrkaError("permission_denied", "attempt is no longer running");
  if (attempt.namespace !== namespace) throw new OrkaError("permission_denied", "cross-namespace access denied");
  return attempt;
}

/** Worker tokens: one per attempt, valid only for that attempt's Task while it runs. */
export function authorizeWorker(data: TaskDataStore, token: string, namespace: string, task: string): Attempt {
  const attempt = data.attemptByTokenHash(sha256(token));
  if (!attempt) throw new OrkaError("unauthenticated", "invalid token");
  if (attempt.namespace !== namespace) throw new OrkaError("permission_denied", "namespace not allowed");
  if (attempt.task !== task) throw new OrkaError("permission_denied", `token is not valid for task ${task}`);
  if (attempt.state !== "running") throw new OrkaError("permission_denied", "attempt is no longer running");
  return attempt;
}
