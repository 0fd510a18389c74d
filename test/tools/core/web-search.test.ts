import { readFileSync } from "node:fs";
import http from "node:http";
import type { AddressInfo } from "node:net";
import { resolve } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { SearchSettings } from "../../../src/tools/settings.ts";
import { toolHarness } from "../../helpers/tools.ts";

const DDG_PAGE = readFileSync(resolve(import.meta.dirname, "../../fixtures/duckduckgo.html"), "utf8");
const KEY = "search-key-1234567890";

interface Seen {
  method: string;
  url: URL;
  headers: http.IncomingHttpHeaders;
  body: string;
}

describe("web_search adapters against local servers speaking each API", () => {
  let server: http.Server;
  let base = "";
  const seen: Seen[] = [];
  beforeAll(async () => {
    server = http.createServer((req, res) => {
      let body = "";
      req.on("data", (c) => (body += c));
      req.on("end", () => {
        const url = new URL(req.url ?? "/", "http://x");
        seen.push({ method: req.method ?? "", url, headers: req.headers, body });
        const json = (value: unknown) => res.writeHead(200, { "content-type": "application/json" }).end(JSON.stringify(value));
        if (url.pathname === "/tavily") return json({ results: [{ title: "T1", url: "https://t.example/1", content: "tavily snippet" }, { title: "T2", url: "https://t.example/2", content: "two" }] });
        if (url.pathname === "/brave") return json({ web: { results: [{ title: "B1", url: "https://b.example/1", description: "brave snippet" }] } });
        if (url.pathname === "/searx/search") return json({ results: [{ title: "S1", url: "https://s.example/1", content: "searx snippet" }] });
        if (url.pathname === "/generic") return json({ echoed: url.searchParams.get("q"), limit: url.searchParams.get("limit") });
        if (url.pathname === "/broken") return res.writeHead(500).end(`backend down, key was ${KEY}`);
        if (url.pathname === "/stalls") return res.writeHead(200, { "content-type": "application/json" }).write('{"results": [');
        if (url.pathname === "/ddg/") return res.writeHead(200, { "content-type": "text/html" }).end(DDG_PAGE);
        if (url.pathname === "/ddg-empty/") return res.writeHead(200, { "content-type": "text/html" }).end("<html><body>No results.</body></html>");
        res.writeHead(404).end();
      });
    });
    await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
    base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });
  afterAll(() => (server.closeAllConnections(), server.close()));

  const search = async (settings: Omit<SearchSettings, "timeoutMs">, args: Record<string, unknown>) => {
    const tools = await toolHarness({ search: { timeoutMs: 2000, ...settings } });
    try {
      return await tools.call("web_search", args);
    } finally {
      tools.close();
    }
  };

  it("tavily: POST with Bearer and max_results, mapped to {title,url,snippet}", async () => {
    const results = await search({ provider: "tavily", url: `${base}/tavily`, apiKey: KEY }, { query: "orka agents", limit: 1 });
    expect(results).toEqual([{ title: "T1", url: "https://t.example/1", snippet: "tavily snippet" }]);
    const request = seen.at(-1)!;
    expect(request.method).toBe("POST");
    expect(request.headers.authorization).toBe(`Bearer ${KEY}`);
    expect(JSON.parse(request.body)).toEqual({ query: "orka agents", max_results: 1 });
  });

  it("brave: GET with q, count and the subscription token", async () => {
    expect(await search({ provider: "brave", url: `${base}/brave`, apiKey: KEY }, { query: "q b" })).toEqual([{ title: "B1", url: "https://b.example/1", snippet: "brave snippet" }]);
    const request = seen.at(-1)!;
    expect([request.url.searchParams.get("q"), request.url.searchParams.get("count"), request.headers["x-subscription-token"]]).toEqual(["q b", "5", KEY]);
  });

  it("searxng: /search with format=json", async () => {
    expect(await search({ provider: "searxng", url: `${base}/searx` }, { query: "s", limit: 50 })).toEqual([{ title: "S1", url: "https://s.example/1", snippet: "searx snippet" }]);
    expect(seen.at(-1)!.url.searchParams.get("format")).toBe("json");
  });

  it("generic: passes the body through, with q, limit (clamped to 20) and Bearer", async () => {
    expect(await search({ provider: "generic", url: `${base}/generic`, apiKey: KEY }, { query: "plain", limit: 99 })).toEqual({ echoed: "plain", limit: "20" });
    expect(seen.at(-1)!.headers.authorization).toBe(`Bearer ${KEY}`);
  });

  it("reports a failing backend as an error, with the key redacted, never as invented results", async () => {
    await expect(search({ provider: "generic", url: `${base}/broken`, apiKey: KEY }, { query: "x" })).rejects.toThrow("search API returned 500: backend down, key was [REDACTED]");
    await expect(search({ provider: "generic", url: "http://127.0.0.1:9/" }, { query: "x" })).rejects.toThrow(/^search request failed: /);
    await expect(search({ provider: "duckduckgo", url: `${base}/ddg-empty/` }, { query: "x" })).rejects.toThrow("web search unavailable: DuckDuckGo returned no results");
    await expect(search({ provider: "generic", url: `${base}/generic` }, { query: "  " })).rejects.toThrow("query is required");
  });

  it("gives up on a backend that stops sending its answer half-way, at the search timeout", async () => {
    const tools = await toolHarness({ search: { provider: "generic", url: `${base}/stalls`, timeoutMs: 300 } });
    const started = Date.now();
    try {
      await expect(tools.call("web_search", { query: "x" })).rejects.toThrow();
    } finally {
      tools.close();
    }
    expect(Date.now() - started).toBeLessThan(2000);
  });

  it("parses a DuckDuckGo results page: uddg unwrapped, entities decoded, empty entries dropped, limit kept", async () => {
    const results = await search({ provider: "duckduckgo", url: `${base}/ddg/` }, { query: "orka agents" });
    expect(results).toEqual([
      { title: "Orka & friends: agents on Kubernetes", url: "https://github.com/orka-agents/orka", snippet: 'Run AI agents as durable "Tasks" — observable & policy-checked.' },
      { title: "Second result", url: "https://example.org/docs?a=1&b=2", snippet: "Another snippet." },
      { title: "Third result", url: "https://third.example/", snippet: "Third snippet." },
    ]);
    expect(seen.at(-1)!.headers["user-agent"]).toMatch(/Mozilla/);
    expect(await search({ provider: "duckduckgo", url: `${base}/ddg/` }, { query: "orka", limit: 2 })).toHaveLength(2);
  });
});
