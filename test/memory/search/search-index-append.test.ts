// Incremental indexing: the daemon's append to a daily log indexes only the new text; anything
// else (a hand edit in between, an unknown file) falls back to a full, hash-checked sync.
import { appendFileSync, mkdirSync, writeFileSync } from "node:fs";
import { mkdtemp, realpath, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { silentLogger } from "../../../src/process/log.ts";
import { appendToDailyLog } from "../../../src/memory/daily-log.ts";
import { SearchIndex } from "../../../src/memory/search/search-index.ts";

let base: string;
let workspace: string;
let index: SearchIndex;
const main = { kind: "main" } as const;
const DAY = Date.UTC(2026, 10, 23, 12);
const LOG = "memory/2026-11-23.md";

beforeEach(async () => {
  base = await realpath(await mkdtemp(path.join(tmpdir(), "hearth-append-")));
  workspace = path.join(base, "workspace");
  mkdirSync(path.join(workspace, "memory"), { recursive: true });
  index = SearchIndex.open(path.join(base, "index", "memory.db"), silentLogger);
});
afterEach(async () => {
  index.close();
  await rm(base, { recursive: true, force: true });
});

const entry = (n: number, word: string) => `### 12:${String(n).padStart(2, "0")} · cli · Owner\n> message ${n} about ${word}\n\nanswer ${n}\n\n`;

function appendEntry(n: number, word: string): { relPath: string; offset: number } {
  return appendToDailyLog(workspace, main, DAY, "UTC", entry(n, word));
}

describe("SearchIndex.appendToFile", () => {
  it("indexes only the new chunk of a 200-entry log, with the right line, and deletes nothing", () => {
    for (let n = 0; n < 200; n++) appendEntry(n % 60, "routine");
    index.refreshFile(workspace, LOG);
    const before = { ...index.work };
    const { relPath, offset } = appendEntry(7, "zeppelin");
    expect(index.appendToFile(workspace, relPath, offset)).toBe("updated");
    expect(index.work.chunksWritten - before.chunksWritten).toBe(1);
    expect(index.work.chunksDeleted - before.chunksDeleted).toBe(0);
    const hits = index.search("zeppelin", main);
    expect(hits.map((h) => [h.path, h.line, h.heading])).toEqual([[LOG, 2 + 200 * 5 + 2, "### 12:07 · cli · Owner"]]);
  });

  it("many appends in a row find every word, and a later full rebuild sees the same hits", () => {
    let r = appendEntry(0, "start");
    index.appendToFile(workspace, r.relPath, r.offset);
    for (let n = 1; n <= 20; n++) {
      r = appendEntry(n, `word${n}x`);
      index.appendToFile(workspace, r.relPath, r.offset);
    }
    const incremental = [5, 13, 20].map((n) => index.search(`word${n}x`, main).map((h) => [h.path, h.line]));
    index.syncFile(LOG, "", { mtimeMs: 0, size: 0 }); // forget it
    index.refreshFile(workspace, LOG);
    const full = [5, 13, 20].map((n) => index.search(`word${n}x`, main).map((h) => [h.path, h.line]));
    expect(incremental).toEqual(full);
    expect(full.every((h) => h.length === 1)).toBe(true);
  });

  it("re-indexes the whole file when it changed by hand before the append", () => {
    for (let n = 0; n < 5; n++) appendEntry(n, "routine");
    index.refreshFile(workspace, LOG);
    writeFileSync(path.join(workspace, LOG), "# 2026-11-23\n\nrewritten by hand about quokka\n");
    const before = { ...index.work };
    const { relPath, offset } = appendEntry(9, "wombat");
    index.appendToFile(workspace, relPath, offset);
    expect(index.work.chunksDeleted - before.chunksDeleted).toBe(5);
    expect(index.search("quokka", main).length).toBe(1);
    expect(index.search("wombat", main).length).toBe(1);
    expect(index.search("routine", main).length).toBe(0);
  });

  it("an append by someone else's tool (not at the indexed end) is never indexed twice", () => {
    const first = appendEntry(1, "alpha");
    index.appendToFile(workspace, first.relPath, first.offset);
    appendFileSync(path.join(workspace, LOG), entry(2, "beta")); // not announced
    const third = appendEntry(3, "gamma");
    index.appendToFile(workspace, third.relPath, third.offset);
    expect(["alpha", "beta", "gamma"].map((w) => index.search(w, main).length)).toEqual([1, 1, 1]);
  });
});
