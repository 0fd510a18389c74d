import { z } from "zod";
import { OrkaError } from "../util/errors.ts";
import { verifyRs256 } from "./jwt.ts";
import type { Principal, TokenRole } from "./principal.ts";

export interface OidcConfig {
  issuer: string;
  audience: string;
  /** When unset, taken from the issuer's discovery document. */
  jwksUrl?: string;
  /** Subjects allowed in; empty lets any subject of the issuer in. */
  subjects: string[];
  /** OIDC callers are bound to this namespace. */
  namespace: string;
  role: TokenRole;
}

const discoverySchema = z.object({ jwks_uri: z.url() });

/** People signing in through an OpenID Connect provider (the second authenticator in the chain). */
export class OidcAuthenticator {
  private readonly config: OidcConfig;
  private jwksUrl?: Promise<string>;

  constructor(config: OidcConfig) {
    this.config = config;
    if (config.jwksUrl) this.jwksUrl = Promise.resolve(config.jwksUrl);
  }

  async authenticate(token: string): Promise<Principal> {
    let payload;
    try {
      payload = await verifyRs256(token, { issuer: this.config.issuer, audience: this.config.audience, jwksUrl: await this.keysUrl() });
    } catch {
      throw new OrkaError("unauthenticated", "invalid token");
    }
    const subject = typeof payload.sub === "string" ? payload.sub : "";
    if (!subject) throw new OrkaError("unauthenticated", "invalid token");
    if (this.config.subjects.length > 0 && !this.config.subjects.includes(subject)) {
      throw new OrkaError("permission_denied", "subject is not allowed to use this server");
    }
    const text = (name: string) => (typeof payload[name] === "string" ? (payload[name] as string) : undefined);
    const groups = Array.isArray(payload.groups) ? payload.groups.map(String) : undefined;
    const username = text("preferred_username") ?? text("email") ?? subject;
    return {
      name: username,
      admin: false,
      role: this.config.role,
      namespace: this.config.namespace,
      requestedBy: { subject, issuer: this.config.issuer, username, email: text("email"), groups, roles: [this.config.role] },
    };
  }

  private keysUrl(): Promise<string> {
    this.jwksUrl ??= discoverJwks(this.config.issuer).catch((err: unknown) => {
      this.jwksUrl = undefined;
      throw err;
    });
    return this.jwksUrl;
  }
}

async function discoverJwks(issuer: string): Promise<string> {
  const response = await fetch(`${issuer.replace(/\/+$/, "")}/.well-known/openid-configuration`, { signal: AbortSignal.timeout(5000) });
  if (!response.ok) throw new OrkaError("unavailable", `OIDC discovery failed: HTTP ${response.status}`);
  return discoverySchema.parse(await response.json()).jwks_uri;
}
