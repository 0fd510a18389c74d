import { createRemoteJWKSet, decodeProtectedHeader, jwtVerify, type JWTPayload } from "jose";

/** One key set per JWKS URL, so keys are fetched once and refreshed when an unknown `kid` appears. */
const keySets = new Map<string, ReturnType<typeof createRemoteJWKSet>>();

export interface Rs256Expectations {
  issuer: string;
  audience: string;
  jwksUrl: string;
  /** The `typ` header the token must carry, when one is required. */
  typ?: string;
}

const CLOCK_SKEW_SECONDS = 30;

/** A compact JWS: three base64url parts. Only such strings are tried as JWTs. */
export function looksLikeJwt(token: string): boolean {
  return /^[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+\.[A-Za-z0-9_-]*$/.test(token);
}

/** The unverified `typ` header, used only to pick which verifier to run. */
export function unverifiedType(token: string): string | undefined {
  try {
    return decodeProtectedHeader(token).typ;
  } catch {
    return undefined;
  }
}

/** RS256 only (never `none` or HS*), a `kid` from the issuer's JWKS, exact issuer, audience and time claims. */
export async function verifyRs256(token: string, expect: Rs256Expectations): Promise<JWTPayload> {
  let keys = keySets.get(expect.jwksUrl);
  if (!keys) {
    keys = createRemoteJWKSet(new URL(expect.jwksUrl), { timeoutDuration: 5000, cooldownDuration: 30_000 });
    keySets.set(expect.jwksUrl, keys);
  }
  const { payload } = await jwtVerify(token, keys, {
    algorithms: ["RS256"],
    issuer: expect.issuer,
    audience: expect.audience,
    typ: expect.typ,
    clockTolerance: CLOCK_SKEW_SECONDS,
    requiredClaims: ["exp"],
  });
  return payload;
}
