// What an attachment becomes for the model (DESIGN §10): an image block (JPEG, PNG, GIF, WebP,
// scaled down when larger than the API takes), a document block (a PDF within the API's limits),
// or text (a text-like file; a PDF past the limits, extracted). Everything else is refused with
// one sentence for the sender. Runs once, when the message is accepted, so the request builder
// only ever reads files that are known to be good.
import { loadSharp } from "./sharp.ts";

/** The Messages API's image limits: 5 MB per image; past 1568 px on the long edge it scales anyway. */
export const IMAGE_MAX_BYTES = 5 * 1024 * 1024;
export const IMAGE_MAX_EDGE = 1568;
/** The Messages API's PDF limits. */
export const PDF_MAX_BYTES = 32 * 1024 * 1024;
export const PDF_MAX_PAGES = 100;
/** Text-like files are sent inline up to this many characters. */
export const TEXT_MAX_CHARS = 50_000;

const API_IMAGE_TYPES: Record<string, string> = { jpeg: "image/jpeg", png: "image/png", gif: "image/gif", webp: "image/webp" };

const TEXT_EXTENSIONS = new Set([
  "txt", "md", "markdown", "csv", "tsv", "json", "jsonl", "yaml", "yml", "toml", "ini", "xml", "html", "htm", "log",
  "ts", "tsx", "js", "jsx", "mjs", "cjs", "py", "rb", "go", "rs", "java", "kt", "c", "h", "cpp", "hpp", "cs", "sh", "sql", "css", "swift", "php",
]);

/** A derived file to store beside the original (a scaled picture, a PDF's text). */
export interface Derived {
  suffix: string;
  bytes: Uint8Array;
}

export type Prepared =
  | { type: "image"; mime: string; derived?: Derived; note?: string }
  | { type: "document"; mime: "application/pdf" }
  | { type: "text"; mime: string; derived?: Derived; note?: string }
  | { type: "refused"; reason: string };

/** Decides what the model gets for these bytes. Never throws: a bad file is a refusal. */
export async function prepareAttachment(bytes: Uint8Array, name: string, statedMime: string): Promise<Prepared> {
  const ext = extensionOf(name);
  if (bytes.length === 0) return { type: "refused", reason: `The file ${name} is empty.` };
  if (isPdf(bytes)) return preparePdf(bytes, name);
  if (statedMime.startsWith("image/") || looksLikeImage(bytes)) return prepareImage(bytes, name);
  if (statedMime.startsWith("text/") || statedMime === "application/json" || TEXT_EXTENSIONS.has(ext)) return prepareText(bytes, name, statedMime);
  return { type: "refused", reason: `I can't read ${ext ? `.${ext} files` : `this kind of file (${name})`} yet; I understand pictures, PDFs and text files.` };
}

/** The bytes of a picture as the model takes them (the read tool): as they are, scaled or converted. */
export async function imageForModel(bytes: Uint8Array, name: string): Promise<{ type: "image"; mime: string; bytes: Uint8Array; note?: string } | { type: "refused"; reason: string }> {
  const r = await prepareImage(bytes, name);
  if (r.type !== "image") return r.type === "refused" ? r : { type: "refused", reason: `${name} is not a picture.` };
  return { type: "image", mime: r.mime, bytes: r.derived?.bytes ?? bytes, ...(r.note ? { note: r.note } : {}) };
}

async function prepareImage(bytes: Uint8Array, name: string): Promise<Prepared> {
  const sharp = await loadSharp();
  let meta: { format?: string | undefined; width?: number | undefined; height?: number | undefined };
  try {
    meta = await sharp(bytes).metadata();
  } catch {
    return { type: "refused", reason: `I couldn't open the picture ${name}: the file seems damaged.` };
  }
  const native = meta.format ? API_IMAGE_TYPES[meta.format] : undefined;
  const edge = Math.max(meta.width ?? 0, meta.height ?? 0);
  if (native && bytes.length <= IMAGE_MAX_BYTES && edge <= IMAGE_MAX_EDGE) return { type: "image", mime: native };
  try {
    // Larger than the API takes, or a format it does not (HEIC, TIFF, BMP…): a JPEG that fits.
    const out = await sharp(bytes).rotate().resize({ width: IMAGE_MAX_EDGE, height: IMAGE_MAX_EDGE, fit: "inside", withoutEnlargement: true }).jpeg({ quality: 85 }).toBuffer();
    const note = native ? `(picture scaled down to fit the model's limits)` : `(picture converted from ${meta.format ?? "an unknown format"} to JPEG)`;
    return { type: "image", mime: "image/jpeg", derived: { suffix: ".model.jpg", bytes: new Uint8Array(out) }, note };
  } catch {
    return { type: "refused", reason: `I can't read pictures in the ${meta.format ?? "unknown"} format yet; JPEG, PNG, GIF and WebP work.` };
  }
}

async function preparePdf(bytes: Uint8Array, name: string): Promise<Prepared> {
  // Opened in the parse worker (src/parse/): a PDF from a chat is untrusted, and pdf.js would
  // inflate a bomb into the daemon's memory.
  const { parsePool, PDF_TIMEOUT_MS } = await import("../parse/pool.ts");
  const textIfPagesOver = bytes.length > PDF_MAX_BYTES ? 0 : PDF_MAX_PAGES;
  const r = await parsePool().run({ type: "pdf", bytes, textIfPagesOver }, { timeoutMs: PDF_TIMEOUT_MS });
  switch (r.type) {
    case "too-complex":
      return { type: "refused", reason: `I couldn't read the PDF ${name}: it is too complex to open safely (${r.reason}).` };
    case "failed":
    case "html":
      return { type: "refused", reason: `I couldn't open the PDF ${name}: the file seems damaged.` };
    case "pdf":
      break;
  }
  const pages = r.pages;
  if (pages === 0) return { type: "refused", reason: `The PDF ${name} has no pages.` };
  if (r.text === null) return { type: "document", mime: "application/pdf" };
  const text = r.text;
  const body = text.length > TEXT_MAX_CHARS * 4 ? text.slice(0, TEXT_MAX_CHARS * 4) : text;
  return { type: "text", mime: "text/plain", derived: { suffix: ".txt", bytes: new TextEncoder().encode(body) }, note: `(a ${pages}-page PDF, past what the model reads as a document: its extracted text follows)` };
}

function prepareText(bytes: Uint8Array, name: string, statedMime: string): Prepared {
  let text: string;
  try {
    text = new TextDecoder("utf-8", { fatal: true }).decode(bytes);
  } catch {
    return { type: "refused", reason: `The file ${name} is not readable text (it is not UTF-8).` };
  }
  if (text.includes("\u0000")) return { type: "refused", reason: `The file ${name} is not readable text.` };
  return { type: "text", mime: statedMime.startsWith("text/") || statedMime === "application/json" ? statedMime : "text/plain" };
}

const isPdf = (b: Uint8Array) => b.length >= 5 && String.fromCharCode(...b.subarray(0, 5)) === "%PDF-";

/** JPEG, PNG, GIF, WebP, BMP, TIFF and HEIF magic numbers. */
function looksLikeImage(b: Uint8Array): boolean {
  const head = String.fromCharCode(...b.subarray(0, 12));
  return (b[0] === 0xff && b[1] === 0xd8) || head.startsWith("\x89PNG") || head.startsWith("GIF8") || (head.startsWith("RIFF") && head.slice(8) === "WEBP") ||
    head.startsWith("BM") || head.startsWith("II*\0") || head.startsWith("MM\0*") || head.slice(4, 8) === "ftyp";
}

export const extensionOf = (name: string): string => {
  const i = name.lastIndexOf(".");
  return i > 0 ? name.slice(i + 1).toLowerCase() : "";
};
