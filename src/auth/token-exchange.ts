import { readFile } from "node:fs/promises";
import { z } from "zod";
import { OrkaError } from "../util/errors.ts";

export const TXN_TOKEN_TYPE_URN = "urn:ietf:params:oauth:token-type:txn_token";
const TOKEN_EXCHANGE_GRANT = "urn:ietf:params:oauth:grant-type:token-exchange";
const MAX_RESPONSE_BYTES = 1024 * 1024;

export interface ChildTokenExchangeConfig {
  /** The transaction token service (RFC 8693 token endpoint). */
  endpoint: string;
  audience?: string;
  /** The workload's own token, used as the subject when the parent has no token of its own. */
  subjectTokenFile?: string;
  /** The scope a delegated child asks for; it must be a subset of the parent's. */
  childScope: string;
}

const replySchema = z.object({
  access_token: z.string().min(1),
  issued_token_type: z.literal(TXN_TOKEN_TYPE_URN, { message: `issued_token_type must be ${TXN_TOKEN_TYPE_URN}` }),
  token_type: z.string().refine((t) => t.toUpperCase() === "N_A", { message: "token_type must be N_A" }),
});

export interface ExchangeRequest {
  subjectToken: string;
  subjectTokenType: string;
  scope: string;
  /** Why the token is asked for, sent as `request_details` (operation, parent Task, namespace, txn). */
  details: Record<string, string>;
}

/** RFC 8693: trade a subject token for a transaction token scoped to the child. Errors never include a token. */
export async function exchangeForTransactionToken(config: ChildTokenExchangeConfig, request: ExchangeRequest): Promise<string> {
  const form = new URLSearchParams({
    grant_type: TOKEN_EXCHANGE_GRANT,
    requested_token_type: TXN_TOKEN_TYPE_URN,
    subject_token: request.subjectToken,
    subject_token_type: request.subjectTokenType,
    scope: request.scope,
    request_details: JSON.stringify(request.details),
  });
  if (config.audience) form.set("audience", config.audience);
  const response = await fetch(config.endpoint, {
    method: "POST",
    headers: { "content-type": "application/x-www-form-urlencoded", accept: "application/json" },
    body: form,
    redirect: "error",
    signal: AbortSignal.timeout(10_000),
  });
  const text = await response.text();
  if (text.length > MAX_RESPONSE_BYTES) throw new OrkaError("unavailable", "token exchange reply is too large");
  if (!response.ok) throw new OrkaError("unavailable", `token exchange failed: HTTP ${response.status}`);
  let body: unknown;
  try {
    body = JSON.parse(text);
  } catch {
    throw new OrkaError("unavailable", "token exchange reply is not JSON");
  }
  const parsed = replySchema.safeParse(body);
  if (!parsed.success) throw new OrkaError("unavailable", `token exchange reply is not a transaction token: ${parsed.error.issues[0].message}`);
  return parsed.data.access_token;
}

export async function readSubjectTokenFile(path: string): Promise<string> {
  const token = (await readFile(path, "utf8")).trim();
  if (!token) throw new OrkaError("failed_precondition", "the subject token file is empty");
  return token;
}
