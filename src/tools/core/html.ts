import { Readability } from "@mozilla/readability";
import { parseHTML } from "linkedom";
import TurndownService from "turndown";
import { gfm } from "turndown-plugin-gfm";

const turndown = new TurndownService({ headingStyle: "atx", codeBlockStyle: "fenced", bulletListMarker: "-" });
turndown.use(gfm);
turndown.remove(["script", "style", "noscript", "template", "iframe", "object"] as never);

/** Readable Markdown of a page: no scripts run, nothing fetched; the article if Readability finds one. */
export function htmlToMarkdown(html: string): { title: string; markdown: string } {
  const { document } = parseHTML(html);
  const title = (document.querySelector("title")?.textContent ?? "").trim();
  try {
    const article = new Readability(document as unknown as ConstructorParameters<typeof Readability>[0]).parse();
    if (article?.content) {
      const heading = article.title || title;
      const body = turndown.turndown(article.content).trim();
      return { title: heading, markdown: heading ? `# ${heading}\n\n${body}` : body };
    }
  } catch {
    // fall back to plain text below
  }
  const { document: fresh } = parseHTML(html);
  for (const node of fresh.querySelectorAll("script, style, noscript, template, svg")) node.remove();
  const text = (fresh.body?.textContent ?? "").replace(/[ \t]+/g, " ").replace(/\s*\n\s*/g, "\n").trim();
  return { title, markdown: title ? `# ${title}\n\n${text}` : text };
}
