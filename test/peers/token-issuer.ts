// A local transaction-token service and OIDC issuer: RS256 keys served as a JWKS over HTTP, OIDC
// discovery, and an RFC 8693 token endpoint, so Orka's real verification (jose, remote JWKS),
// OIDC sign-in and token exchange can be tested.
import http from "node:http";
import type { AddressInfo } from "node:net";
import { exportJWK, generateKeyPair, SignJWT, type JWTPayload } from "jose";

export interface MintOptions {
  /** Claims to add or replace; `undefined` values remove a default claim. */
  claims?: Record<string, unknown>;
  tctx?: Record<string, unknown>;
  typ?: string;
  /** "RS256" (default), "HS256" or "none". */
  alg?: "RS256" | "HS256" | "none";
  /** Sign with a key the JWKS does not publish. */
  unknownKey?: boolean;
  /** Seconds from now; negative for an expired token. */
  expiresIn?: number;
}

export interface TokenExchangeRequest {
  form: Record<string, string>;
}

export interface TokenIssuer {
  url: string;
  audience: string;
  mint(scope: string, options?: MintOptions): Promise<string>;
  /** Every RFC 8693 request the token endpoint received. */
  exchanges: TokenExchangeRequest[];
  /** Fields that replace the token endpoint's correct reply (to test a misbehaving service). */
  exchangeReplyOverride?: Record<string, unknown>;
  close(): Promise<void>;
}

const b64url = (value: unknown) => Buffer.from(JSON.stringify(value)).toString("base64url");

export async function startTokenIssuer(audience = "orka"): Promise<TokenIssuer> {
  const published = await generateKeyPair("RS256", { extractable: true });
  const unpublished = await generateKeyPair("RS256", { extractable: true });
  const jwk = { ...(await exportJWK(published.publicKey)), kid: "issuer-key-1", alg: "RS256", use: "sig" };
  const exchanges: TokenExchangeRequest[] = [];
  let issuerUrl = "";

  const mint = async (scope: string, options: MintOptions = {}): Promise<string> => {
    const now = Math.floor(Date.now() / 1000);
    const payload: JWTPayload = {
      iss: issuerUrl,
      aud: audience,
      sub: "alice@example.com",
      txn: `txn-${Math.random().toString(36).slice(2, 10)}`,
      req_wl: "ci-pipeline",
      scope,
      iat: now,
      exp: now + (options.expiresIn ?? 300),
      ...(options.tctx ? { tctx: options.tctx } : {}),
      ...options.claims,
    };
    for (const [key, value] of Object.entries(payload)) if (value === undefined) delete payload[key];
    const typ = options.typ ?? "txntoken+jwt";
    if (options.alg === "none") return `${b64url({ alg: "none", typ })}.${b64url(payload)}.`;
    if (options.alg === "HS256") {
      return new SignJWT(payload).setProtectedHeader({ alg: "HS256", typ, kid: jwk.kid }).sign(new TextEncoder().encode("a-shared-secret-of-enough-length!"));
    }
    const key = options.unknownKey ? unpublished.privateKey : published.privateKey;
    return new SignJWT(payload).setProtectedHeader({ alg: "RS256", typ, kid: options.unknownKey ? "unknown-key" : jwk.kid }).sign(key);
  };

  const server = http.createServer((request, response) => {
    const send = (status: number, body: unknown) => {
      response.writeHead(status, { "content-type": "application/json" });
      response.end(JSON.stringify(body));
    };
    if (request.method === "GET" && request.url === "/.well-known/jwks.json") return send(200, { keys: [jwk] });
    if (request.method === "GET" && request.url === "/.well-known/openid-configuration") {
      return send(200, { issuer: issuerUrl, jwks_uri: `${issuerUrl}/.well-known/jwks.json`, id_token_signing_alg_values_supported: ["RS256"] });
    }
    if (request.method === "POST" && request.url === "/token") {
      let text = "";
      request.on("data", (chunk) => (text += chunk));
      request.on("end", async () => {
        const form = Object.fromEntries(new URLSearchParams(text));
        exchanges.push({ form });
        if (form.grant_type !== "urn:ietf:params:oauth:grant-type:token-exchange" || !form.subject_token) return send(400, { error: "invalid_request" });
        const details = JSON.parse(form.request_details ?? "{}") as Record<string, unknown>;
        const token = await mint(form.scope, { tctx: { namespace: details.namespace }, claims: { sub: "orka-child", req_wl: "orka" } });
        send(200, { access_token: token, issued_token_type: "urn:ietf:params:oauth:token-type:txn_token", token_type: "N_A", expires_in: 300, ...issuer.exchangeReplyOverride });
      });
      return;
    }
    send(404, { error: "not_found" });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  issuerUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  const issuer: TokenIssuer = {
    url: issuerUrl,
    audience,
    mint,
    exchanges,
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
  return issuer;
}
