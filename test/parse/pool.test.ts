// The parse worker pool: jobs run off the main thread, a job past its time or memory limit ends
// with its worker terminated and a reason, idle workers end, and a PDF bomb is refused before
// pdf.js unpacks it.
import { setTimeout as sleep } from "node:timers/promises";
import { afterEach, describe, expect, it } from "vitest";
import { ParsePool } from "../../src/parse/pool.ts";
import { bombPdf, tinyPdf } from "../support/web-fixtures.ts";

const nested = (d: number) => `${"<div>".repeat(d)}<p>The bottom of the page.</p>${"</div>".repeat(d)}`;
const article = `<!doctype html><html><head><title>Bread</title></head><body><nav>Home | About</nav><article><h1>Bread</h1>${"<p>Flour, water, salt and time make bread; the dough rises slowly overnight in a cool room.</p>".repeat(20)}</article></body></html>`;

let pool: ParsePool | undefined;
afterEach(async () => {
  await pool?.close();
});

async function waitFor(check: () => boolean, timeoutMs = 30_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!check()) {
    if (Date.now() > deadline) throw new Error("timed out");
    await sleep(10);
  }
}

describe("ParsePool", () => {
  it("extracts a page to markdown in a worker, and the worker ends once idle", async () => {
    pool = new ParsePool({ idleMs: 100 });
    const r = await pool.run({ type: "html", html: article }, { timeoutMs: 60_000 });
    expect(r.type).toBe("html");
    if (r.type !== "html") return;
    expect(r.title).toBe("Bread");
    expect(r.text.startsWith("Flour, water, salt and time make bread")).toBe(true);
    expect(r.text).not.toContain("Home | About");
    expect(pool.size).toBe(1);
    await waitFor(() => pool!.size === 0);
  });

  it("a page nested past 256 levels is refused without a DOM", async () => {
    pool = new ParsePool();
    expect(await pool.run({ type: "html", html: nested(3000) }, { timeoutMs: 60_000 })).toEqual({ type: "too-complex", reason: "its tags nest deeper than 256 levels" });
  });

  it("a job past its time limit is ended, while the main thread keeps running", async () => {
    pool = new ParsePool();
    let ticks = 0;
    const timer = setInterval(() => ticks++, 5);
    let ticksAtResult = -1;
    const r = await pool.run({ type: "html", html: nested(250).repeat(400) }, { timeoutMs: 2000 }).finally(() => {
      ticksAtResult = ticks;
      clearInterval(timer);
    });
    expect(r).toEqual({ type: "too-complex", reason: "extracting it took longer than 2 s" });
    expect(ticksAtResult).toBeGreaterThan(0);
    expect(pool.size).toBe(0);
    // The pool starts a fresh worker for the next job.
    expect((await pool.run({ type: "html", html: article }, { timeoutMs: 60_000 })).type).toBe("html");
  });

  it("a job past its heap limit is ended with the reason", async () => {
    pool = new ParsePool({ heapMb: 48 });
    const flat = `<html><body>${"<p>Lorem ipsum dolor sit amet, <b>consectetur</b> adipiscing elit.</p>".repeat(70_000)}</body></html>`;
    expect(await pool.run({ type: "html", html: flat }, { timeoutMs: 300_000 })).toEqual({ type: "too-complex", reason: "extracting it needed more than 48 MB of memory" });
    expect(pool.size).toBe(0);
  });

  it("an aborted job ends at once", async () => {
    pool = new ParsePool();
    const stop = new AbortController();
    const running = pool.run({ type: "html", html: nested(250).repeat(400) }, { timeoutMs: 300_000, signal: stop.signal });
    stop.abort();
    expect(await running).toEqual({ type: "failed", message: "The extraction was stopped." });
  });

  it("closing the pool ends a running job (at shutdown a parse must not hold the process)", async () => {
    pool = new ParsePool();
    const running = pool.run({ type: "html", html: nested(250).repeat(400) }, { timeoutMs: 300_000 });
    await waitFor(() => pool!.size === 1);
    await pool.close();
    expect((await running).type).toBe("failed");
    expect(pool.size).toBe(0);
  });

  it("reads a PDF's pages and text, and refuses a PDF bomb before pdf.js unpacks it", async () => {
    pool = new ParsePool();
    expect(await pool.run({ type: "pdf", bytes: new Uint8Array(tinyPdf("Hello PDF")), textIfPagesOver: 0 }, { timeoutMs: 60_000 })).toEqual({ type: "pdf", pages: 1, text: "Hello PDF" });
    expect(await pool.run({ type: "pdf", bytes: new Uint8Array(tinyPdf("Hello PDF")), textIfPagesOver: 100 }, { timeoutMs: 60_000 })).toEqual({ type: "pdf", pages: 1, text: null });
    const bomb = await bombPdf(80 * 1024 * 1024);
    expect(await pool.run({ type: "pdf", bytes: new Uint8Array(bomb), textIfPagesOver: 0 }, { timeoutMs: 60_000 })).toEqual({ type: "too-complex", reason: "a compressed part of it unpacks to more than 64 MB" });
  }, 120_000);
});
