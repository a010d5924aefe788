// Turns a fetched body into text for the model: HTML → the main content as markdown (scripts,
// navigation and cookie banners dropped), PDF → its text, JSON → pretty-printed, text → as is.
// HTML and PDF are parsed in a worker thread with time and memory limits (src/parse/); a page
// past them is given as plain text with a note saying why.
import { stripTags } from "../../../parse/html-scan.ts";

export interface Extracted {
  title?: string;
  text: string;
  /** "html", "pdf", "json" or "text": how the body was read. */
  kind: "html" | "pdf" | "json" | "text";
  /** Why the text is not the usual extraction (a limit was hit); shown to the model first. */
  note?: string;
}

/** The body's type is one Hearth cannot read (an image, an archive…); the message is for the model. */
export class UnsupportedContentError extends Error {
  override name = "UnsupportedContentError";
}

/** `signal` stops a parse in progress (the run was stopped). */
export async function extractContent(body: Buffer, contentType: string, url: string, signal?: AbortSignal): Promise<Extracted> {
  const type = contentType.split(";")[0]!.trim().toLowerCase();
  const charset = /charset=([^;]+)/i.exec(contentType)?.[1]?.trim().replace(/"/g, "");
  if (type === "application/pdf" || (type === "" && body.subarray(0, 5).toString("latin1") === "%PDF-")) return { kind: "pdf", text: await pdfText(body, signal) };
  const text = decodeText(body, charset);
  if (type === "text/html" || type === "application/xhtml+xml" || (type === "" && /^\s*<(!doctype html|html)/i.test(text))) return await htmlContent(text, signal);
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

/** Characters of plain text the model gets from a page too complex to extract. */
export const FALLBACK_CHARS = 64_000;

async function htmlContent(html: string, signal: AbortSignal | undefined): Promise<Extracted> {
  const { parsePool, HTML_TIMEOUT_MS } = await import("../../../parse/pool.ts");
  const r = await parsePool().run({ type: "html", html }, { timeoutMs: HTML_TIMEOUT_MS, ...(signal ? { signal } : {}) });
  switch (r.type) {
    case "html":
      return { kind: "html", ...(r.title ? { title: r.title } : {}), text: r.text };
    case "too-complex":
      return plainText(html, `The page is too complex to extract (${r.reason})`);
    case "failed":
      if (signal?.aborted) throw new UnsupportedContentError(r.message);
      return plainText(html, `The page could not be extracted (${r.message})`);
    case "pdf":
      throw new Error("the parse worker answered an HTML job with a PDF result");
  }
}

/** The page's text without a DOM (one linear pass), with a note saying why (`why` is a clause). */
function plainText(html: string, why: string): Extracted {
  const { text, cut } = stripTags(html, FALLBACK_CHARS);
  const what = cut ? `the first ${FALLBACK_CHARS.toLocaleString("en-US")} characters of its text` : "its text";
  return { kind: "html", text, note: `${why}; here is ${what}, without markup.` };
}

async function pdfText(body: Buffer, signal: AbortSignal | undefined): Promise<string> {
  const { parsePool, PDF_TIMEOUT_MS } = await import("../../../parse/pool.ts");
  const r = await parsePool().run({ type: "pdf", bytes: new Uint8Array(body), textIfPagesOver: 0 }, { timeoutMs: PDF_TIMEOUT_MS, ...(signal ? { signal } : {}) });
  switch (r.type) {
    case "pdf":
      return (r.text ?? "").trim();
    case "too-complex":
      throw new UnsupportedContentError(`The PDF is too complex to extract (${r.reason}).`);
    case "failed":
      throw new UnsupportedContentError(signal?.aborted ? r.message : `The PDF could not be read (${r.message}); it may be damaged or cut at the size limit.`);
    case "html":
      throw new Error("the parse worker answered a PDF job with an HTML result");
  }
}
