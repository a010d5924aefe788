// The work the parse worker does, and the limits each job carries. Everything here runs inside
// the worker (worker.ts); the daemon only sees `JobResult`s.
import { nestingDepth } from "./html-scan.ts";
import { checkPdfStreams } from "./pdf-streams.ts";

/** Tags nested deeper than this are not built into a DOM: 256 levels already take about a second. */
export const MAX_HTML_DEPTH = 256;
/** Unpacked bytes of one compressed PDF stream, and of all of them together. */
export const MAX_PDF_STREAM_BYTES = 64 * 1024 * 1024;
export const MAX_PDF_TOTAL_BYTES = 256 * 1024 * 1024;

export type Job =
  | { type: "html"; html: string }
  /** Opens a PDF, counts its pages, and extracts its text when it has more than `textIfPagesOver` pages. */
  | { type: "pdf"; bytes: Uint8Array; textIfPagesOver: number };

export type JobResult =
  | { type: "html"; title?: string; text: string }
  | { type: "pdf"; pages: number; text: string | null }
  /** A limit was hit; `reason` finishes "it is too complex to extract (…)". */
  | { type: "too-complex"; reason: string }
  /** The input is damaged (a PDF pdf.js cannot open); `message` is the library's. */
  | { type: "failed"; message: string };

/**
 * Loads the libraries `job` needs (the first job of a worker pays for it). Hearth's own code
 * and no input: the pool starts a job's clock only after this, so a busy machine's slow start-up
 * is never blamed on the page.
 */
export async function loadParsers(job: Job): Promise<void> {
  if (job.type === "html") await import("./html.ts").then((m) => m.loadHtmlLibraries());
  else await import("unpdf");
}

export async function runJob(job: Job): Promise<JobResult> {
  switch (job.type) {
    case "html": {
      if (nestingDepth(job.html, MAX_HTML_DEPTH) > MAX_HTML_DEPTH) return { type: "too-complex", reason: `its tags nest deeper than ${MAX_HTML_DEPTH} levels` };
      const { htmlToMarkdown } = await import("./html.ts");
      return { type: "html", ...(await htmlToMarkdown(job.html)) };
    }
    case "pdf": {
      const bomb = await checkPdfStreams(job.bytes, { maxStreamBytes: MAX_PDF_STREAM_BYTES, maxTotalBytes: MAX_PDF_TOTAL_BYTES });
      if (bomb) return { type: "too-complex", reason: bomb };
      const { getDocumentProxy, extractText } = await import("unpdf");
      try {
        const doc = await getDocumentProxy(job.bytes);
        const pages = doc.numPages;
        if (pages <= job.textIfPagesOver) return { type: "pdf", pages, text: null };
        const { text } = await extractText(doc, { mergePages: true });
        return { type: "pdf", pages, text };
      } catch (err) {
        return { type: "failed", message: err instanceof Error ? err.message : String(err) };
      }
    }
  }
}
