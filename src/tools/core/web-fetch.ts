import { Agent, fetch, type Response } from "undici";
import { z } from "zod";
import { checkEgressUrl, EgressRefused, guardedLookup, type EgressPolicy } from "../../policy/ssrf.ts";
import { errorMessage } from "../../util/errors.ts";
import { defineTool } from "../define.ts";
import { htmlToMarkdown } from "./html.ts";

export const MAX_BODY_BYTES = 5 * 1024 * 1024;
const DEFAULT_MAX_CHARS = 50_000;
const MAX_REDIRECTS = 5;
const USER_AGENT = "Mozilla/5.0 (compatible; OrkaBot/1.0)";
const ACCEPT = "text/html,application/xhtml+xml,application/xml;q=0.9,*/*;q=0.8";

export interface FetchSettings {
  egress: EgressPolicy;
  timeoutMs: number;
}

interface Page {
  finalUrl: string;
  status: number;
  contentType: string;
  body: Buffer;
  capped: boolean;
}

const isText = (type: string) => type === "" || /^text\/|json|xml|javascript/.test(type);

/** GET with the SSRF guard on every hop (WF-5, WF-6) and the body capped after decompression (WF-7). */
export async function guardedGet(rawUrl: string, settings: FetchSettings): Promise<Page> {
  const dispatcher = new Agent({ connect: { lookup: guardedLookup(settings.egress) }, pipelining: 0 });
  const signal = AbortSignal.timeout(settings.timeoutMs);
  try {
    let url = checkEgressUrl(rawUrl, settings.egress);
    for (let hop = 0; ; hop++) {
      let response: Response;
      try {
        response = await fetch(url, { dispatcher, redirect: "manual", signal, headers: { "user-agent": USER_AGENT, accept: ACCEPT } });
      } catch (err) {
        throw unwrap(err, settings.timeoutMs);
      }
      const location = response.headers.get("location");
      if (response.status >= 300 && response.status < 400 && location) {
        await response.body?.cancel();
        if (hop >= MAX_REDIRECTS) throw new Error(`too many redirects (max ${MAX_REDIRECTS})`);
        url = checkEgressUrl(new URL(location, url).toString(), settings.egress);
        continue;
      }
      const contentType = (response.headers.get("content-type") ?? "").split(";")[0].trim().toLowerCase();
      if (!isText(contentType)) {
        await response.body?.cancel();
        throw new Error(`unsupported content type: ${contentType}`);
      }
      const { body, capped } = await readCapped(response, settings.timeoutMs);
      return { finalUrl: url.toString(), status: response.status, contentType: response.headers.get("content-type") ?? "", body, capped };
    }
  } finally {
    await dispatcher.close().catch(() => undefined);
  }
}

async function readCapped(response: Response, timeoutMs: number): Promise<{ body: Buffer; capped: boolean }> {
  const chunks: Buffer[] = [];
  let size = 0;
  if (!response.body) return { body: Buffer.alloc(0), capped: false };
  const reader = response.body.getReader();
  try {
    for (;;) {
      const { done, value } = await reader.read();
      if (done) return { body: Buffer.concat(chunks), capped: false };
      const room = MAX_BODY_BYTES - size;
      chunks.push(Buffer.from(value.subarray(0, room)));
      size += Math.min(room, value.length);
      if (value.length >= room) {
        await reader.cancel();
        return { body: Buffer.concat(chunks), capped: true };
      }
    }
  } catch (err) {
    throw unwrap(err, timeoutMs);
  }
}

function unwrap(err: unknown, timeoutMs: number): Error {
  const cause = (err as { cause?: unknown }).cause;
  if (err instanceof EgressRefused || cause instanceof EgressRefused) return (cause instanceof EgressRefused ? cause : err) as Error;
  if ((err as Error).name === "TimeoutError" || (cause as Error | undefined)?.name === "TimeoutError") return new Error(`request timed out after ${timeoutMs} ms`);
  return new Error(`fetch failed: ${errorMessage(cause ?? err)}`);
}

function decode(page: Page): string {
  const charset = /charset=([^;]+)/i.exec(page.contentType)?.[1]?.trim().replace(/"/g, "");
  try {
    return new TextDecoder(charset || "utf-8").decode(page.body);
  } catch {
    return new TextDecoder("utf-8").decode(page.body);
  }
}

/** Counts in code points, never splitting a surrogate pair. */
function clip(text: string, maxChars: number): { content: string; length: number; truncated: boolean } {
  const points = Array.from(text);
  return { content: points.slice(0, maxChars).join(""), length: Math.min(points.length, maxChars), truncated: points.length > maxChars };
}

export const webFetch = defineTool({
  name: "web_fetch",
  family: "core",
  description: "Fetch a web page or API URL and return its content as readable text/Markdown (or raw).",
  parameters: z.object({
    url: z.string().describe("http(s) URL to fetch"),
    max_chars: z.number().int().default(DEFAULT_MAX_CHARS).describe("Most characters to return (default 50000)"),
    raw: z.boolean().default(false).describe("Return HTML as markup instead of extracted text"),
  }),
  async run({ url, max_chars: maxChars, raw }, ctx) {
    if (!url.trim()) throw new Error("url is required");
    const limit = maxChars > 0 ? maxChars : DEFAULT_MAX_CHARS;
    const page = await guardedGet(url.trim(), ctx.settings.fetch);
    const text = decode(page);
    const type = page.contentType.split(";")[0].trim().toLowerCase();
    let extractor: "html_text" | "json" | "raw" = "raw";
    let content = text;
    let title: string | undefined;
    if (type.includes("json")) {
      try {
        content = JSON.stringify(JSON.parse(text), null, 2);
        extractor = "json";
      } catch {
        extractor = "raw";
      }
    } else if (type === "text/html" || type === "application/xhtml+xml") {
      const page = htmlToMarkdown(text);
      title = page.title || undefined;
      if (!raw) {
        content = page.markdown;
        extractor = "html_text";
      }
    }
    const clipped = clip(content, limit);
    return {
      url,
      final_url: page.finalUrl,
      status: page.status,
      content_type: page.contentType,
      ...(title ? { title } : {}),
      content: clipped.content,
      length: clipped.length,
      truncated: clipped.truncated || page.capped,
      extractor,
    };
  },
});
