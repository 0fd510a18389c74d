import { OrkaError, type ErrorCode } from "../util/errors.ts";
import { cutUtf8 } from "../util/text.ts";

/** The shape of Octokit's RequestError (its package is not a direct dependency): a status, and the answer when one came. */
export interface GithubRequestError extends Error {
  status: number;
  response?: { headers: Record<string, string | number | undefined>; data?: unknown };
}

export function isGithubRequestError(err: unknown): err is GithubRequestError {
  return err instanceof Error && typeof (err as { status?: unknown }).status === "number" && "request" in err;
}

/** At most this much of a GitHub answer goes into an error message. */
export const MAX_ERROR_BODY_BYTES = 2048;

/** Transient in GitHub's sense: a rate limit (429, or 403 with no quota left or a secondary limit). */
export function isRateLimited(err: GithubRequestError): boolean {
  const headers = err.response?.headers ?? {};
  return err.status === 429 || (err.status === 403 && (headers["x-ratelimit-remaining"] === "0" || /secondary rate/i.test(err.message)));
}

/** 429 and 5xx may succeed when tried again later; pollers wait for their next turn on them. */
export function isTransient(err: unknown): boolean {
  return isGithubRequestError(err) && (isRateLimited(err) || err.status >= 500);
}

function codeOfStatus(status: number): ErrorCode {
  if (status === 401 || status === 403) return "permission_denied";
  if (status === 404) return "not_found";
  if (status === 409) return "conflict";
  if (status === 405) return "failed_precondition";
  if (status >= 500) return "unavailable";
  return "invalid_argument";
}

/** `GitHub API returned <status>: <body>`, the body cut at 2 KiB. */
export function describeGithubAnswer(err: GithubRequestError): string {
  const data = err.response?.data;
  const body = data === undefined || data === "" ? err.message : typeof data === "string" ? data : JSON.stringify(data);
  const shown = cutUtf8(body, MAX_ERROR_BODY_BYTES);
  return `GitHub API returned ${err.status}: ${shown.text}${shown.cut ? "…" : ""}`;
}

/**
 * What a failed GitHub call becomes for the model: an OrkaError whose message starts with `what` (the
 * spec's "failed to … : ") when given. A rate limit Orka did not wait out is `github_rate_limited`. Octokit
 * redacts the authorization header from its errors, and no header is quoted here.
 */
export function githubFailure(err: unknown, what?: string): OrkaError {
  const prefix = what ? `${what}: ` : "";
  if (err instanceof OrkaError) return new OrkaError(err.code, `${prefix}${err.message}`);
  if (!isGithubRequestError(err)) return new OrkaError("unavailable", `${prefix}${err instanceof Error ? err.message : String(err)}`);
  if (isRateLimited(err)) {
    const after = err.response?.headers["retry-after"];
    return new OrkaError("resource_exhausted", `${prefix}github_rate_limited: GitHub's rate limit is exhausted${after ? `; retry after ${after}s` : ""}`);
  }
  if (!err.response) {
    const cause = err.cause instanceof OrkaError ? err.cause : undefined;
    return new OrkaError(cause?.code ?? "unavailable", `${prefix}GitHub could not be reached: ${cause?.message ?? err.message}`);
  }
  return new OrkaError(codeOfStatus(err.status), `${prefix}${describeGithubAnswer(err)}`);
}
