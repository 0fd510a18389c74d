// The wire plumbing of the GitHub peer: GitHub-shaped errors, rate-limit headers, `Link` paging and
// injected faults.
import type http from "node:http";

export const DOCS = "https://docs.github.com/rest";
export const MAX_BODY_BYTES = 1024 * 1024;

export class HttpFailure extends Error {
  readonly status: number;
  readonly errors: unknown[] | undefined;
  readonly headers: Record<string, string>;

  constructor(status: number, message: string, errors?: unknown[], headers: Record<string, string> = {}) {
    super(message);
    this.status = status;
    this.errors = errors;
    this.headers = headers;
  }
}

export const notFound = () => new HttpFailure(404, "Not Found");
export const validationFailed = (...errors: unknown[]) => new HttpFailure(422, "Validation Failed", errors);

export interface Reply {
  status: number;
  body: unknown;
  headers?: Record<string, string>;
}

export function errorBody(failure: HttpFailure) {
  return {
    message: failure.message,
    ...(failure.errors ? { errors: failure.errors } : {}),
    documentation_url: DOCS,
    status: String(failure.status),
  };
}

export type Fault =
  | { kind: "rate-limit"; retryAfterSeconds: number }
  | { kind: "bad-gateway" }
  | { kind: "secondary-limit"; retryAfterSeconds: number };

export function faultFailure(fault: Fault): HttpFailure {
  switch (fault.kind) {
    case "rate-limit":
      // GitHub's primary limit: the quota is spent until x-ratelimit-reset, which is when retry-after ends.
      return new HttpFailure(429, "API rate limit exceeded.", undefined, {
        "retry-after": String(fault.retryAfterSeconds),
        "x-ratelimit-remaining": "0",
        "x-ratelimit-reset": String(Math.ceil(Date.now() / 1000) + fault.retryAfterSeconds),
      });
    case "bad-gateway":
      return new HttpFailure(502, "Server Error");
    case "secondary-limit":
      return new HttpFailure(403, "You have exceeded a secondary rate limit. Please wait a few minutes before you try again.", undefined, {
        "retry-after": String(fault.retryAfterSeconds),
      });
  }
}

export const RATE_LIMIT = 5000;

export function rateLimitHeaders(used: number): Record<string, string> {
  return {
    "x-ratelimit-limit": String(RATE_LIMIT),
    "x-ratelimit-remaining": String(Math.max(0, RATE_LIMIT - used)),
    "x-ratelimit-used": String(used),
    "x-ratelimit-reset": String(Math.floor(Date.now() / 1000) + 3600),
    "x-ratelimit-resource": "core",
  };
}

export interface PageRequest {
  url: URL;
  base: string;
}

/** One page of `items` as GitHub serves it: per_page (default 30, at most 100), page, and a `Link` header. */
export function paged<T>(items: T[], { url, base }: PageRequest): { items: T[]; headers: Record<string, string> } {
  const perPage = Math.min(100, Math.max(1, Number(url.searchParams.get("per_page") ?? 30) || 30));
  const page = Math.max(1, Number(url.searchParams.get("page") ?? 1) || 1);
  const last = Math.max(1, Math.ceil(items.length / perPage));
  const link = (n: number, rel: string) => {
    const target = new URL(`${base}${url.pathname}${url.search}`);
    target.searchParams.set("per_page", String(perPage));
    target.searchParams.set("page", String(n));
    return `<${target.href}>; rel="${rel}"`;
  };
  const links = [
    ...(page > 1 ? [link(page - 1, "prev"), link(1, "first")] : []),
    ...(page < last ? [link(page + 1, "next"), link(last, "last")] : []),
  ];
  return { items: items.slice((page - 1) * perPage, page * perPage), headers: links.length ? { link: links.join(", ") } : {} };
}

export async function readJson(req: http.IncomingMessage): Promise<Record<string, unknown>> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of req as AsyncIterable<Buffer>) {
    size += chunk.length;
    if (size > MAX_BODY_BYTES) throw new HttpFailure(413, "Payload too large");
    chunks.push(chunk);
  }
  if (size === 0) return {};
  try {
    const parsed: unknown = JSON.parse(Buffer.concat(chunks).toString("utf8"));
    if (parsed && typeof parsed === "object" && !Array.isArray(parsed)) return parsed as Record<string, unknown>;
  } catch {
    // answered below, as GitHub answers unparsable bodies
  }
  throw new HttpFailure(400, "Problems parsing JSON");
}
