// Runs in its own process (parsers.bench.ts starts it once per case) so that its RSS is the
// case's alone: one parser bomb (argv[2]) through the path the daemon uses, with its time and the
// process's peak RSS (the worker threads included); or, without an argument, a normal ~200 KB
// article extracted on the main thread (how every page was read before the parse worker) and
// through the worker pool.
import { readFileSync } from "node:fs";
import { extractContent, UnsupportedContentError } from "../../src/agent/tools/web/extract.ts";
import { htmlToMarkdown } from "../../src/parse/html.ts";
import { prepareAttachment } from "../../src/media/prepare.ts";
import { parsePool } from "../../src/parse/pool.ts";
import { bombPdf } from "../../test/support/web-fixtures.ts";
import { measure, percentile, round } from "../harness.ts";

const rssMb = () => Number(/VmRSS:\s+(\d+)/.exec(readFileSync("/proc/self/status", "utf8"))![1]) / 1024;

/** A news-style article page of about 200 KB: scripts, styles, navigation, 240 paragraphs, lists, a table, a footer. */
export function articlePage(): string {
  const words = "the garden council met on tuesday to discuss water rights rainfall budget volunteers compost orchard bees pollination soil harvest market winter planning neighbours seedlings greenhouse".split(" ");
  const sentence = (i: number) => `${Array.from({ length: 18 }, (_, k) => words[(i * 7 + k * 3) % words.length]).join(" ")}.`;
  const para = (i: number) => `<p class="body-text">${sentence(i)} <a href="/link/${i}">${words[i % words.length]}</a> ${sentence(i + 1)} <em>${sentence(i + 2)}</em> ${sentence(i + 3)}</p>`;
  const nav = `<nav class="site-nav"><ul>${Array.from({ length: 60 }, (_, i) => `<li><a href="/section/${i}">Section ${i}</a></li>`).join("")}</ul></nav>`;
  const script = `<script>${"window.dataLayer=window.dataLayer||[];function gtag(){dataLayer.push(arguments)};".repeat(300)}</script>`;
  const style = `<style>${".a{color:red;margin:0 auto;padding:4px 8px}".repeat(400)}</style>`;
  const body = Array.from({ length: 240 }, (_, i) => (i % 15 === 0 ? `<h2>Part ${i / 15 + 1}</h2>` : "") + para(i) + (i % 20 === 10 ? `<ul>${Array.from({ length: 5 }, (_, k) => `<li>${sentence(i + k)}</li>`).join("")}</ul>` : "")).join("\n");
  const table = `<table><tr><th>Plot</th><th>Crop</th><th>Yield</th></tr>${Array.from({ length: 30 }, (_, i) => `<tr><td>${i}</td><td>${words[i % words.length]}</td><td>${i * 3} kg</td></tr>`).join("")}</table>`;
  const footer = `<footer><div class="cookie-banner">We use cookies</div>${Array.from({ length: 40 }, (_, i) => `<a href="/f/${i}">Footer link ${i}</a>`).join(" ")}</footer>`;
  return `<!doctype html><html><head><title>Garden council meets</title>${style}${script}</head><body><header>${nav}</header><main><article><h1>Garden council meets</h1>${body}${table}</article></main><aside>${nav}</aside>${footer}</body></html>`;
}

async function peakWhile<T>(fn: () => Promise<T>): Promise<{ ms: number; peakMb: number; result: T }> {
  let peak = rssMb();
  const timer = setInterval(() => (peak = Math.max(peak, rssMb())), 5);
  const start = performance.now();
  try {
    const result = await fn();
    return { ms: performance.now() - start, peakMb: Math.max(peak, rssMb()), result };
  } finally {
    clearInterval(timer);
  }
}

const nested = (d: number) => `<!doctype html><html><body>${"<div>".repeat(d)}<p>The bottom of the page.</p>${"</div>".repeat(d)}</body></html>`;

const only = process.argv[2] ?? "";
const out: Record<string, number> = {};
const pdfBomb = only === "pdfBomb1gb" ? new Uint8Array(await bombPdf(1024 * 1024 * 1024)) : new Uint8Array();
const cases: Record<string, () => Promise<unknown>> = {
  nested3000: () => extractContent(Buffer.from(nested(3000)), "text/html", "https://example.org/d"),
  nested200k: () => extractContent(Buffer.from(nested(200_000)), "text/html", "https://example.org/d"),
  flat5mb: () => extractContent(Buffer.from(`<html><body>${"<p>Lorem ipsum dolor sit amet, <b>consectetur</b> adipiscing elit.</p>".repeat(70_000)}</body></html>`), "text/html", "https://example.org/f"),
  pdfBomb1gb: () => prepareAttachment(pdfBomb, "bomb.pdf", "application/pdf"),
};
const bomb = cases[only];
if (bomb) {
  // One bomb per process: the peak RSS is its own.
  const r = await peakWhile(() => bomb().catch((err: unknown) => (err instanceof UnsupportedContentError ? err.message : Promise.reject(err))));
  out.ms = r.ms;
  out.peakMb = r.peakMb;
} else {
  const page = articlePage();
  const html = Buffer.from(page);
  out.articleKb = round(html.length / 1024, 0);
  out.workerColdMs = (await peakWhile(() => extractContent(html, "text/html", "https://example.org/a"))).ms;
  out.mainThreadColdMs = (await peakWhile(() => htmlToMarkdown(page))).ms;
  // Before (the page read on the main thread, as every fetch was) and after (through the warm
  // worker), taken in turns so that a busy machine slows both alike.
  const before: number[] = [];
  const after: number[] = [];
  for (let i = 0; i < 11; i++) {
    before.push(...(await measure(1, () => htmlToMarkdown(page))));
    after.push(...(await measure(1, () => extractContent(html, "text/html", "https://example.org/a"))));
  }
  out.mainThreadMs = percentile(before.sort((a, b) => a - b), 50);
  out.workerMs = percentile(after.sort((a, b) => a - b), 50);
}
await parsePool().close();
process.stdout.write(JSON.stringify(out));
