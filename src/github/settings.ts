/** What the operator configures for the GitHub tools, read once at start-up (src/config.ts). */
export interface GithubSettings {
  /** The REST API root: https://api.github.com, or `https://<host>/api/v3` for GitHub Enterprise Server. */
  apiBaseUrl: string;
  /** Web hosts whose repository URLs the tools accept: github.com, plus the Enterprise host the API root names. */
  webHosts: string[];
  /** The operator's read token (`GITHUB_TOKEN`), used when the matched scope names no read credential. */
  fallbackToken?: string;
  /** Milliseconds per second of GitHub's back-off and `retry-after` (1000; tests shorten it). */
  retryBaseMs: number;
  marker: MarkerSettings;
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
  retryBaseMs?: number;
  markerSecret?: string;
  previousMarkerSecrets?: string;
  trustedAuthor?: string;
}): GithubSettings {
  const apiBaseUrl = (env.apiBaseUrl ?? DEFAULT_GITHUB_API_BASE_URL).replace(/\/+$/, "");
  const apiHost = new URL(apiBaseUrl).hostname.toLowerCase();
  // An Enterprise Server serves its API under the web host (`https://ghe.example.com/api/v3`).
  const webHosts = apiHost === "api.github.com" ? ["github.com"] : ["github.com", apiHost.replace(/^api\./, "")];
  return {
    apiBaseUrl,
    webHosts: [...new Set(webHosts)],
    fallbackToken: env.token?.trim() || undefined,
    retryBaseMs: env.retryBaseMs ?? 1000,
    marker: {
      secret: env.markerSecret?.trim() ?? "",
      previousSecrets: (env.previousMarkerSecrets ?? "").split(",").map((s) => s.trim()).filter(Boolean),
      trustedAuthor: env.trustedAuthor?.trim() || undefined,
    },
  };
}
