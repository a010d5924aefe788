// The text of stored media (voice-note transcripts, a PDF's text, text files) is memory like a
// note: indexed, searched and read with the scope of the folder it is stored in — the owner's
// media/YYYY-MM/ only by the main scope, a chat's memory/chats/<slug>/media/ by that chat and main.
import { mkdirSync, writeFileSync } from "node:fs";
import { mkdir, mkdtemp, realpath, rm, symlink, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { setTimeout as sleep } from "node:timers/promises";
import { DatabaseSync } from "node:sqlite";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import type { Scope } from "../../../src/agent/messages.ts";
import type { Tool, ToolOutput } from "../../../src/agent/tool.ts";
import { silentLogger } from "../../../src/process/log.ts";
import { inIndexOrder, isIndexablePath } from "../../../src/memory/search/index-files.ts";
import { openMemory } from "../../../src/memory/memory.ts";
import { SearchIndex } from "../../../src/memory/search/search-index.ts";
import { createMemoryTools, describeMediaText } from "../../../src/memory/tools.ts";
import { canSee, isMediaText, type MemoryScope } from "../../../src/memory/visibility.ts";
import { WorkspaceWatcher, type WorkspaceEvent } from "../../../src/memory/watcher.ts";

const GROUP = "group:telegram:-100";
const OWN = "memory/chats/telegram_-100";
const OTHER = "memory/chats/discord_9";
const main: MemoryScope = { kind: "main" };
const group: MemoryScope = { kind: "shared", chat: "telegram_-100" };
const other: MemoryScope = { kind: "shared", chat: "discord_9" };

/** What the media store writes (names from store.ts and media-intake.ts). */
const OWNER_VOICE = "media/2026-11/2026-11-20-0123456789ab.ogg.txt";
const OWNER_PDF = "media/2026-11/2026-11-21-abcdefabcdef.pdf.txt";
const OWNER_TEXT = "media/2026-10/2026-10-02-feedfeedfeed.txt";
const GROUP_VOICE = `${OWN}/media/2026-11-22-aaaaaaaaaaaa.oga.txt`;

let base: string;
let workspace: string;

beforeEach(async () => {
  base = await realpath(await mkdtemp(path.join(tmpdir(), "hearth-mediatext-")));
  workspace = path.join(base, "workspace");
  await mkdir(workspace);
});
afterEach(async () => {
  await rm(base, { recursive: true, force: true });
});

async function put(rel: string, text: string): Promise<void> {
  const abs = path.join(workspace, rel);
  await mkdir(path.dirname(abs), { recursive: true });
  await writeFile(abs, text);
}

describe("which media text is memory, and who sees it", () => {
  it("takes .txt files directly in a media folder, nothing else", () => {
    for (const p of [OWNER_VOICE, OWNER_PDF, OWNER_TEXT, GROUP_VOICE, "media/2026-11/2026-11-20-0123456789ab.md"]) expect([p, isMediaText(p), isIndexablePath(p)]).toEqual([p, true, true]);
    for (const p of ["notes.txt", "media/x.txt", "media/2026-11/sub/x.txt", "media/2026-11/x.jpg", "media/2026-11/x.csv", `${OWN}/x.txt`, `${OWN}/media/sub/x.txt`, "media/2026-11/.hidden.txt"]) {
      expect([p, isIndexablePath(p)]).toEqual([p, false]);
    }
  });

  it("the owner's media text only for main; a chat's for that chat and main", () => {
    const seen = (p: string) => [canSee(main, p), canSee(group, p), canSee(other, p)];
    expect(seen(OWNER_VOICE)).toEqual([true, false, false]);
    expect(seen(GROUP_VOICE)).toEqual([true, true, false]);
    expect(seen(`${OWN}/../../../media/2026-11/2026-11-20-0123456789ab.ogg.txt`)).toEqual([true, false, false]);
    expect(seen(`${OWN}/media/2026-11-22-aaaaaaaaaaaa.oga`)).toEqual([false, false, false]);
  });

  it("says what a hit is and names the stored file", () => {
    expect(describeMediaText(OWNER_VOICE)).toBe("transcript of the voice note media/2026-11/2026-11-20-0123456789ab.ogg");
    expect(describeMediaText(OWNER_PDF)).toBe("text of the PDF media/2026-11/2026-11-21-abcdefabcdef.pdf");
    expect(describeMediaText(OWNER_TEXT)).toBe("a text file received in a chat");
    expect(describeMediaText(`${OWN}/media/2026-11-20-0123456789ab.md`)).toBe("a text file received in a chat");
  });

  it("a first scan takes media text by date among the daily logs, below the notes", () => {
    const files = ["MEMORY.md", "memory/2026-11-21.md", OWNER_VOICE, GROUP_VOICE, `${OWN}/2026-11-19.md`, OWNER_TEXT].map((rel) => ({ rel }));
    expect(inIndexOrder(files).map((f) => f.rel)).toEqual([
      OWNER_TEXT,
      `${OWN}/2026-11-19.md`,
      OWNER_VOICE,
      "memory/2026-11-21.md",
      GROUP_VOICE,
      "MEMORY.md",
    ]);
  });
});

describe("the index and memory_search over media text", () => {
  let index: SearchIndex;
  let tools: Record<string, Tool>;
  const dbPath = () => path.join(base, "index", "memory.db");

  beforeEach(async () => {
    await put(OWNER_VOICE, "My bank code is zebra forty two.\n");
    await put(OWNER_PDF, "Quarterly zebra report, page one.\n");
    await put(OWNER_TEXT, "zebra list\n");
    await put(GROUP_VOICE, "Picnic at the lake on Saturday, bring the zebra blanket.\n");
    await put("media/2026-11/2026-11-20-0123456789ab.ogg", "OggS");
    await put("media/2026-11/notes.csv", "zebra,1\n");
    await put(`${OTHER}/media/2026-11-22-bbbbbbbbbbbb.ogg.txt`, "other chat zebra\n");
    // A group cannot reach the owner's transcript through a link in its own folder.
    await symlink(path.join(workspace, OWNER_VOICE), path.join(workspace, OWN, "media", "leak.txt"));
    index = SearchIndex.open(dbPath(), silentLogger);
    tools = Object.fromEntries(
      createMemoryTools({ workspace, timezone: "UTC", index, clock: () => Date.UTC(2026, 10, 23), onOwnWrite: () => {} }).map((t) => [t.name, t]),
    );
  });
  afterEach(() => index.close());

  async function call(scope: Scope, name: string, input: unknown): Promise<ToolOutput> {
    const tool = tools[name]!;
    return tool.execute(tool.input.parse(input), { signal: new AbortController().signal, workspace, scope, sessionKey: scope === "main" ? "main" : GROUP, log: silentLogger });
  }

  it("indexes transcripts, PDF text and text files under media folders, never another file or a link", () => {
    expect(index.reconcile(workspace)).toEqual({ added: 5, updated: 0, removed: 0 });
    expect(index.search("zebra", main, 20).map((h) => h.path).sort()).toEqual([GROUP_VOICE, OWNER_TEXT, OWNER_PDF, OWNER_VOICE, `${OTHER}/media/2026-11-22-bbbbbbbbbbbb.ogg.txt`].sort());
    expect(index.search("zebra", group, 20).map((h) => h.path)).toEqual([GROUP_VOICE]);
    expect(index.search("zebra", other, 20).map((h) => h.path)).toEqual([`${OTHER}/media/2026-11-22-bbbbbbbbbbbb.ogg.txt`]);
  });

  it("media text gets file ids among the daily logs (dated), not among the notes", () => {
    index.reconcile(workspace);
    index.close();
    const db = new DatabaseSync(dbPath());
    const ids = db.prepare("SELECT path, id FROM files ORDER BY id").all() as Array<{ path: string; id: number }>;
    db.close();
    index = SearchIndex.open(dbPath(), silentLogger);
    expect(ids.map((r) => r.path)).toEqual([OWNER_TEXT, OWNER_VOICE, OWNER_PDF, GROUP_VOICE, `${OTHER}/media/2026-11-22-bbbbbbbbbbbb.ogg.txt`]);
    expect(ids.every((r) => r.id < 2 ** 31)).toBe(true);
  });

  it("memory_search labels a hit as a voice note's transcript or a PDF's text and names the stored file", async () => {
    index.reconcile(workspace);
    expect((await call("main", "memory_search", { query: "bank code" })).content).toBe(
      `${OWNER_VOICE}:1 (transcript of the voice note media/2026-11/2026-11-20-0123456789ab.ogg) My [bank] [code] is zebra forty two.`,
    );
    expect((await call("main", "memory_search", { query: "quarterly" })).content).toBe(
      `${OWNER_PDF}:1 (text of the PDF media/2026-11/2026-11-21-abcdefabcdef.pdf) [Quarterly] zebra report, page one.`,
    );
    expect((await call("main", "memory_search", { query: "picnic lake" })).content).toBe(
      `${GROUP_VOICE}:1 (transcript of the voice note ${OWN}/media/2026-11-22-aaaaaaaaaaaa.oga) [Picnic] at the [lake] on Saturday, bring the zebra blanket.`,
    );
  });

  it("a group finds its own transcript, never the owner's: not by search, not by memory_get, not through a link", async () => {
    index.reconcile(workspace);
    expect((await call("shared", "memory_search", { query: "bank code" })).content).toBe("No matches.");
    expect((await call("shared", "memory_search", { query: "quarterly report" })).content).toBe("No matches.");
    expect((await call("shared", "memory_search", { query: "picnic" })).content).toBe(
      `${GROUP_VOICE}:1 (transcript of the voice note ${OWN}/media/2026-11-22-aaaaaaaaaaaa.oga) [Picnic] at the lake on Saturday, bring the zebra blanket.`,
    );
    const refusal = `Not available in this conversation: memory_get can only read the shared files (SOUL.md, IDENTITY.md, AGENTS.md) and this chat's own notes in ${OWN}/.`;
    for (const p of [OWNER_VOICE, `${OWN}/../../../${OWNER_VOICE}`, path.join(workspace, OWNER_VOICE)]) {
      expect([p, (await call("shared", "memory_get", { path: p })).content]).toEqual([p, refusal]);
    }
    const viaLink = await call("shared", "memory_get", { path: `${OWN}/media/leak.txt` });
    expect([viaLink.content, viaLink.isError]).toEqual([refusal, true]);
    expect((await call("shared", "memory_get", { path: GROUP_VOICE })).content).toBe("     1\tPicnic at the lake on Saturday, bring the zebra blanket.");
  });
});

describe("new media text reaches the index without a restart", () => {
  it("the watcher reports a transcript in the owner's media folder, and no other new file there", async () => {
    mkdirSync(path.join(workspace, "media", "2026-11"), { recursive: true });
    const events: WorkspaceEvent[] = [];
    const watcher = await WorkspaceWatcher.start({ workspace, log: silentLogger, onEvent: (e) => events.push(e) });
    try {
      writeFileSync(path.join(workspace, "media/2026-11/2026-11-20-0123456789ab.ogg"), "OggS");
      writeFileSync(path.join(workspace, "media/2026-11/photo.jpg"), "jpg");
      writeFileSync(path.join(workspace, "notes.txt"), "x");
      writeFileSync(path.join(workspace, OWNER_VOICE), "hello\n");
      const until = Date.now() + 15_000;
      while (!events.some((e) => e.relPath === OWNER_VOICE) && Date.now() < until) await sleep(25);
      writeFileSync(path.join(workspace, "sentinel.md"), "s");
      while (!events.some((e) => e.relPath === "sentinel.md") && Date.now() < until) await sleep(25);
      expect(events).toEqual([
        { kind: "add", relPath: OWNER_VOICE, handEdit: true },
        { kind: "add", relPath: "sentinel.md", handEdit: true },
      ]);
    } finally {
      await watcher.close();
    }
  });

  it("indexOwnFile indexes a chat's transcript at once (chat folders are not watched)", async () => {
    const memory = await openMemory({ workspace, indexPath: path.join(base, "index", "memory.db"), timezone: "UTC", log: silentLogger, clock: () => Date.UTC(2026, 10, 23), restoreWorkspace: () => {} });
    try {
      await sleep(100); // the start-up scan of an empty workspace
      await put(GROUP_VOICE, "Meet at the okapi enclosure.\n");
      const search = memory.tools().find((t) => t.name === "memory_search")!;
      const run = async () => (await search.execute(search.input.parse({ query: "okapi" }), { signal: new AbortController().signal, workspace, scope: "shared", sessionKey: GROUP, log: silentLogger })).content;
      expect(await run()).toBe("No matches.");
      memory.indexOwnFile(GROUP_VOICE);
      expect(await run()).toBe(`${GROUP_VOICE}:1 (transcript of the voice note ${OWN}/media/2026-11-22-aaaaaaaaaaaa.oga) Meet at the [okapi] enclosure.`);
    } finally {
      await memory.close();
    }
  });
});
