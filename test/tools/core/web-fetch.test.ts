import { lookup } from "node:dns";
import http from "node:http";
import type { AddressInfo } from "node:net";
import { gzipSync } from "node:zlib";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { EgressRefused, guardedLookup } from "../../../src/policy/ssrf.ts";
import { toolHarness } from "../../helpers/tools.ts";

const PRIVATE = "URL must not target private, loopback, or link-local addresses";

const ARTICLE = `<!DOCTYPE html><html><head><title>Durable agents</title><style>body { color: red }</style>
<script>window.steal = document.cookie</script></head><body>
<nav><a href="/">Home</a> | <a href="/about">About</a></nav>
<article><h1>Durable agents</h1>
<p>Orka runs <strong>AI agents</strong> as durable work. Every tool call is recorded, every result kept, and a crash loses nothing.</p>
<p>Tasks survive restarts: the controller reconciles what it finds, and workers talk back only through the internal API.</p>
<ul><li>Policy-checked</li><li>Observable</li></ul>
<p>Read the <a href="https://example.org/docs">documentation</a> to learn more about running agents in production.</p></article>
<footer>© 2026</footer></body></html>`;

describe("web_fetch", () => {
  let server: http.Server;
  let base = "";
  const bomb = gzipSync(Buffer.alloc(100 * 1024 * 1024, "a"));

  beforeAll(async () => {
    server = http.createServer((req, res) => {
      const path = req.url ?? "/";
      if (path === "/article") return res.writeHead(200, { "content-type": "text/html; charset=utf-8" }).end(ARTICLE);
      if (path === "/json") return res.writeHead(200, { "content-type": "application/json" }).end('{"a":1,"b":[true,null]}');
      if (path === "/bad-json") return res.writeHead(200, { "content-type": "application/json" }).end("{nope");
      if (path === "/long") return res.writeHead(200, { "content-type": "text/plain" }).end("é".repeat(1000));
      if (path === "/missing") return res.writeHead(404, { "content-type": "text/plain" }).end("not here");
      if (path === "/png") return res.writeHead(200, { "content-type": "image/png" }).end(Buffer.from([0x89, 0x50, 0x4e, 0x47]));
      if (path === "/huge") {
        res.writeHead(200, { "content-type": "text/plain" });
        const chunk = Buffer.alloc(64 * 1024, "z");
        let sent = 0;
        const pump = () => {
          while (sent < 8 * 1024 * 1024) {
            sent += chunk.length;
            if (!res.write(chunk)) return void res.once("drain", pump);
          }
          res.end();
        };
        return pump();
      }
      if (path === "/bomb") return res.writeHead(200, { "content-type": "text/plain", "content-encoding": "gzip" }).end(bomb);
      if (path === "/trickle") {
        res.writeHead(200, { "content-type": "text/plain" });
        const timer = setInterval(() => res.write("."), 1000);
        res.on("close", () => clearInterval(timer));
        return;
      }
      const hop = /^\/hop\/(\d+)$/.exec(path);
      if (hop) return res.writeHead(302, { location: Number(hop[1]) > 0 ? `/hop/${Number(hop[1]) - 1}` : "/json" }).end();
      const to = /^\/redirect\?to=(.*)$/.exec(path);
      if (to) return res.writeHead(302, { location: decodeURIComponent(to[1]) }).end();
      res.writeHead(404).end();
    });
    await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
    base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });
  afterAll(() => server.close());

  const fetchWith = async (args: Record<string, unknown>, allowLoopback = true) => {
    const tools = await toolHarness({ fetch: { egress: { allowLoopback }, timeoutMs: 2000 } });
    try {
      return await tools.call("web_fetch", args);
    } finally {
      tools.close();
    }
  };

  it("turns an article into Markdown without scripts or styles, and returns markup with raw", async () => {
    const page = await fetchWith({ url: `${base}/article` });
    expect(page).toMatchObject({ url: `${base}/article`, status: 200, extractor: "html_text", title: "Durable agents", truncated: false });
    expect(page.content).toContain("# Durable agents");
    expect(page.content).toContain("**AI agents**");
    expect(page.content).toContain("[documentation](https://example.org/docs)");
    expect(page.content).not.toMatch(/steal|color: red/);
    const raw = await fetchWith({ url: `${base}/article`, raw: true });
    expect(raw).toMatchObject({ extractor: "raw" });
    expect(raw.content).toContain("<script>");
  });

  it("pretty-prints JSON, keeps bad JSON raw, reports a 404 as a normal result", async () => {
    expect(await fetchWith({ url: `${base}/json` })).toMatchObject({ extractor: "json", content: '{\n  "a": 1,\n  "b": [\n    true,\n    null\n  ]\n}' });
    expect(await fetchWith({ url: `${base}/bad-json` })).toMatchObject({ extractor: "raw", content: "{nope" });
    expect(await fetchWith({ url: `${base}/missing` })).toMatchObject({ status: 404, content: "not here" });
  });

  it("counts max_chars in characters", async () => {
    expect(await fetchWith({ url: `${base}/long`, max_chars: 100 })).toMatchObject({ content: "é".repeat(100), length: 100, truncated: true });
    await expect(fetchWith({ url: "" })).rejects.toThrow("url is required");
    await expect(fetchWith({ url: "not a url" })).rejects.toThrow("invalid URL: not a url");
  });

  // Refused before any connection (nothing listens on these, so a dial would fail differently).
  it.each([
    "http://127.0.0.1/", "http://localhost/", "http://[::1]/", "http://0.0.0.0/", "http://169.254.169.254/latest/meta-data/",
    "http://[::ffff:169.254.169.254]/", "http://2130706433/", "http://0x7f.1/", "http://017700000001/", "http://10.0.0.1/", "http://[fd00::1]/",
  ])("refuses %s", async (url) => {
    await expect(fetchWith({ url }, false)).rejects.toThrow(PRIVATE);
  });

  it.each([
    ["file:///etc/passwd", "only http and https URLs are supported"],
    ["ftp://x", "only http and https URLs are supported"],
    ["http://u:p@example.com/", "URL userinfo is not supported"],
  ])("refuses %s", async (url, message) => {
    await expect(fetchWith({ url }, false)).rejects.toThrow(message);
  });

  // With an injected resolver
  it("refuses names that resolve inside, even when a public address comes first", async () => {
    const resolver = (answers: string[]) =>
      ((_host: string, _options: unknown, callback: (err: null, addresses: { address: string; family: number }[]) => void) =>
        callback(null, answers.map((address) => ({ address, family: address.includes(":") ? 6 : 4 })))) as unknown as typeof lookup;
    const ask = (answers: string[]) =>
      new Promise<Error | null>((resolve) => guardedLookup({ allowLoopback: false }, resolver(answers))("rebind.example", { all: true }, (err) => resolve(err)));
    expect(await ask(["10.0.0.5"])).toBeInstanceOf(EgressRefused);
    expect(await ask(["93.184.215.14", "127.0.0.1"])).toBeInstanceOf(EgressRefused);
    expect(await ask(["93.184.215.14"])).toBeNull();
  });

  it.each(["http://169.254.169.254/", "http://10.1.2.3:8080/", "http://[fd00::1]/"])("refuses a redirect to %s", async (target) => {
    await expect(fetchWith({ url: `${base}/redirect?to=${encodeURIComponent(target)}` })).rejects.toThrow(PRIVATE);
  });

  it("follows five redirects and refuses a sixth", async () => {
    expect(await fetchWith({ url: `${base}/hop/4` })).toMatchObject({ extractor: "json", final_url: `${base}/json` });
    await expect(fetchWith({ url: `${base}/hop/5` })).rejects.toThrow("too many redirects (max 5)");
  });

  it("stops reading an oversized page and a gzip bomb at 5 MiB after decompression", async () => {
    const huge = await fetchWith({ url: `${base}/huge`, max_chars: 1000 });
    expect(huge).toMatchObject({ truncated: true, length: 1000 });
    const before = process.memoryUsage().rss;
    const bombed = await fetchWith({ url: `${base}/bomb`, max_chars: 10 });
    expect(bombed).toMatchObject({ truncated: true, length: 10, content: "aaaaaaaaaa" });
    expect(process.memoryUsage().rss - before).toBeLessThan(64 * 1024 * 1024);
  });

  it("abandons a trickling server at the deadline, then works again", async () => {
    const started = Date.now();
    await expect(fetchWith({ url: `${base}/trickle` })).rejects.toThrow("request timed out after 2000 ms");
    expect(Date.now() - started).toBeLessThan(4000);
    expect(await fetchWith({ url: `${base}/json` })).toMatchObject({ status: 200 });
  });

  it("refuses binary content without returning its bytes", async () => {
    await expect(fetchWith({ url: `${base}/png` })).rejects.toThrow("unsupported content type: image/png");
  });
});
