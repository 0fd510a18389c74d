import { PRODUCTION_TIMING, type ClientTiming } from "./client.ts";

/** What the operator configures for the GitHub tools, read once at start-up (src/config.ts). */
export interface GithubSettings {
  /** The REST API root: https://api.github.com, or `https://<host>/api/v3` for GitHub Enterprise Server. */
  apiBaseUrl: string;
  /** Web hosts whose repository URLs the tools accept: github.com, plus the Enterprise host the API root names. */
  webHosts: string[];
  /** The operator's read token (`GITHUB_TOKEN`), used when the matched scope names no read credential. */
  fallbackToken?: string;
  marker: MarkerSettings;
  /** How long GitHub calls wait between retries and for an answer (GitHub's own pace unless tests shorten it). */
  timing: ClientTiming;
}

/** Review-marker signing: a stable key, keys it replaced, and the login trusted for unsigned markers. */
export interface MarkerSettings {
  secret: string;
  previousSecrets: string[];
  trustedAuthor?: string;
}

export const DEFAULT_GITHUB_API_BASE_URL = "https://api.github.com";

export function githubSettings(env: {
  apiBaseUrl?: string;
  token?: string;
  markerSecret?: string;
  previousMarkerSecrets?: string;
  trustedAuthor?: string;
  /** Milliseconds per unit of retry back-off and per second of `retry-after`; GitHub's pace (1000) by default. */
  retryBaseMs?: number;
}): GithubSettings {
  const apiBaseUrl = (env.apiBaseUrl ?? DEFAULT_GITHUB_API_BASE_URL).replace(/\/+$/, "");
  const apiHost = new URL(apiBaseUrl).hostname.toLowerCase();
  // An Enterprise Server serves its API under the web host (`https://ghe.example.com/api/v3`).
  const webHosts = apiHost === "api.github.com" ? ["github.com"] : ["github.com", apiHost.replace(/^api\./, "")];
  return {
    apiBaseUrl,
    webHosts: [...new Set(webHosts)],
    fallbackToken: env.token?.trim() || undefined,
    marker: {
      secret: env.markerSecret?.trim() ?? "",
      previousSecrets: (env.previousMarkerSecrets ?? "").split(",").map((s) => s.trim()).filter(Boolean),
      trustedAuthor: env.trustedAuthor?.trim() || undefined,
    },
    timing: { ...PRODUCTION_TIMING, retryAfterBaseMs: env.retryBaseMs ?? PRODUCTION_TIMING.retryAfterBaseMs },
  };
}
