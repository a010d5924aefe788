// Turns a fetched body into text for the model: HTML → the main content as markdown (scripts,
// navigation and cookie banners dropped), PDF → its text, JSON → pretty-printed, text → as is.
// The HTML libraries (a DOM, readability, turndown: several megabytes) load with the first page
// fetched, not with the daemon.

export interface Extracted {
  title?: string;
  text: string;
  /** "html", "pdf", "json" or "text": how the body was read. */
  kind: "html" | "pdf" | "json" | "text";
}

/** The body's type is one Hearth cannot read (an image, an archive…); the message is for the model. */
export class UnsupportedContentError extends Error {
  override name = "UnsupportedContentError";
}

export async function extractContent(body: Buffer, contentType: string, url: string): Promise<Extracted> {
  const type = contentType.split(";")[0]!.trim().toLowerCase();
  const charset = /charset=([^;]+)/i.exec(contentType)?.[1]?.trim().replace(/"/g, "");
  if (type === "application/pdf" || (type === "" && body.subarray(0, 5).toString("latin1") === "%PDF-")) return { kind: "pdf", text: await pdfText(body) };
  const text = decodeText(body, charset);
  if (type === "text/html" || type === "application/xhtml+xml" || (type === "" && /^\s*<(!doctype html|html)/i.test(text))) return await htmlToMarkdown(text);
  if (type === "application/json" || type.endsWith("+json")) return { kind: "json", text: prettyJson(text) };
  if (type.startsWith("text/") || type === "application/xml" || type.endsWith("+xml") || type === "") return { kind: "text", text };
  throw new UnsupportedContentError(`${url} is ${type}, which web_fetch cannot read (it reads HTML, text, JSON and PDF).`);
}

function decodeText(body: Buffer, charset: string | undefined): string {
  try {
    return new TextDecoder(charset ?? "utf-8").decode(body);
  } catch {
    return new TextDecoder("utf-8").decode(body);
  }
}

function prettyJson(text: string): string {
  try {
    return JSON.stringify(JSON.parse(text), null, 2);
  } catch {
    return text; // a body cut at the size cap, or not JSON after all
  }
}

// Page furniture that is never the content, removed before readability looks at the page.
const NOISE = "script, style, noscript, template, iframe, svg, canvas, form, nav, header, footer, aside, [role=navigation], [role=banner], [role=contentinfo], [aria-modal=true]";
const BANNER = /(^|[\s_-])(cookie|cookies|consent|gdpr|cmp|newsletter|subscribe|popup|modal)([\s_-]|$)/i;

export async function htmlToMarkdown(html: string): Promise<Extracted> {
  const [{ Readability }, { parseHTML }, { default: TurndownService }] = await Promise.all([import("@mozilla/readability"), import("linkedom"), import("turndown")]);
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
  return { kind: "html", ...(t ? { title: t } : {}), text: markdown };
}

async function pdfText(body: Buffer): Promise<string> {
  const { extractText, getDocumentProxy } = await import("unpdf");
  try {
    const pdf = await getDocumentProxy(new Uint8Array(body));
    const { text } = await extractText(pdf, { mergePages: true });
    return text.trim();
  } catch (err) {
    throw new UnsupportedContentError(`The PDF could not be read (${err instanceof Error ? err.message : String(err)}); it may be damaged or cut at the size limit.`);
  }
}
