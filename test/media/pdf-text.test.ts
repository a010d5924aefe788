// A PDF read as a document block gets its text kept beside it, for memory_search only.
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { createLogger, type Logger } from "../../src/process/log.ts";
import { extractPdfTextLater } from "../../src/media/pdf-text.ts";
import { pdf } from "../support/media-files.ts";

let ws: string;
let lines: Array<{ event: string; level: string; path?: string }>;
let log: Logger;
let indexed: string[];
const onText = (rel: string) => void indexed.push(rel);

beforeEach(() => {
  ws = mkdtempSync(join(tmpdir(), "hearth-pdftext-"));
  mkdirSync(join(ws, "media", "2026-11"), { recursive: true });
  lines = [];
  indexed = [];
  log = createLogger({ level: "debug", sink: { write: (l) => lines.push(JSON.parse(l)) } });
});
afterEach(() => rmSync(ws, { recursive: true, force: true }));

const put = (rel: string, bytes: Uint8Array | string) => writeFileSync(join(ws, rel), bytes);

describe("extractPdfTextLater", () => {
  it("writes <pdf>.txt with the pages' text and then hands its path to the index, one PDF after the other", async () => {
    put("media/2026-11/a.pdf", pdf(2));
    put("media/2026-11/b.pdf", pdf(3));
    const first = extractPdfTextLater(ws, "media/2026-11/a.pdf", onText, log);
    const second = extractPdfTextLater(ws, "media/2026-11/b.pdf", onText, log);
    await Promise.all([first, second]);
    expect(readFileSync(join(ws, "media/2026-11/a.pdf.txt"), "utf8")).toBe("Page 1\nPage 2\n");
    expect(readFileSync(join(ws, "media/2026-11/b.pdf.txt"), "utf8")).toBe("Page 1\nPage 2\nPage 3\n");
    expect(indexed).toEqual(["media/2026-11/a.pdf.txt", "media/2026-11/b.pdf.txt"]);
  });

  it("a PDF without text gets no file; a damaged one is logged and never throws", async () => {
    put("media/2026-11/empty.pdf", pdf(0));
    put("media/2026-11/bad.pdf", "%PDF-1.4 garbage");
    await extractPdfTextLater(ws, "media/2026-11/empty.pdf", onText, log);
    await extractPdfTextLater(ws, "media/2026-11/bad.pdf", onText, log);
    expect([existsSync(join(ws, "media/2026-11/empty.pdf.txt")), existsSync(join(ws, "media/2026-11/bad.pdf.txt"))]).toEqual([false, false]);
    expect(indexed).toEqual([]);
    expect(lines.filter((l) => l.event.startsWith("media.pdf_text")).map((l) => [l.event, l.level, l.path])).toEqual([
      ["media.pdf_text_none", "info", "media/2026-11/empty.pdf"],
      ["media.pdf_text_failed", "warn", "media/2026-11/bad.pdf"],
    ]);
  });

  it("leaves a text that is already there (a PDF past the limits) as it is", async () => {
    put("media/2026-11/big.pdf", pdf(1));
    put("media/2026-11/big.pdf.txt", "extracted at intake\n");
    await extractPdfTextLater(ws, "media/2026-11/big.pdf", onText, log);
    expect(readFileSync(join(ws, "media/2026-11/big.pdf.txt"), "utf8")).toBe("extracted at intake\n");
    expect(indexed).toEqual(["media/2026-11/big.pdf.txt"]);
  });
});
