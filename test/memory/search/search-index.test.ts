import { existsSync } from "node:fs";
import { link, mkdir, mkdtemp, readFile, realpath, rm, symlink, utimes, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { DatabaseSync } from "node:sqlite";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { createLogger, silentLogger, type Logger } from "../../../src/process/log.ts";
import { MAX_INDEXED_BYTES, SearchIndex } from "../../../src/memory/search/search-index.ts";
import { queryTerms } from "../../../src/memory/search/search-query.ts";
import type { MemoryScope } from "../../../src/memory/visibility.ts";

let base: string;
let workspace: string;
let dbPath: string;
let index: SearchIndex;

const main: MemoryScope = { kind: "main" };
const groupA: MemoryScope = { kind: "shared", chat: "telegram_-100" };
const stat = { mtimeMs: 1000, size: 10 };

beforeEach(async () => {
  base = await realpath(await mkdtemp(path.join(tmpdir(), "hearth-index-")));
  workspace = path.join(base, "workspace");
  await mkdir(workspace);
  dbPath = path.join(base, "home", "index", "memory.db");
  index = SearchIndex.open(dbPath, silentLogger);
});
afterEach(async () => {
  index.close();
  await rm(base, { recursive: true, force: true });
});

function recordingLogger(): { log: Logger; lines: Array<{ level: string; event: string }> } {
  const lines: Array<{ level: string; event: string }> = [];
  const log = createLogger({ level: "debug", sink: { write: (l) => lines.push(JSON.parse(l)) } });
  return { log, lines };
}

async function put(rel: string, text: string | Buffer): Promise<void> {
  const abs = path.join(workspace, rel);
  await mkdir(path.dirname(abs), { recursive: true });
  await writeFile(abs, text);
}

const paths = (hits: Array<{ path: string }>) => hits.map((h) => h.path);

describe("SearchIndex: sync and search", () => {
  it("creates the database folder and finds words by their stem", () => {
    expect(existsSync(dbPath)).toBe(true);
    index.syncFile("MEMORY.md", "# Memory\n\n## Habits\n- I run every morning\n", stat);
    const [hit] = index.search("running", main);
    expect(hit).toMatchObject({ path: "MEMORY.md", line: 4, heading: "## Habits" });
    expect(hit!.snippet).toContain("[run]");
    expect(hit!.score).toBeGreaterThan(0);
  });

  it("points a hit at the line of the match inside a multi-line chunk", () => {
    index.syncFile("MEMORY.md", "## Pets\n- a dog named Rex\n- a cat named Whiskers\n- fish\n", stat);
    expect(index.search("whiskers", main)[0]).toMatchObject({ line: 3, heading: "## Pets" });
  });

  it("does not mistake a task-list box for a highlighted match", () => {
    index.syncFile("MEMORY.md", "## Todo\n- [x] buy milk\n- [ ] call the plumber\n", stat);
    const [hit] = index.search("plumber", main);
    expect(hit).toMatchObject({ line: 3 });
    expect(hit!.snippet).toContain("[plumber]");
  });

  it("ranks chunks with all words first, then chunks with some of them", () => {
    index.syncFile("a.md", "the red bicycle is in the garage\n", stat);
    index.syncFile("b.md", "a red apple\n", stat);
    index.syncFile("c.md", "nothing relevant\n", stat);
    expect(paths(index.search("red bicycle", main))).toEqual(["a.md", "b.md"]);
  });

  it("re-syncing a file replaces its old text", () => {
    index.syncFile("MEMORY.md", "- favourite colour: turquoise\n", stat);
    expect(index.search("turquoise", main)).toHaveLength(1);
    expect(index.syncFile("MEMORY.md", "- favourite colour: magenta\n", { mtimeMs: 2000, size: 28 })).toBe("updated");
    expect(index.search("turquoise", main)).toEqual([]);
    expect(paths(index.search("magenta", main))).toEqual(["MEMORY.md"]);
  });

  it("re-syncing one file leaves the other files' chunks alone", () => {
    index.syncFile("a.md", "alpha words\n\n## two\nmore alpha\n", stat);
    index.syncFile("b.md", "alpha in b\n", stat);
    index.syncFile("a.md", "beta now\n", { mtimeMs: 2, size: 9 });
    expect(paths(index.search("alpha", main))).toEqual(["b.md"]);
  });

  it("leaves an unchanged file alone instead of rewriting it", () => {
    expect(index.syncFile("MEMORY.md", "- likes tea\n", stat)).toBe("added");
    // Tamper with the stored chunk behind the index's back: a rewrite would undo this.
    const db = new DatabaseSync(dbPath);
    db.exec("UPDATE chunks SET text = 'tampered marker' WHERE path = 'MEMORY.md'");
    db.close();
    expect(index.syncFile("MEMORY.md", "- likes tea\n", stat)).toBe("unchanged");
    expect(index.syncFile("MEMORY.md", "- likes tea\n", { mtimeMs: 5000, size: 12 })).toBe("unchanged");
    expect(paths(index.search("tampered", main))).toEqual(["MEMORY.md"]);
  });

  it("removeFile drops every chunk of the file", () => {
    index.syncFile("notes.md", "## one\nkiwi\n\n## two\nkiwi again\n", stat);
    index.syncFile("other.md", "mango\n", stat);
    expect(index.search("kiwi", main)).toHaveLength(2);
    index.removeFile("notes.md");
    index.removeFile("never-indexed.md");
    expect(index.search("kiwi", main)).toEqual([]);
    expect(index.search("mango", main)).toHaveLength(1);
  });

  it("survives a restart: the database keeps the index", () => {
    index.syncFile("MEMORY.md", "- passport renewal in March\n", stat);
    index.close();
    index = SearchIndex.open(dbPath, silentLogger);
    expect(paths(index.search("passport", main))).toEqual(["MEMORY.md"]);
  });
});

describe("SearchIndex: hostile and empty queries", () => {
  beforeEach(() => {
    index.syncFile("MEMORY.md", "## Pets\nmy cat is called Whiskers; what's up\n", stat);
  });

  it.each([
    `what's "my" cat?`,
    'AND(',
    "cat AND",
    "NEAR(cat whiskers, 2)",
    "cat*",
    "-cat",
    "cat -dog",
    '"',
    '""cat""',
    "cat OR",
    "NOT cat",
    "{heading}: cat",
    "heading:cat",
    "^cat",
    "cat + whiskers",
    "'); DROP TABLE files; --",
    "😺 cat",
  ])("does not throw for %j and still finds the words it contains", (q) => {
    const hits = index.search(q, main);
    if (/cat/i.test(q)) expect(paths(hits)).toEqual(["MEMORY.md"]);
  });

  it.each(["", "   ", "?!*()", '"""', "-", "*"])("finds nothing for %j", (q) => {
    expect(index.search(q, main)).toEqual([]);
  });

  it("treats FTS5 keywords as plain words", () => {
    index.syncFile("near.md", "we live near the lake\n", stat);
    expect(paths(index.search("NEAR lake", main))).toEqual(["near.md"]);
  });

  it("drops stop words unless the query has nothing else", () => {
    expect(queryTerms("What is my cat's name?")).toEqual(["cat", "name"]);
    expect(queryTerms("what is it")).toEqual(["what", "is", "it"]);
  });
});

describe("SearchIndex: scope", () => {
  const secretFiles = ["USER.md", "MEMORY.md", "HEARTBEAT.md", "memory/2026-01-01.md", "memory/chats/discord_9/2026-01-01.md", "notes/x.md"];

  it("never gives a shared scope a hit from a file it may not see, even the only match", () => {
    for (const f of secretFiles) index.syncFile(f, `## Secret\nthe codeword is xylophonic\n`, stat);
    expect(index.search("xylophonic", groupA)).toEqual([]);
    expect(index.search("codeword xylophonic secret", groupA, 50)).toEqual([]);
    expect(paths(index.search("xylophonic", main, 50)).sort()).toEqual([...secretFiles].sort());
  });

  it("gives a shared scope the identity files and its own chat folder only", () => {
    for (const f of ["SOUL.md", "IDENTITY.md", "AGENTS.md", "memory/chats/telegram_-100/2026-01-01.md", "memory/chats/telegram_-1000/2026-01-01.md"]) {
      index.syncFile(f, "the quokka\n", stat);
    }
    index.syncFile("USER.md", "the quokka\n", stat);
    expect(paths(index.search("quokka", groupA)).sort()).toEqual(
      ["AGENTS.md", "IDENTITY.md", "SOUL.md", "memory/chats/telegram_-100/2026-01-01.md"].sort(),
    );
  });

  it("counts only visible hits against the limit", () => {
    // 40 private chunks that outrank every visible one, then 3 visible ones.
    for (let i = 0; i < 40; i++) index.syncFile(`memory/2025-01-${String(i).padStart(2, "0")}.md`, "lemur lemur lemur\n", stat);
    for (let i = 0; i < 3; i++) index.syncFile(`memory/chats/telegram_-100/2025-02-0${i}.md`, `a lemur among many other words here ${i}\n`, stat);
    const hits = index.search("lemur", groupA, 3);
    expect(hits).toHaveLength(3);
    expect(hits.every((h) => h.path.startsWith("memory/chats/telegram_-100/"))).toBe(true);
    expect(index.search("lemur", main, 5)).toHaveLength(5);
  });
});

describe("SearchIndex: large result sets", () => {
  /** `files` daily logs after `firstDate`, 100 chunks each, every chunk containing `text`. */
  function syncLogs(folder: string, files: number, text: string): void {
    for (let f = 0; f < files; f++) {
      const body = Array.from({ length: 100 }, (_, i) => `## Entry ${i}\n${text} number ${f}-${i}\n`).join("\n");
      index.syncFile(`${folder}/2026-02-${String(f + 1).padStart(2, "0")}.md`, body, stat);
    }
  }

  it("finds an old chunk by its rare word when a common word of the query matches thousands", () => {
    index.syncFile("memory/2020-01-01.md", "## Travel\nclimbed Kilimanjaro with Bob\n", stat);
    syncLogs("memory", 25, "planned a trip with friends");
    const hits = index.search("trip Kilimanjaro", main, 3);
    expect(hits[0]).toMatchObject({ path: "memory/2020-01-01.md", line: 2 });
    expect(hits).toHaveLength(3);
  });

  it("gives a group its own old note even when thousands of newer private chunks match", () => {
    index.syncFile("memory/chats/telegram_-100/2020-01-01.md", "the lemur escaped\n", stat);
    syncLogs("memory", 25, "a lemur in the private log");
    expect(paths(index.search("lemur", groupA))).toEqual(["memory/chats/telegram_-100/2020-01-01.md"]);
  });

  it("ranks notes like MEMORY.md even when thousands of newer log chunks match", () => {
    syncLogs("memory", 25, "a gecko in the log");
    index.syncFile("MEMORY.md", "## Gecko\n- the gecko is called Gustav\n", stat);
    syncLogs("memory/chats/discord_9", 25, "a gecko in a chat");
    expect(paths(index.search("gecko", main, 1))).toEqual(["MEMORY.md"]);
  });
});

describe("SearchIndex.reconcile", () => {
  it("adds new files, updates changed ones and removes vanished ones", async () => {
    await put("MEMORY.md", "- owns a canoe\n");
    await put("memory/2026-01-01.md", "# 2026-01-01\n\n### 10:00 · cli · Owner\n> hi\n\nbought a kayak\n");
    await put("memory/chats/telegram_-100/2026-01-02.md", "- group talked about rafting\n");
    expect(index.reconcile(workspace)).toEqual({ added: 3, updated: 0, removed: 0 });
    expect(paths(index.search("kayak", main))).toEqual(["memory/2026-01-01.md"]);

    expect(index.reconcile(workspace)).toEqual({ added: 0, updated: 0, removed: 0 });

    await put("MEMORY.md", "- owns a sailboat now\n");
    await utimes(path.join(workspace, "MEMORY.md"), new Date(), new Date(Date.now() + 5000));
    await rm(path.join(workspace, "memory/2026-01-01.md"));
    expect(index.reconcile(workspace)).toEqual({ added: 0, updated: 1, removed: 1 });
    expect(index.search("canoe", main)).toEqual([]);
    expect(index.search("kayak", main)).toEqual([]);
    expect(paths(index.search("sailboat", main))).toEqual(["MEMORY.md"]);
  });

  it("counts a touched file with the same content as unchanged", async () => {
    await put("MEMORY.md", "- owns a canoe\n");
    index.reconcile(workspace);
    await utimes(path.join(workspace, "MEMORY.md"), new Date(), new Date(Date.now() + 5000));
    expect(index.reconcile(workspace)).toEqual({ added: 0, updated: 0, removed: 0 });
  });

  it("skips dot-folders, node_modules, non-markdown files and symlinks", async () => {
    await put(".git/notes.md", "okapi\n");
    await put("node_modules/pkg/README.md", "okapi\n");
    await put("notes.txt", "okapi\n");
    await put("MEMORY.md", "the real okapi\n");
    await mkdir(path.join(workspace, "memory/chats/telegram_-100"), { recursive: true });
    await symlink(path.join(workspace, "MEMORY.md"), path.join(workspace, "memory/chats/telegram_-100/leak.md"));
    await symlink(path.join(workspace, "memory"), path.join(workspace, "memory/chats/telegram_-100/dir"));
    await mkdir(path.join(base, "outside"));
    await writeFile(path.join(base, "outside", "o.md"), "okapi outside\n");
    await symlink(path.join(base, "outside"), path.join(workspace, "linked"));
    expect(index.reconcile(workspace)).toEqual({ added: 1, updated: 0, removed: 0 });
    expect(paths(index.search("okapi", main))).toEqual(["MEMORY.md"]);
    expect(index.search("okapi", groupA)).toEqual([]);
  });

  it("does not index a hard link to a private file inside a chat folder", async () => {
    await put("MEMORY.md", "the hidden narwhal\n");
    await mkdir(path.join(workspace, "memory/chats/telegram_-100"), { recursive: true });
    await link(path.join(workspace, "MEMORY.md"), path.join(workspace, "memory/chats/telegram_-100/hard.md"));
    index.reconcile(workspace);
    expect(index.search("narwhal", groupA)).toEqual([]);
    expect(index.refreshFile(workspace, "memory/chats/telegram_-100/hard.md")).toBe("skipped");
    expect(index.search("narwhal", groupA)).toEqual([]);
    // The owner still finds it, under its own name only.
    expect(paths(index.search("narwhal", main))).toEqual(["MEMORY.md"]);
  });

  it("drops a chat's note once it gains a second name, although its mtime and size stay the same", async () => {
    await put("memory/chats/telegram_-100/note.md", "the plain pangolin\n");
    index.reconcile(workspace);
    expect(paths(index.search("pangolin", groupA))).toEqual(["memory/chats/telegram_-100/note.md"]);
    await link(path.join(workspace, "memory/chats/telegram_-100/note.md"), path.join(workspace, "USER.md"));
    expect(index.reconcile(workspace)).toMatchObject({ removed: 1 });
    expect(index.search("pangolin", groupA)).toEqual([]);
  });

  it("indexes an owner's symlink to another note only under the note's own name", async () => {
    await put("notes/me.md", "the quiet quokka\n");
    await symlink("notes/me.md", path.join(workspace, "USER.md"));
    index.reconcile(workspace);
    expect(index.refreshFile(workspace, "USER.md")).toBe("skipped");
    expect(paths(index.search("quokka", main))).toEqual(["notes/me.md"]);
  });

  it("reads a non-UTF-8 file with replacement characters and goes on with the rest", async () => {
    await put("latin1.md", Buffer.from([0x63, 0x61, 0x66, 0xe9, 0x20, 0x62, 0x69, 0x73, 0x6f, 0x6e, 0x0a, 0x00, 0x0a]));
    await put("MEMORY.md", "bison too\n");
    expect(index.reconcile(workspace)).toEqual({ added: 2, updated: 0, removed: 0 });
    expect(paths(index.search("bison", main)).sort()).toEqual(["MEMORY.md", "latin1.md"]);
    expect(index.search("bison", main).find((h) => h.path === "latin1.md")!.snippet).toContain("\uFFFD");
  });

  it("indexes only the first 2 MB of a huge file, with a warning", async () => {
    const { log, lines } = recordingLogger();
    index.close();
    index = SearchIndex.open(dbPath, log);
    const filler = "filler line of words\n".repeat(Math.ceil(MAX_INDEXED_BYTES / 21) + 1000);
    await put("dump.md", `gazelle at the start\n${filler}antelope at the end\n`);
    expect(index.reconcile(workspace).added).toBe(1);
    expect(paths(index.search("gazelle", main))).toEqual(["dump.md"]);
    expect(index.search("antelope", main)).toEqual([]);
    expect(lines.some((l) => l.event === "memory_index_file_truncated")).toBe(true);
  });

  it("returns zeros and logs when the workspace is missing", () => {
    expect(index.reconcile(path.join(base, "nope"))).toEqual({ added: 0, updated: 0, removed: 0 });
  });
});

describe("SearchIndex.refreshFile", () => {
  it("syncs a changed file, removes a deleted one and refuses paths outside the workspace", async () => {
    await put("MEMORY.md", "- a wombat\n");
    expect(index.refreshFile(workspace, "MEMORY.md")).toBe("added");
    expect(index.refreshFile(workspace, "MEMORY.md")).toBe("unchanged");
    await rm(path.join(workspace, "MEMORY.md"));
    expect(index.refreshFile(workspace, "MEMORY.md")).toBe("removed");
    expect(index.search("wombat", main)).toEqual([]);

    await writeFile(path.join(base, "escape.md"), "outside wombat\n");
    expect(index.refreshFile(workspace, "../../escape.md")).toBe("skipped");
    expect(index.refreshFile(workspace, ".git/x.md")).toBe("skipped");
    expect(index.search("wombat", main)).toEqual([]);
  });

  it("will not index a symlink, nor a file reached through a symlinked folder", async () => {
    await put("MEMORY.md", "the secret ocelot\n");
    await mkdir(path.join(workspace, "memory/chats"), { recursive: true });
    await symlink(path.join(workspace, "MEMORY.md"), path.join(workspace, "memory/chats/leak.md"));
    await symlink(workspace, path.join(workspace, "memory/chats/telegram_-100"));
    expect(index.refreshFile(workspace, "memory/chats/leak.md")).toBe("skipped");
    expect(index.refreshFile(workspace, "memory/chats/telegram_-100/MEMORY.md")).toBe("skipped");
    expect(index.search("ocelot", main)).toEqual([]);
  });
});

describe("SearchIndex.open", () => {
  it("replaces a file that is not a database with a fresh index, logging one warning", async () => {
    index.close();
    await writeFile(dbPath, Buffer.from("this is definitely not an SQLite database ".repeat(200)));
    await writeFile(`${dbPath}-wal`, Buffer.from("junk"));
    const { log, lines } = recordingLogger();
    index = SearchIndex.open(dbPath, log);
    expect(lines.filter((l) => l.level === "warn")).toEqual([expect.objectContaining({ event: "memory_index_rebuilt" })]);
    index.syncFile("MEMORY.md", "- likes jazz\n", stat);
    expect(paths(index.search("jazz", main))).toEqual(["MEMORY.md"]);
    expect((await readFile(dbPath)).subarray(0, 15).toString()).toBe("SQLite format 3");
  });

  it("rebuilds a database of another schema version", async () => {
    index.close();
    await rm(dbPath);
    const old = new DatabaseSync(dbPath);
    old.exec("CREATE TABLE files (path TEXT PRIMARY KEY); PRAGMA user_version = 999;");
    old.close();
    index = SearchIndex.open(dbPath, silentLogger);
    index.syncFile("MEMORY.md", "- likes blues\n", stat);
    expect(paths(index.search("blues", main))).toEqual(["MEMORY.md"]);
  });

  it("falls back to an in-memory index when the folder cannot hold a database", async () => {
    index.close();
    const blocked = path.join(base, "blocked");
    await writeFile(blocked, "a file where a folder should be");
    const { log, lines } = recordingLogger();
    index = SearchIndex.open(path.join(blocked, "memory.db"), log);
    index.syncFile("MEMORY.md", "- likes folk\n", stat);
    expect(paths(index.search("folk", main))).toEqual(["MEMORY.md"]);
    expect(lines.some((l) => l.event === "memory_index_in_memory")).toBe(true);
  });
});
