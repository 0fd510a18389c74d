import { randomBytes, timingSafeEqual } from "node:crypto";
import { sha256Hex } from "../util/hash.ts";
import { inTransaction, prepared, preparedWrite, type Db } from "../store/sqlite/db.ts";
import { OrkaError } from "../util/errors.ts";
import type { Principal, TokenRole } from "./principal.ts";

/** API tokens: the admin token, and static tokens bound to a namespace (stored hashed). */
export class TokenAuthenticator {
  private readonly adminHash: Buffer;
  private readonly db: Db;

  constructor(db: Db, adminToken: string) {
    this.db = db;
    this.adminHash = Buffer.from(sha256Hex(adminToken), "hex");
  }

  /** The principal for a token, or undefined when it is not one of ours. */
  find(token: string): Principal | undefined {
    if (timingSafeEqual(Buffer.from(sha256Hex(token), "hex"), this.adminHash)) {
      return { name: "admin", admin: true, role: "admin", requestedBy: { username: "admin", roles: ["admin"] } };
    }
    const row = prepared<[string], { name: string; namespace: string | null; role: string }>(
      this.db,
      "SELECT name, namespace, role FROM api_tokens WHERE token_hash = ?",
    ).get(sha256Hex(token));
    if (!row) return undefined;
    const role = row.role as Principal["role"];
    return { name: row.name, admin: role === "admin", role, namespace: row.namespace ?? undefined, requestedBy: { username: row.name, roles: [role] } };
  }

  authenticate(token: string): Principal {
    const principal = this.find(token);
    if (!principal) throw new OrkaError("unauthenticated", "invalid token");
    return principal;
  }

  /** Creates a token bound to one namespace; the plain value is returned once and never stored. */
  createToken(name: string, namespace: string, role: TokenRole = "user"): string {
    const token = `orka_${randomBytes(24).toString("base64url")}`;
    // Names are how tokens are listed and revoked, so one name means one token.
    inTransaction(this.db, () => {
      if (prepared(this.db, "SELECT 1 FROM api_tokens WHERE name = ?").get(name)) {
        throw new OrkaError("conflict", `a token named "${name}" exists; revoke it first (orka token revoke ${name}) or choose another name`);
      }
      prepared(this.db, "INSERT INTO api_tokens (token_hash, name, namespace, role, created_at) VALUES (?, ?, ?, ?, ?)").run(
        sha256Hex(token), name, namespace, role, new Date().toISOString(),
      );
    });
    return token;
  }

  /** The tokens the admin created, oldest first; never their values or hashes. */
  listTokens(): ApiTokenInfo[] {
    return prepared<[], ApiTokenInfo>(this.db, "SELECT name, namespace, role, created_at AS createdAt FROM api_tokens ORDER BY created_at, name")
      .all();
  }

  /** Revokes the token with this name; the next request that presents it is refused. */
  revokeToken(name: string): void {
    const { changes } = preparedWrite(this.db, "DELETE FROM api_tokens WHERE name = ?").run(name);
    if (changes === 0) throw new OrkaError("not_found", `no token named "${name}"; orka token list shows the names`);
  }
}

export interface ApiTokenInfo {
  name: string;
  namespace: string | null;
  role: string;
  createdAt: string;
}
