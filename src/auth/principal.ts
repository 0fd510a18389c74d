import type { z } from "zod";
import type { requestedBySchema } from "../resources/task.ts";
import type { TransactionClaims } from "./transaction-token.ts";

export const TOKEN_ROLES = ["user", "reviewer", "operator"] as const;
export type TokenRole = (typeof TOKEN_ROLES)[number];
export type RequestedBy = z.infer<typeof requestedBySchema>;

/** Who is calling, however they proved it: a static token, OIDC, a ServiceAccount or a transaction token. */
export interface Principal {
  name: string;
  admin: boolean;
  /** admin; operator (also operator-only fields and Secrets, in its namespace); reviewer (also memory review); user. */
  role: TokenRole | "admin";
  /** A caller bound to one namespace may act only there. */
  namespace?: string;
  /** Stamped on the Tasks this caller creates (spec.requestedBy). */
  requestedBy: RequestedBy;
  /** Present for transaction-token callers: the verified claims every grant check reads. */
  transaction?: TransactionClaims;
}

const MEMORY_REVIEW_SCOPE = "orka:memory:review";

/** Review and apply are a person's decision: admin, a reviewer token, or a transaction token with the review scope. */
export function canReviewMemory(principal: Principal): boolean {
  return principal.admin || principal.role === "reviewer" || (principal.transaction?.scopes.includes(MEMORY_REVIEW_SCOPE) ?? false);
}

/**
 * The one namespace a caller is bound to: its token's, OIDC's, its ServiceAccount's or its transaction's
 * `tctx.namespace`. An admin and a transaction without `tctx.namespace` are bound to none.
 */
export function boundNamespace(principal: Principal): string | undefined {
  return principal.admin ? undefined : (principal.namespace ?? principal.transaction?.context.namespace);
}

/** Whether a caller may read and act in a namespace (and so refer to its objects): a bound caller only in its own. */
export function canReadNamespace(principal: Principal, namespace: string): boolean {
  const bound = boundNamespace(principal);
  return bound === undefined || bound === namespace;
}
