import { retry } from "@octokit/plugin-retry";
import { throttling } from "@octokit/plugin-throttling";
import { Octokit } from "@octokit/rest";
import { readCapped } from "../util/read-capped.ts";
import { withCallSignal } from "../util/call-signal.ts";
import { sha256Hex } from "../util/hash.ts";
import { OrkaError } from "../util/errors.ts";
import type { GithubSettings } from "./settings.ts";

const GithubOctokit = Octokit.plugin(retry, throttling);
export type GithubClient = InstanceType<typeof GithubOctokit>;

export const GITHUB_API_VERSION = "2022-11-28";
export const REQUEST_TIMEOUT_MS = 30_000;
export const MAX_JSON_BYTES = 1024 * 1024;
/** Diffs and file lists may be large; they are read up to this and cut further by the tools. */
export const MAX_DIFF_BYTES = 10 * 1024 * 1024;
const MAX_RATE_LIMIT_RETRIES = 2;
const MAX_RATE_LIMIT_WAIT_S = 60;

/** Only 5xx answers are retried by the retry plugin; a 429 is the throttling plugin's to wait out. */
const NOT_RETRIED = Array.from({ length: 100 }, (_, i) => 400 + i);

/** Waits between retries: GitHub's own in production; tests shorten them to milliseconds. */
export interface ClientTiming {
  /** Milliseconds per second of `retry-after` (and per unit of the retry plugin's quadratic back-off). */
  retryAfterBaseMs: number;
  timeoutMs: number;
}

export const PRODUCTION_TIMING: ClientTiming = { retryAfterBaseMs: 1000, timeoutMs: REQUEST_TIMEOUT_MS };

export interface ClientOptions {
  baseUrl: string;
  /** The token of this one call; undefined sends no credential. */
  token?: string;
  /** The Task's or the request's end: an aborted call stops its request at once. */
  signal?: AbortSignal;
  timing?: ClientTiming;
}

/** The client of one call as the operator configured GitHub (API root, back-off pace), with that call's token. */
export function githubClientFor(settings: Pick<GithubSettings, "apiBaseUrl" | "retryBaseMs">, token: string | undefined, signal?: AbortSignal): GithubClient {
  return createGithubClient({ baseUrl: settings.apiBaseUrl, token, signal, timing: { retryAfterBaseMs: settings.retryBaseMs, timeoutMs: REQUEST_TIMEOUT_MS } });
}

const quiet = { debug: () => {}, info: () => {}, warn: () => {}, error: () => {} };

/**
 * One Octokit per call, with that call's token. GETs are retried up to 3 times on 5xx, and their rate
 * limits are waited out at most twice and only when GitHub asks for 60 s or less. Nothing else is retried:
 * a write never (a review or a comment must not be posted twice), a refusal never.
 */
export function createGithubClient(options: ClientOptions): GithubClient {
  const timing = options.timing ?? PRODUCTION_TIMING;
  const client = new GithubOctokit({
    baseUrl: options.baseUrl,
    auth: options.token,
    log: quiet,
    request: { fetch: cappedFetch(timing.timeoutMs, options.signal) },
    retry: { retries: 3, retryAfterBaseValue: timing.retryAfterBaseMs, doNotRetry: NOT_RETRIED },
    throttle: {
      retryAfterBaseValue: timing.retryAfterBaseMs,
      // Secondary limits are per account: writes of one token are spaced, other tokens are not held up.
      id: options.token ? sha256Hex(options.token).slice(0, 16) : "anonymous",
      onRateLimit: waitOutRateLimit,
      onSecondaryRateLimit: waitOutRateLimit,
    },
  });
  client.hook.before("request", (request) => {
    request.headers["x-github-api-version"] = GITHUB_API_VERSION;
    if (request.method !== "GET") request.request = { ...request.request, retries: 0 };
  });
  client.hook.after("request", refuseCappedJson);
  return client;
}

/** Reads only: a write is never sent twice by Orka, not even one GitHub turned away for its rate limit. */
function waitOutRateLimit(retryAfterSeconds: number, request: { method?: string }, _octokit: unknown, retryCount: number): boolean {
  return request.method === "GET" && retryCount < MAX_RATE_LIMIT_RETRIES && retryAfterSeconds <= MAX_RATE_LIMIT_WAIT_S;
}

/** Set on an answer whose body was cut at its cap. */
const CAPPED_HEADER = "x-orka-body-capped";

/** Whether a request reads a diff or a file list, which may be larger than any JSON answer. */
function readsLargeBody(url: string, headers: Headers): boolean {
  return /diff|patch/.test(headers.get("accept") ?? "") || /\/files$/.test(new URL(url).pathname);
}

/**
 * Octokit passes an AbortError through as it is (any other fetch failure becomes a 500 and is retried),
 * so a timeout or a cancelled call ends at once, with its own message.
 */
function abortError(message: string): OrkaError {
  const err = new OrkaError("deadline_exceeded", message);
  err.name = "AbortError";
  return err;
}

/**
 * fetch with a per-request timeout joined to the call's signal, and a body read up to its cap (1 MiB,
 * or 10 MiB for a diff or a file list) and marked when cut there.
 */
function cappedFetch(timeoutMs: number, signal?: AbortSignal): typeof fetch {
  return async (input, init = {}) => {
    const url = typeof input === "string" ? input : input instanceof URL ? input.href : input.url;
    try {
      return await withCallSignal({ timeoutMs, parents: [signal, init.signal ?? undefined] }, async (callSignal) => {
        const response = await fetch(input, { ...init, signal: callSignal });
        if (!response.body || [204, 205, 304].includes(response.status)) return response;
        const cap = readsLargeBody(url, new Headers(init.headers)) ? MAX_DIFF_BYTES : MAX_JSON_BYTES;
        const { body, capped } = await readCapped(response.body as unknown as AsyncIterable<Uint8Array>, cap);
        const headers = new Headers(response.headers);
        if (capped) headers.set(CAPPED_HEADER, String(cap));
        return new Response(new Uint8Array(body), { status: response.status, statusText: response.statusText, headers });
      });
    } catch (err) {
      if (signal?.aborted) throw abortError("the call was cancelled before GitHub answered");
      if (err instanceof Error && err.name === "TimeoutError") throw abortError(`GitHub did not answer within ${timeoutMs / 1000}s`);
      throw err;
    }
  };
}

/** A JSON answer cut at its cap cannot be read; a cut diff is the tool's to mark as truncated. */
function refuseCappedJson(response: { headers: Record<string, string | number | undefined> }): void {
  const cap = response.headers[CAPPED_HEADER];
  if (cap !== undefined && String(response.headers["content-type"] ?? "").includes("json")) {
    throw new OrkaError("payload_too_large", `GitHub's answer exceeds ${cap} bytes`);
  }
}
