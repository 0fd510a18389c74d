import { OrkaError } from "../util/errors.ts";
import { looksLikeJwt, unverifiedType } from "./jwt.ts";
import type { OidcAuthenticator } from "./oidc.ts";
import type { Principal } from "./principal.ts";
import type { TokenAuthenticator } from "./static-tokens.ts";
import type { TokenReviewAuthenticator } from "./token-review.ts";
import { TXN_TOKEN_TYPE, verifyTransactionToken, type TransactionTokenConfig } from "./transaction-token.ts";

/** The credentials a request carries; the raw values never leave this module's callers' stack. */
export interface PresentedCredentials {
  authorization?: string;
  txnToken?: string;
  /** Anthropic clients send their key as `x-api-key`. */
  apiKey?: string;
}

export interface AuthenticatorOptions {
  tokens: TokenAuthenticator;
  transaction?: TransactionTokenConfig;
  oidc?: OidcAuthenticator;
  tokenReview?: TokenReviewAuthenticator;
}

/**
 * Transaction token, then OIDC, then the embedded static tokens, then Kubernetes TokenReview. Verifying a
 * transaction or OIDC token (which may fetch a JWKS) and asking TokenReview may reach another server, so each
 * first asks `mayCallRemote`; when it says no the sign-in is refused, while a static token, checked locally,
 * still gets in.
 */
export class ApiAuthenticator {
  private readonly options: AuthenticatorOptions;

  constructor(options: AuthenticatorOptions) {
    this.options = options;
  }

  get transactionConfig(): TransactionTokenConfig | undefined {
    return this.options.transaction;
  }

  async authenticate(credentials: PresentedCredentials, mayCallRemote: () => Promise<boolean>): Promise<Principal> {
    const { transaction, oidc, tokens, tokenReview } = this.options;
    const remoteCheck = async <T>(check: () => Promise<T>): Promise<T> => {
      if (!(await mayCallRemote())) throw new OrkaError("unauthenticated", "too many failed sign-ins");
      return check();
    };
    if (credentials.txnToken !== undefined) {
      if (!transaction) throw new OrkaError("unauthenticated", "transaction tokens are not enabled on this server");
      const token = credentials.txnToken.trim();
      if (!looksLikeJwt(token)) throw new OrkaError("unauthenticated", "invalid context token header format");
      return remoteCheck(async () => transactionPrincipal(await verifyTransactionToken(token, transaction)));
    }
    const token = credentials.apiKey ?? parseBearer(credentials.authorization);
    if (looksLikeJwt(token) && unverifiedType(token)?.toLowerCase() === TXN_TOKEN_TYPE) {
      if (!transaction?.bearerAllowed) {
        throw new OrkaError("unauthenticated", "transaction tokens must be sent via the Txn-Token header unless Authorization: Bearer is explicitly enabled");
      }
      return remoteCheck(async () => transactionPrincipal(await verifyTransactionToken(token, transaction)));
    }
    if (oidc && looksLikeJwt(token)) return remoteCheck(() => oidc.authenticate(token));
    const principal = tokens.find(token) ?? (tokenReview ? await remoteCheck(() => tokenReview.find(token)) : undefined);
    if (!principal) throw new OrkaError("unauthenticated", "invalid token");
    return principal;
  }
}

/** The token of an `Authorization: Bearer <token>` header; a missing or malformed header is refused, saying which. */
export function parseBearer(header: string | undefined): string {
  if (!header) throw new OrkaError("unauthenticated", "missing authorization header");
  const match = /^Bearer\s+(\S+)$/i.exec(header.trim());
  if (!match) throw new OrkaError("unauthenticated", "invalid authorization header format");
  return match[1];
}

/** A transaction-token caller: named by `sub` (or `req_wl`), defaulting to `tctx.namespace`; its scopes are its roles. */
function transactionPrincipal(claims: Awaited<ReturnType<typeof verifyTransactionToken>>): Principal {
  const name = claims.subject || claims.requestingWorkload;
  return {
    name,
    admin: false,
    role: "user",
    transaction: claims,
    requestedBy: { subject: claims.subject, issuer: claims.issuer, username: name, roles: claims.scopes },
  };
}
