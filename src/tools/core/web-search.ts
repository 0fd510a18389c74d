import { htmlParser } from "./html.ts";
import { z } from "zod";
import { redact } from "../../policy/redact.ts";
import { codeOf, errorMessage, OrkaError } from "../../util/errors.ts";
import { withCallSignal } from "../../util/call-signal.ts";
import { readCapped } from "../../util/read-capped.ts";
import { defineTool } from "../define.ts";
import type { SearchProvider, SearchSettings } from "../settings.ts";

export interface SearchResult {
  title: string;
  url: string;
  snippet: string;
}

const MAX_UPSTREAM_BYTES = 1024 * 1024;
const ERROR_BODY_BYTES = 4096;
const BROWSER_UA = "Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/124.0 Safari/537.36";

const DEFAULT_URLS: Partial<Record<SearchProvider, string>> = {
  duckduckgo: "https://html.duckduckgo.com/html/",
  tavily: "https://api.tavily.com/search",
  brave: "https://api.search.brave.com/res/v1/web/search",
};

/** One search request, its body read included, within the search timeout; the attempt's signal too: a stopped attempt must not wait it out. */
function call(url: URL, init: RequestInit, settings: SearchSettings, signal: AbortSignal): Promise<string> {
  return withCallSignal({ timeoutMs: settings.timeoutMs, parents: [signal] }, async (callSignal) => {
    let response: Response;
    try {
      response = await fetch(url, { ...init, signal: callSignal });
    } catch (err) {
      throw new OrkaError("unavailable", `search request failed: ${errorMessage((err as { cause?: unknown }).cause ?? err)}`);
    }
    const body = (await readCapped((response.body ?? []) as AsyncIterable<Uint8Array>, MAX_UPSTREAM_BYTES)).body.toString("utf8");
    if (response.status !== 200) throw new OrkaError("unavailable", `search API returned ${response.status}: ${body.slice(0, ERROR_BODY_BYTES)}`);
    return body;
  });
}

function endpoint(settings: SearchSettings): URL {
  const url = settings.url ?? DEFAULT_URLS[settings.provider];
  if (!url) throw new OrkaError("failed_precondition", `web search unavailable: the ${settings.provider} provider needs a search URL configured`);
  return new URL(url);
}

const bearer = (key?: string): Record<string, string> => (key ? { authorization: `Bearer ${key}` } : {});

function pick(items: unknown, map: (item: Record<string, unknown>) => SearchResult, limit: number): SearchResult[] {
  if (!Array.isArray(items)) throw new OrkaError("unavailable", "web search unavailable: the search API answered in an unexpected shape");
  return items.map((item) => map(item as Record<string, unknown>)).filter((r) => r.title && r.url).slice(0, limit);
}

const text = (value: unknown) => (typeof value === "string" ? value : "");

/** One adapter per provider, each returning the same result shape. */
const adapters: Record<Exclude<SearchProvider, "generic">, (query: string, limit: number, settings: SearchSettings, signal: AbortSignal) => Promise<SearchResult[]>> = {
  async tavily(query, limit, settings, signal) {
    const body = await call(endpoint(settings), {
      method: "POST",
      headers: { "content-type": "application/json", ...bearer(settings.apiKey) },
      body: JSON.stringify({ query, max_results: limit }),
    }, settings, signal);
    return pick(JSON.parse(body).results, (r) => ({ title: text(r.title), url: text(r.url), snippet: text(r.content) }), limit);
  },
  async brave(query, limit, settings, signal) {
    const url = endpoint(settings);
    url.searchParams.set("q", query);
    url.searchParams.set("count", String(limit));
    const body = await call(url, { headers: { accept: "application/json", ...(settings.apiKey ? { "x-subscription-token": settings.apiKey } : {}) } }, settings, signal);
    return pick(JSON.parse(body).web?.results, (r) => ({ title: text(r.title), url: text(r.url), snippet: text(r.description) }), limit);
  },
  async searxng(query, limit, settings, signal) {
    const url = new URL("search", endpoint(settings).toString().replace(/\/?$/, "/"));
    url.searchParams.set("q", query);
    url.searchParams.set("format", "json");
    const body = await call(url, { headers: { accept: "application/json", ...bearer(settings.apiKey) } }, settings, signal);
    return pick(JSON.parse(body).results, (r) => ({ title: text(r.title), url: text(r.url), snippet: text(r.content) }), limit);
  },
  async duckduckgo(query, limit, settings, signal) {
    const url = endpoint(settings);
    url.searchParams.set("q", query);
    const results = await parseDuckDuckGo(await call(url, { headers: { "user-agent": BROWSER_UA, accept: "text/html" } }, settings, signal), limit);
    if (results.length === 0) throw new OrkaError("unavailable", "web search unavailable: DuckDuckGo returned no results");
    return results;
  },
};

/** Reads a DuckDuckGo HTML results page: `result__a` anchors and `result__snippet`s, `uddg=` unwrapped. */
export async function parseDuckDuckGo(html: string, limit: number): Promise<SearchResult[]> {
  const { document } = (await htmlParser())(html);
  const results: SearchResult[] = [];
  for (const anchor of document.querySelectorAll("a.result__a")) {
    const container = anchor.closest(".result") ?? anchor.parentElement?.parentElement;
    const snippet = container?.querySelector(".result__snippet")?.textContent ?? "";
    const result = { title: clean(anchor.textContent ?? ""), url: unwrapRedirect(anchor.getAttribute("href") ?? ""), snippet: clean(snippet) };
    if (result.title && result.url) results.push(result);
    if (results.length >= limit) break;
  }
  return results;
}

function unwrapRedirect(href: string): string {
  try {
    const url = new URL(href, "https://duckduckgo.com");
    return url.searchParams.get("uddg") ?? (href.startsWith("http") ? href : "");
  } catch {
    return "";
  }
}

const clean = (value: string) => value.replace(/\s+/g, " ").trim();

export const webSearch = defineTool({
  name: "web_search",
  family: "core",
  offeredOnCompat: true,
  description: "Search the web using the configured search API, or DuckDuckGo.",
  parameters: z.object({
    query: z.string().describe("What to search for"),
    limit: z.number().int().default(5).describe("Number of results (default 5, at most 20)"),
  }),
  async run({ query, limit }, ctx) {
    if (!query.trim()) throw new OrkaError("invalid_argument", "query is required");
    const count = limit > 0 ? Math.min(limit, 20) : 5;
    const settings = ctx.settings.search;
    try {
      if (settings.provider === "generic") {
        const url = endpoint(settings);
        url.searchParams.set("q", query);
        url.searchParams.set("limit", String(count));
        return await call(url, { headers: bearer(settings.apiKey) }, settings, ctx.signal);
      }
      return JSON.stringify(await adapters[settings.provider](query, count, settings, ctx.signal), null, 2);
    } catch (err) {
      // The key is the operator's; it must never reach the model, even inside an upstream error.
      throw new OrkaError(codeOf(err, "unavailable"), redact(errorMessage(err), settings.apiKey ? [settings.apiKey] : []));
    }
  },
});
