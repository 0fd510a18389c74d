import type { JWTPayload } from "jose";
import { canonicalDigest } from "../util/hash.ts";
import { OrkaError } from "../util/errors.ts";
import { verifyRs256 } from "./jwt.ts";

export const TXN_TOKEN_TYPE = "txntoken+jwt";
export const TXN_PROFILE = "transaction-token";
export const GRANT_MODES = ["off", "audit", "enforce"] as const;
export type GrantMode = (typeof GRANT_MODES)[number];

export interface TransactionTokenConfig {
  issuer: string;
  audience: string;
  jwksUrl: string;
  /** Whether `Authorization: Bearer` may carry a transaction token (otherwise only `Txn-Token`). */
  bearerAllowed: boolean;
  mode: GrantMode;
  /** Replacements for default scopes: holding any one scope of the list is enough. */
  scopeOverrides: Record<string, string[]>;
}

/** The signed constraints Orka reads from `tctx`; anything else in it is ignored. */
export const CONTEXT_KEYS = [
  "namespace", "taskName", "task", "taskType", "agent", "allowedAgents", "repo", "branch", "ref", "allowedTools",
  "provider", "allowedProviders", "model", "allowedModels", "secret", "purpose", "maxDepth", "e2e", "trace_id",
] as const;

/** What a verified transaction token says, as stamped on the Tasks it creates (spec.transaction). */
export interface TransactionClaims {
  profile: typeof TXN_PROFILE;
  id: string;
  issuer: string;
  audience: string;
  subject: string;
  requestingWorkload: string;
  scope: string;
  scopes: string[];
  /** Allowlisted `tctx` keys as strings; lists are kept as JSON text, `[]` included. */
  context: Record<string, string>;
  contextDigest: string;
  requesterContextDigest?: string;
}

const digest = (value: unknown) => canonicalDigest(value ?? {});

/** Any failure is the same 401: the caller learns nothing about which check failed. */
export async function verifyTransactionToken(token: string, config: TransactionTokenConfig): Promise<TransactionClaims> {
  let payload: JWTPayload;
  try {
    payload = await verifyRs256(token, { issuer: config.issuer, audience: config.audience, jwksUrl: config.jwksUrl, typ: TXN_TOKEN_TYPE });
  } catch {
    throw new OrkaError("unauthenticated", "invalid token");
  }
  const text = (name: string) => (typeof payload[name] === "string" ? (payload[name] as string).trim() : "");
  for (const claim of ["sub", "txn", "scope", "req_wl"]) if (!text(claim)) throw new OrkaError("unauthenticated", "invalid token");
  if (typeof payload.iat !== "number") throw new OrkaError("unauthenticated", "invalid token");
  const tctx = payload.tctx && typeof payload.tctx === "object" && !Array.isArray(payload.tctx) ? (payload.tctx as Record<string, unknown>) : {};
  return {
    profile: TXN_PROFILE,
    id: text("txn"),
    issuer: config.issuer,
    audience: config.audience,
    subject: text("sub"),
    requestingWorkload: text("req_wl"),
    scope: text("scope"),
    scopes: text("scope").split(/\s+/).filter(Boolean),
    context: allowlistedContext(tctx),
    contextDigest: digest(tctx),
    ...(payload.rctx !== undefined ? { requesterContextDigest: digest(payload.rctx) } : {}),
  };
}

function allowlistedContext(tctx: Record<string, unknown>): Record<string, string> {
  const context: Record<string, string> = {};
  for (const key of CONTEXT_KEYS) {
    const value = tctx[key];
    if (typeof value === "string") context[key] = value;
    else if (Array.isArray(value)) context[key] = JSON.stringify(value.map(String));
    else if (typeof value === "number" || typeof value === "boolean") context[key] = String(value);
  }
  return context;
}

/** A list constraint, written as JSON or CSV; undefined when the key is absent. An empty list allows nothing. */
export function contextList(context: Record<string, string>, key: string): string[] | undefined {
  const raw = context[key];
  if (raw === undefined) return undefined;
  const trimmed = raw.trim();
  if (trimmed.startsWith("[")) {
    try {
      const parsed: unknown = JSON.parse(trimmed);
      if (Array.isArray(parsed)) return parsed.map((v) => String(v).trim()).filter(Boolean);
    } catch {
      return [];
    }
  }
  return trimmed.split(",").map((v) => v.trim()).filter(Boolean);
}
