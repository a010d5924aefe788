// The memory service indexes the daemon's own daily-log appends once, when it writes them: the
// watcher's later event for that write reads nothing again. A hand edit re-reads only its file.
import { appendFileSync, mkdirSync, writeFileSync } from "node:fs";
import { mkdtemp, realpath, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { setTimeout as sleep } from "node:timers/promises";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { silentLogger } from "../../src/process/log.ts";
import { openMemory, type MemoryService } from "../../src/memory/memory.ts";

let base: string;
let workspace: string;
let memory: MemoryService;
const NOW = Date.UTC(2026, 10, 23, 12);

beforeEach(async () => {
  base = await realpath(await mkdtemp(path.join(tmpdir(), "hearth-memsvc-")));
  workspace = path.join(base, "workspace");
  mkdirSync(path.join(workspace, "memory"), { recursive: true });
  writeFileSync(path.join(workspace, "MEMORY.md"), "# Memory\n\n- likes tea\n");
  writeFileSync(path.join(workspace, "notes.md"), "# Notes\n\n- nothing yet\n");
  memory = await openMemory({ workspace, indexPath: path.join(base, "index", "memory.db"), timezone: "UTC", log: silentLogger, clock: () => NOW, restoreWorkspace: () => {} });
  memory.startBackground();
  await memory.watching();
  await waitUntil(() => memory.indexWork().filesRead === 2);
});
afterEach(async () => {
  await memory.close();
  await rm(base, { recursive: true, force: true });
});

async function waitUntil(check: () => boolean, ms = 10_000): Promise<void> {
  const end = Date.now() + ms;
  while (!check()) {
    if (Date.now() > end) throw new Error("timed out");
    await sleep(20);
  }
}

const exchange = (n: number) => ({ at: NOW, channel: "cli", sender: "Owner", userText: `question ${n}`, replyText: `answer ${n}` });

describe("openMemory: indexing the daily log", () => {
  it("an exchange indexes one new chunk, and the watcher's event for it reads nothing again", async () => {
    memory.logExchange({ kind: "main" }, exchange(1)); // creates the log: one full read
    await sleep(800); // the watcher settles (200 ms) and reports the write
    const before = memory.indexWork();
    memory.logExchange({ kind: "main" }, exchange(2));
    const afterAppend = memory.indexWork();
    await sleep(800);
    const settled = memory.indexWork();
    expect([afterAppend.filesRead - before.filesRead, afterAppend.chunksWritten - before.chunksWritten, afterAppend.chunksDeleted - before.chunksDeleted]).toEqual([0, 1, 0]);
    expect(settled).toEqual(afterAppend);
  });

  it("a hand edit re-reads only the edited file", async () => {
    memory.logExchange({ kind: "main" }, exchange(1));
    await sleep(800);
    const before = memory.indexWork();
    appendFileSync(path.join(workspace, "notes.md"), "- bought a kite\n");
    await waitUntil(() => memory.indexWork().filesRead > before.filesRead);
    await sleep(500);
    const after = memory.indexWork();
    expect(after.filesRead - before.filesRead).toBe(1);
    expect(after.chunksWritten - before.chunksWritten).toBe(1);
  });
});

describe("openMemory: shared chats' folders", () => {
  const group = { kind: "shared", chat: "telegram_-100" } as const;
  const groupLog = () => path.join(workspace, "memory", "chats", "telegram_-100", "2026-11-23.md");

  it("a hand edit of a group's log is seen on that group's next context read (and indexed), the daemon's own append is not a hand edit", async () => {
    memory.logExchange(group, exchange(1));
    const first = memory.context("g", group, NOW);
    expect(first).toContain("question 1");
    memory.logExchange(group, exchange(2));
    expect(memory.context("g", group, NOW)).toBe(first); // own write: same epoch, same bytes
    appendFileSync(groupLog(), "- the group decided on a quokka mascot\n");
    const after = memory.context("g", group, NOW);
    expect(after).toContain("quokka mascot");
    expect(after).toContain("question 2");
  });
});
