// The memory history on real files and a real git repository: who made each change, batches,
// changes nobody announced, and /undo's exact bytes.
import { execFileSync } from "node:child_process";
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { deflateSync } from "node:zlib";
import { join } from "node:path";
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it, vi } from "vitest";
import { silentLogger } from "../../src/process/log.ts";
import { DEFLATES_AT_ONCE, GitStore } from "../../src/memory/history/git-store.ts";
import { MemoryHistory } from "../../src/memory/history/history.ts";
import { unifiedDiff } from "../../src/memory/history/line-diff.ts";
import { TrackedFiles } from "../../src/memory/history/tracked.ts";
import { waitFor } from "../support/daemon.ts";

let root: string;
let ws: string;
let gitdir: string;
let history: MemoryHistory;
let now = Date.UTC(2026, 10, 25, 9, 0);

beforeEach(() => {
  root = mkdtempSync(join(tmpdir(), "hearth-hist-"));
  ws = join(root, "workspace");
  gitdir = join(root, "history.git");
  mkdirSync(join(ws, "memory", "chats", "telegram_-100"), { recursive: true });
  writeFileSync(join(ws, "MEMORY.md"), "# Memory\n- likes tea\n");
  writeFileSync(join(ws, "USER.md"), "# User\n");
  history = new MemoryHistory({ gitdir, workspace: ws, log: silentLogger, clock: () => (now += 1000), batchMs: 3_600_000 });
});
afterEach(async () => {
  await history.close();
  rmSync(root, { recursive: true, force: true });
});

async function commits(): Promise<Array<{ author: string; message: string; files: Map<string, string> }>> {
  const store = (await GitStore.open(gitdir, { create: false }))!;
  const out = [];
  for (let oid = store.head(); oid; ) {
    const c = await store.readCommit(oid);
    out.push({ author: c.author, message: c.message.trimEnd(), files: await store.files(oid) });
    oid = c.parent;
  }
  return out.reverse();
}

const write = (rel: string, text: string) => writeFileSync(join(ws, rel), text);
const read = (rel: string) => readFileSync(join(ws, rel), "utf8");

describe("memory history", () => {
  it("records a hand edit and Hearth's write as two commits in order, with their authors", async () => {
    await history.flush();
    write("USER.md", "# User\nName: Ada\n");
    history.note("USER.md", "owner");
    write("MEMORY.md", "# Memory\n- likes tea\n- allergic to cats\n");
    history.note("MEMORY.md", "hearth");
    await history.flush();
    const all = await commits();
    expect(all.map((c) => [c.author, c.message])).toEqual([
      ["hearth", "Hearth: the memory history starts (2 files)"],
      ["owner", "owner: USER.md"],
      ["hearth", "Hearth: MEMORY.md"],
    ]);
  });

  it.skipIf(!hasGit())("writes a repository that git itself reads and finds sound", async () => {
    mkdirSync(join(ws, "memory", "chats", "telegram_-100", "sub"), { recursive: true });
    write("memory/chats/telegram_-100/sub/x.md", "x\n");
    write("memory/chats/telegram_-100.md", "sorted before the folder of that name\n");
    await history.flush();
    write("MEMORY.md", "# Memory\n- changed\n");
    history.note("MEMORY.md", "hearth");
    await history.flush();
    const git = (...args: string[]) => execFileSync("git", [`--git-dir=${gitdir}`, ...args], { encoding: "utf8", stdio: ["ignore", "pipe", "pipe"] });
    git("fsck", "--strict", "--no-dangling");
    expect(git("log", "--format=%an <%ae>|%s").trimEnd().split("\n")).toEqual(["Hearth <hearth@localhost>|Hearth: MEMORY.md", "Hearth <hearth@localhost>|Hearth: the memory history starts (4 files)"]);
    expect(git("show", "main:MEMORY.md")).toBe("# Memory\n- changed\n");
  });

  it("keeps the owner's edit apart from Hearth's append to the same file in one batch", async () => {
    await history.flush();
    write("MEMORY.md", "# Memory\n- likes green tea\n");
    history.note("MEMORY.md", "owner");
    write("MEMORY.md", "# Memory\n- likes green tea\n- has a cat\n");
    history.note("MEMORY.md", "hearth");
    await history.flush();
    const [, owner, hearth] = await commits();
    const store = (await GitStore.open(gitdir, { create: false }))!;
    expect((await store.readBlob(owner!.files.get("MEMORY.md")!)).toString()).toBe("# Memory\n- likes green tea\n");
    expect((await store.readBlob(hearth!.files.get("MEMORY.md")!)).toString()).toBe("# Memory\n- likes green tea\n- has a cat\n");
  });

  it("Hearth's appends to the day's log are read when the batch is recorded, not per append: 1,000 appends, no read until the batch, one commit of the bytes then", async () => {
    await history.flush();
    const reads: string[] = [];
    const read = TrackedFiles.prototype.read;
    const spy = vi.spyOn(TrackedFiles.prototype, "read").mockImplementation(function (this: TrackedFiles, rel: string) {
      reads.push(rel);
      return read.call(this, rel);
    });
    try {
      let log = "# 2026-11-25\n\n";
      for (let n = 0; n < 1000; n++) {
        log += `### 09:${String(n % 60).padStart(2, "0")} · cli · Owner\n> message ${n}\n\nanswer ${n}\n\n`;
        write("memory/2026-11-25.md", log);
        history.note("memory/2026-11-25.md", "hearth");
        expect(reads).toEqual([]);
      }
      await history.flush();
      expect(reads.filter((r) => r === "memory/2026-11-25.md").length).toBeLessThanOrEqual(2);
      const all = await commits();
      expect(all.map((c) => [c.author, c.message]).slice(1)).toEqual([["hearth", "Hearth: memory/2026-11-25.md"]]);
      const store = (await GitStore.open(gitdir, { create: false }))!;
      expect((await store.readBlob(all[1]!.files.get("memory/2026-11-25.md")!)).toString()).toBe(log);
    } finally {
      spy.mockRestore();
    }
  });

  it("finds unannounced edits (a chat folder, links ignored) and gives them to the owner", async () => {
    await history.flush();
    write("memory/chats/telegram_-100/notes.md", "group notes\n");
    symlinkSync(join(ws, "USER.md"), join(ws, "memory", "chats", "telegram_-100", "link.md"));
    await history.flush();
    const last = (await commits()).at(-1)!;
    expect(last.message).toBe("owner: memory/chats/telegram_-100/notes.md");
    expect([...last.files.keys()].sort()).toEqual(["MEMORY.md", "USER.md", "memory/chats/telegram_-100/notes.md"]);
  });

  it("/undo puts back the exact bytes before Hearth's last change, keeps the daily log, and only once", async () => {
    const before = "# Memory\r\n- likes tea  \n\u00e9\n";
    write("MEMORY.md", before);
    await history.flush();
    write("MEMORY.md", before + "- wrong fact\n");
    history.note("MEMORY.md", "hearth");
    write("memory/2026-11-25.md", "# 2026-11-25\n\nexchange\n");
    history.note("memory/2026-11-25.md", "hearth");
    const undone = await history.undoLast();
    expect(undone).toMatchObject({ type: "undone", files: ["MEMORY.md"] });
    expect(readFileSync(join(ws, "MEMORY.md")).equals(Buffer.from(before))).toBe(true);
    expect(read("memory/2026-11-25.md")).toBe("# 2026-11-25\n\nexchange\n");
    expect((await commits()).at(-1)!.message).toMatch(/^owner: \/undo of [0-9a-f]{7} \(MEMORY\.md\)\n\nUndoes: [0-9a-f]{40}$/u);
    expect(await history.undoLast()).toEqual({ type: "nothing" });
  });

  it("a second /undo takes back the change before", async () => {
    await history.flush();
    const original = read("MEMORY.md");
    write("MEMORY.md", original + "- one\n");
    history.note("MEMORY.md", "hearth");
    await history.flush();
    write("USER.md", "# User\n- two\n");
    history.note("USER.md", "hearth");
    expect(await history.undoLast()).toMatchObject({ type: "undone", files: ["USER.md"] });
    expect(await history.undoLast()).toMatchObject({ type: "undone", files: ["MEMORY.md"] });
    expect([read("MEMORY.md"), read("USER.md")]).toEqual([original, "# User\n"]);
    expect(await history.undoLast()).toEqual({ type: "nothing" });
  });

  it("/undo leaves a file alone that changed after Hearth's change", async () => {
    await history.flush();
    write("MEMORY.md", "# Memory\n- hearth wrote this\n");
    history.note("MEMORY.md", "hearth");
    await history.flush();
    write("MEMORY.md", "# Memory\n- the owner rewrote it\n");
    const result = await history.undoLast();
    expect(result).toMatchObject({ type: "changed-since", files: ["MEMORY.md"] });
    expect(read("MEMORY.md")).toBe("# Memory\n- the owner rewrote it\n");
  });
});

describe("memory history against links", () => {
  it("/undo never writes through a folder that became a link: the file counts as changed, nothing is written", async () => {
    await history.flush();
    write("memory/chats/telegram_-100/notes.md", "before\n");
    await history.flush();
    write("memory/chats/telegram_-100/notes.md", "before\nhearth's line\n");
    history.note("memory/chats/telegram_-100/notes.md", "hearth");
    await history.flush();
    const elsewhere = join(root, "elsewhere");
    mkdirSync(elsewhere);
    writeFileSync(join(elsewhere, "notes.md"), "before\nhearth's line\n");
    rmSync(join(ws, "memory", "chats", "telegram_-100"), { recursive: true });
    symlinkSync(elsewhere, join(ws, "memory", "chats", "telegram_-100"));
    const result = await history.undoLast();
    expect(result.type).toBe("changed-since");
    expect(readFileSync(join(elsewhere, "notes.md"), "utf8")).toBe("before\nhearth's line\n");
  });
});

describe("memory history of a 5,000-file workspace", () => {
  let big: string;
  beforeAll(() => {
    big = mkdtempSync(join(tmpdir(), "hearth-hist-big-"));
    for (let d = 0; d < 50; d++) {
      const dir = join(big, "workspace", `notes-${d}`);
      mkdirSync(dir, { recursive: true });
      for (let i = 0; i < 100; i++) writeFileSync(join(dir, `note-${i}.md`), `# Note ${d}.${i}\n\nAbout topic ${i} of shelf ${d}.\n`);
    }
  });
  afterAll(() => rmSync(big, { recursive: true, force: true }));

  /** The longest a 10 ms timer waited past its time while `work` ran. */
  async function longestTimerDelay(work: Promise<unknown>): Promise<number> {
    let longest = 0;
    let last = performance.now();
    const timer = setInterval(() => {
      const now = performance.now();
      longest = Math.max(longest, now - last - 10);
      last = now;
    }, 10);
    await work;
    // The timer's turn after the work: a blocked event loop shows here.
    await new Promise((resolve) => setTimeout(resolve, 20));
    clearInterval(timer);
    return longest;
  }

  it("a stop during the first commit ends at once (the history takes at most a second), moves no head, and the next start records the whole workspace", async () => {
    const gitdir = join(big, "stopped.git");
    const first = new MemoryHistory({ gitdir, workspace: join(big, "workspace"), log: silentLogger, clock: Date.now, batchMs: 3_600_000 });
    first.start();
    // Objects are being written and no commit names them yet: the first commit is under way.
    await waitFor("the first commit to be under way", () => existsSync(join(gitdir, "objects")) && readdirSync(join(gitdir, "objects")).length > 1);
    const store = (await GitStore.open(gitdir, { create: false }))!;
    expect(store.head()).toBeNull();
    const askedAt = performance.now();
    await first.close();
    const stopMs = performance.now() - askedAt;
    console.log(`stopped ${Math.round(stopMs)} ms after the request, ${store.head() === null ? "no head yet" : "the first commit complete"}`);
    // The promise is a clean stop within 5 s of the signal; the history takes at most its second
    // of it (HISTORY_STOP_MS). Before, the stop waited for the whole first commit (14-16 s here).
    expect(stopMs).toBeLessThan(5_000);
    // Either nothing (the next start records it all) or the complete first commit, never part of one.
    if (store.head() !== null) expect((await store.files(store.head())).size).toBe(5_000);

    const next = new MemoryHistory({ gitdir, workspace: join(big, "workspace"), log: silentLogger, clock: Date.now, batchMs: 3_600_000 });
    await next.flush();
    await next.close();
    const log: string[] = [];
    for (let oid = store.head(); oid; ) {
      const c = await store.readCommit(oid);
      log.push(c.message.trimEnd());
      oid = c.parent;
    }
    expect(log).toEqual(["Hearth: the memory history starts (5000 files)"]);
    const files = await store.files(store.head());
    expect(files.size).toBe(5_000);
    expect((await store.readBlob(files.get("notes-49/note-99.md")!)).toString()).toBe("# Note 49.99\n\nAbout topic 99 of shelf 49.\n");
    if (hasGit()) execFileSync("git", [`--git-dir=${gitdir}`, "fsck", "--strict", "--no-dangling"], { stdio: ["ignore", "pipe", "pipe"] });
  }, 120_000);

  it("the first commit and the next start's scan leave the event loop free (no timer waits seconds)", async () => {
    const gitdir = join(big, "free.git");
    const first = new MemoryHistory({ gitdir, workspace: join(big, "workspace"), log: silentLogger, clock: Date.now, batchMs: 3_600_000 });
    const firstDelay = await longestTimerDelay(first.flush());
    await first.close();
    // A new process: no stat cache, every file read and hashed again.
    const next = new MemoryHistory({ gitdir, workspace: join(big, "workspace"), log: silentLogger, clock: Date.now, batchMs: 3_600_000 });
    const nextDelay = await longestTimerDelay(next.flush());
    await next.close();
    console.log(`longest timer delay: ${Math.round(firstDelay)} ms during the first commit, ${Math.round(nextDelay)} ms during the next start's scan`);
    // Work in slices leaves gaps of tens of milliseconds on an idle machine; one blocking stretch
    // (as before) held timers for the whole commit, many seconds. The bound holds under load.
    expect(firstDelay).toBeLessThan(5_000);
    expect(nextDelay).toBeLessThan(5_000);
  }, 120_000);
});

describe("the history's object writer", () => {
  it("deflates at most DEFLATES_AT_ONCE objects at once however many are written together, and every one reads back", async () => {
    // Each zlib stream holds ~270 KB of native memory while it runs: a commit of a hundred
    // changed files deflated all at once raised the allocator's high-water mark for good.
    let running = 0;
    let most = 0;
    const store = (await GitStore.open(join(root, "count.git"), {
      create: true,
      deflate: async (raw) => {
        most = Math.max(most, ++running);
        await new Promise((r) => setImmediate(r));
        running--;
        return deflateSync(raw);
      },
    }))!;
    const bodies = Array.from({ length: 100 }, (_, i) => Buffer.from(`# chat ${i}\n${"note\n".repeat(i)}`));
    const oids = await Promise.all(bodies.map((b) => store.writeBlob(b)));
    expect(most).toBe(DEFLATES_AT_ONCE);
    expect(DEFLATES_AT_ONCE).toBeLessThanOrEqual(2);
    for (const [i, oid] of oids.entries()) expect((await store.readBlob(oid)).equals(bodies[i]!)).toBe(true);
  });
});

describe("unifiedDiff", () => {
  it("shows changed lines with context and hunk headers", () => {
    expect(unifiedDiff("MEMORY.md", "a\nb\nc\n", "a\nB\nc\nd\n")).toBe("--- a/MEMORY.md\n+++ b/MEMORY.md\n@@ -1,3 +1,4 @@\n a\n-b\n+B\n c\n+d\n");
    expect(unifiedDiff("new.md", null, "x\n")).toBe("--- /dev/null\n+++ b/new.md\n@@ -0,0 +1,1 @@\n+x\n");
    expect(unifiedDiff("same.md", "x\n", "x\n")).toBe("");
  });
});

function hasGit(): boolean {
  try {
    execFileSync("git", ["--version"], { stdio: "ignore" });
    return true;
  } catch {
    return false;
  }
}
