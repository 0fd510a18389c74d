import { z } from "zod";
import { guardedRequest, headerOf } from "../../policy/ssrf.ts";
import { readCapped } from "../../util/read-capped.ts";
import { OrkaError } from "../../util/errors.ts";
import { defineTool } from "../define.ts";
import type { FetchSettings } from "../settings.ts";
import { htmlToMarkdown } from "./html.ts";

export const MAX_BODY_BYTES = 5 * 1024 * 1024;
const DEFAULT_MAX_CHARS = 50_000;
const MAX_REDIRECTS = 5;
const USER_AGENT = "Mozilla/5.0 (compatible; OrkaBot/1.0)";
const ACCEPT = "text/html,application/xhtml+xml,application/xml;q=0.9,*/*;q=0.8";

interface Page {
  finalUrl: string;
  status: number;
  contentType: string;
  body: Buffer;
  capped: boolean;
}

const isText = (type: string) => type === "" || /^text\/|json|xml|javascript/.test(type);

/** GET through the egress guard (every hop checked), the body capped after decompression. */
export function guardedGet(rawUrl: string, settings: FetchSettings, signal?: AbortSignal): Promise<Page> {
  const headers = { "user-agent": USER_AGENT, accept: ACCEPT, "accept-encoding": "gzip, deflate, br" };
  const request = { headers, maxRedirects: MAX_REDIRECTS, timeoutMs: settings.timeoutMs, signal };
  return guardedRequest(rawUrl, settings.egress, request, async (response, url) => {
    const fullType = headerOf(response, "content-type") ?? "";
    const contentType = fullType.split(";")[0].trim().toLowerCase();
    if (!isText(contentType)) throw new OrkaError("unsupported_media_type", `unsupported content type: ${contentType}`);
    const { body, capped } = await readCapped(response.body, MAX_BODY_BYTES);
    return { finalUrl: url.toString(), status: response.statusCode, contentType: fullType, body, capped };
  });
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
  offeredOnCompat: true,
  description: "Fetch a web page or API URL and return its content as readable text/Markdown (or raw).",
  parameters: z.object({
    url: z.string().describe("http(s) URL to fetch"),
    max_chars: z.number().int().default(DEFAULT_MAX_CHARS).describe("Most characters to return (default 50000)"),
    raw: z.boolean().default(false).describe("Return HTML as markup instead of extracted text"),
  }),
  async run({ url, max_chars: maxChars, raw }, ctx) {
    if (!url.trim()) throw new OrkaError("invalid_argument", "url is required");
    const limit = maxChars > 0 ? maxChars : DEFAULT_MAX_CHARS;
    const page = await guardedGet(url.trim(), ctx.settings.fetch, ctx.signal);
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
      const page = await htmlToMarkdown(text);
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
