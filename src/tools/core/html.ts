let readers: Promise<Awaited<ReturnType<typeof loadReaders>>> | undefined;

/**
 * The DOM, Readability and Turndown, loaded on the first page read: together they are tens of MiB in
 * every process that loads them, and most attempts never read a page.
 */
async function loadReaders() {
  const [{ Readability }, { parseHTML }, { default: TurndownService }, { gfm }] = await Promise.all([
    import("@mozilla/readability"),
    import("linkedom"),
    import("turndown"),
    import("turndown-plugin-gfm"),
  ]);
  const turndown = new TurndownService({ headingStyle: "atx", codeBlockStyle: "fenced", bulletListMarker: "-" });
  turndown.use(gfm);
  turndown.remove(["script", "style", "noscript", "template", "iframe", "object"] as never);
  return { Readability, parseHTML, turndown };
}

/** linkedom's `parseHTML`, loaded on first use. */
export async function htmlParser() {
  return (await (readers ??= loadReaders())).parseHTML;
}

/** Readable Markdown of a page: no scripts run, nothing fetched; the article if Readability finds one. */
export async function htmlToMarkdown(html: string): Promise<{ title: string; markdown: string }> {
  const { Readability, parseHTML, turndown } = await (readers ??= loadReaders());
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
