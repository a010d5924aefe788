// The text of a PDF the model reads as a document block, kept beside it as `<pdf>.txt` for
// memory_search only (a PDF past the API's limits has that file already: it is what the model
// reads). Extracted after the message was accepted, one PDF at a time, so a long document
// neither delays the chat's message nor competes with another extraction for the CPU. pdf.js runs
// in the parse worker (src/parse/), with its limits.
import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
import type { Logger } from "../process/log.ts";
import { TEXT_MAX_CHARS } from "./prepare.ts";
import { writeOnce } from "./store.ts";

/** The same cap as the text of a PDF past the limits: about 200,000 characters. */
const MAX_CHARS = TEXT_MAX_CHARS * 4;

let queue: Promise<void> = Promise.resolve();

/**
 * Queues the extraction of `relPath` (a stored PDF, relative to `workspace`); once its text is
 * on disk, `onText` gets the text file's path. A PDF without text (scanned pages) gets no file.
 * Never rejects: a failure is logged, and costs only the search text. A crash before it ran
 * leaves the PDF unsearchable; the PDF itself is kept and read as before.
 */
export function extractPdfTextLater(workspace: string, relPath: string, onText: (textRel: string) => void, log: Logger): Promise<void> {
  const job = queue.then(async () => {
    try {
      const started = performance.now();
      const chars = await extractPdfText(join(workspace, relPath));
      if (chars === null) {
        log.info("media.pdf_text_none", { path: relPath });
        return;
      }
      onText(`${relPath}.txt`);
      log.info("media.pdf_text", { path: `${relPath}.txt`, chars, ms: Math.round(performance.now() - started) });
    } catch (err) {
      log.warn("media.pdf_text_failed", { path: relPath, error: err });
    }
  });
  queue = job;
  return job;
}

/** Writes `<file>.txt` (unless there) and returns its length in characters; null when the PDF has no text. */
async function extractPdfText(file: string): Promise<number | null> {
  const out = `${file}.txt`;
  if (existsSync(out)) return readFileSync(out, "utf8").length;
  const { parsePool, PDF_TIMEOUT_MS } = await import("../parse/pool.ts");
  const r = await parsePool().run({ type: "pdf", bytes: new Uint8Array(readFileSync(file)), textIfPagesOver: 0 }, { timeoutMs: PDF_TIMEOUT_MS });
  if (r.type === "too-complex") throw new PdfTextError(`too complex to extract: ${r.reason}`);
  if (r.type !== "pdf") throw new PdfTextError(r.type === "failed" ? r.message : "unexpected parse result");
  const text = r.text ?? "";
  if (text.trim() === "") return null;
  const body = `${text.length > MAX_CHARS ? text.slice(0, MAX_CHARS) : text}\n`;
  writeOnce(out, new TextEncoder().encode(body));
  return body.length;
}

/** The PDF's text could not be had (damaged, or past the parse limits); logged, never shown. */
class PdfTextError extends Error {
  override name = "PdfTextError";
}
