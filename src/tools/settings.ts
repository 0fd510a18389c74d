import type { EgressPolicy } from "../policy/ssrf.ts";

/** The search backends `web_search` can call (ORKA_SEARCH_PROVIDER). */
export const SEARCH_PROVIDERS = ["duckduckgo", "generic", "tavily", "brave", "searxng"] as const;
export type SearchProvider = (typeof SEARCH_PROVIDERS)[number];

/** What `web_search` needs from the operator's configuration. */
export interface SearchSettings {
  provider: SearchProvider;
  /** The API endpoint; each provider has its public default, `generic` and `searxng` need one. */
  url?: string;
  apiKey?: string;
  timeoutMs: number;
}

/** What `web_fetch` needs from the operator's configuration. */
export interface FetchSettings {
  egress: EgressPolicy;
  timeoutMs: number;
}

/** What the GitHub tools' worker halves need: how often auto_merge_pull_request polls (30 s unless set; tests shorten it). */
export interface GithubToolSettings {
  autoMergePollIntervalMs: number;
}
