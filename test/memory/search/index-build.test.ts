// The first index build runs in slices that yield to the event loop: the daemon keeps answering,
// memory_search answers from what is indexed so far and says so, and the WAL stays small.
import { mkdirSync, statSync, writeFileSync } from "node:fs";
import { mkdtemp, realpath, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { silentLogger } from "../../../src/process/log.ts";
import { SearchIndex } from "../../../src/memory/search/search-index.ts";
import { createMemoryTools, INDEX_BUILDING_NOTE } from "../../../src/memory/tools.ts";
import type { ToolContext } from "../../../src/agent/tool.ts";

let base: string;
let workspace: string;
let dbPath: string;
let index: SearchIndex;
const FILES = 1500;

beforeEach(async () => {
  base = await realpath(await mkdtemp(path.join(tmpdir(), "hearth-build-")));
  workspace = path.join(base, "workspace");
  for (let d = 0; d < 15; d++) {
    mkdirSync(path.join(workspace, `notes${d}`), { recursive: true });
    for (let f = 0; f < FILES / 15; f++) writeFileSync(path.join(workspace, `notes${d}`, `n${f}.md`), `# Note ${d}-${f}\n\n${"filler text about gardens ".repeat(40)}\nmarker${d}x${f}\n`);
  }
  dbPath = path.join(base, "index", "memory.db");
  index = SearchIndex.open(dbPath, silentLogger);
});
afterEach(async () => {
  index.close();
  await rm(base, { recursive: true, force: true });
});

const ctx: ToolContext = { signal: new AbortController().signal, workspace: "", scope: "main", sessionKey: "main", log: silentLogger };

describe("SearchIndex.reconcileInSlices", () => {
  it("yields between slices; memory_search answers meanwhile and says the index is still building", async () => {
    const search = createMemoryTools({ workspace, timezone: "UTC", index, clock: () => 0, onOwnWrite: () => {} }).find((t) => t.name === "memory_search")!;
    let ticks = 0;
    const timer = setInterval(() => ticks++, 0);
    const build = index.reconcileInSlices(workspace, { sliceMs: 2 });
    expect(index.building).toBe(true);
    await new Promise((r) => setImmediate(r));
    await new Promise((r) => setTimeout(r, 5));
    const during = await search.execute(search.input.parse({ query: "gardens" }), { ...ctx, workspace });
    const stillBuilding = index.building;
    const result = await build;
    clearInterval(timer);
    expect(stillBuilding).toBe(true);
    expect(during.content.endsWith(`\n${INDEX_BUILDING_NOTE}`)).toBe(true);
    expect(ticks).toBeGreaterThan(1);
    expect(result).toEqual({ added: FILES, updated: 0, removed: 0 });
    expect(index.building).toBe(false);
    const after = await search.execute(search.input.parse({ query: "marker14x99" }), { ...ctx, workspace });
    expect(after.content).toBe("notes14/n99.md:4 (# Note 14-99) …text about gardens filler text about gardens filler text about gardens [marker14x99]");
  });

  it("keeps a file that its writer indexed during the build, though the build's walk never saw it", async () => {
    const build = index.reconcileInSlices(workspace, { sliceMs: 1 });
    await new Promise((r) => setTimeout(r, 20));
    expect(index.building).toBe(true);
    mkdirSync(path.join(workspace, "memory"), { recursive: true });
    writeFileSync(path.join(workspace, "memory", "2026-11-23.md"), "# 2026-11-23\n\nwritten during the build: platypus\n");
    index.refreshFile(workspace, "memory/2026-11-23.md");
    await build;
    expect(index.search("platypus", { kind: "main" }).map((h) => h.path)).toEqual(["memory/2026-11-23.md"]);
  });

  it("checkpoints between slices: the WAL never outgrows the database", async () => {
    let maxWal = 0;
    const timer = setInterval(() => {
      maxWal = Math.max(maxWal, statSync(`${dbPath}-wal`, { throwIfNoEntry: false })?.size ?? 0);
    }, 0);
    await index.reconcileInSlices(workspace, { sliceMs: 5 });
    clearInterval(timer);
    const db = statSync(dbPath).size;
    expect(statSync(`${dbPath}-wal`).size).toBe(0);
    expect(maxWal).toBeLessThan(db * 0.5);
  });
});
