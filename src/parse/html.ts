// HTML → the page's main content as markdown (scripts, navigation and cookie banners dropped):
// a DOM (linkedom), readability and turndown. Runs only inside the parse worker (worker.ts), after
// nestingDepth has checked the page: the DOM's cost grows far faster than the page's depth.

export interface Markdown {
  title?: string;
  text: string;
}

// Page furniture that is never the content, removed before readability looks at the page.
const NOISE = "script, style, noscript, template, iframe, svg, canvas, form, nav, header, footer, aside, [role=navigation], [role=banner], [role=contentinfo], [aria-modal=true]";
const BANNER = /(^|[\s_-])(cookie|cookies|consent|gdpr|cmp|newsletter|subscribe|popup|modal)([\s_-]|$)/i;

export const loadHtmlLibraries = () => Promise.all([import("@mozilla/readability"), import("linkedom"), import("turndown")]);

export async function htmlToMarkdown(html: string): Promise<Markdown> {
  const [{ Readability }, { parseHTML }, { default: TurndownService }] = await loadHtmlLibraries();
  const { document } = parseHTML(html);
  const title = document.querySelector("title")?.textContent?.trim() || undefined;
  for (const el of [...document.querySelectorAll(NOISE)]) el.remove();
  for (const el of [...document.querySelectorAll("[id], [class]")]) {
    if (BANNER.test(`${el.getAttribute("id") ?? ""} ${el.getAttribute("class") ?? ""}`)) el.remove();
  }
  let content: string | null | undefined;
  let articleTitle: string | null | undefined;
  try {
    const article = new Readability(document as unknown as ConstructorParameters<typeof Readability>[0], { charThreshold: 200 }).parse();
    content = article?.content;
    articleTitle = article?.title;
  } catch {
    content = null;
  }
  const turndown = new TurndownService({ headingStyle: "atx", codeBlockStyle: "fenced", bulletListMarker: "-" });
  turndown.remove(["script", "style", "noscript"]);
  const source = content ?? document.querySelector("body")?.innerHTML ?? "";
  const markdown = turndown.turndown(source).replace(/\n{3,}/g, "\n\n").trim();
  const t = articleTitle?.trim() || title;
  return { ...(t ? { title: t } : {}), text: markdown };
}
