import { appendFileSync, cpSync, mkdirSync, mkdtempSync, readFileSync, realpathSync, rmSync, writeFileSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { createLogger, type Logger } from "../../src/process/log.ts";
import { ContextCache, contextFiles } from "../../src/memory/context.ts";
import { appendToDailyLog, formatExchange, localDate } from "../../src/memory/daily-log.ts";
import { ContextEpochs } from "../../src/memory/epochs.ts";
import { canSee, chatSlug, type MemoryScope } from "../../src/memory/visibility.ts";

const templates = path.resolve(import.meta.dirname, "../../workspace");
const TZ = "Europe/Berlin";
// 2026-11-22 14:05 in Berlin.
const NOW = Date.UTC(2026, 10, 22, 13, 5);
const MAIN: MemoryScope = { kind: "main" };
const GROUP: MemoryScope = { kind: "shared", chat: chatSlug("group:telegram:-1001") };
const OTHER: MemoryScope = { kind: "shared", chat: chatSlug("group:discord:77") };

let ws: string;
let lines: string[];
let log: Logger;

beforeEach(() => {
  ws = realpathSync(mkdtempSync(path.join(os.tmpdir(), "hearth-context-")));
  lines = [];
  log = createLogger({ level: "debug", sink: { write: (l) => lines.push(l) } });
});
afterEach(() => {
  rmSync(ws, { recursive: true, force: true });
});

const put = (rel: string, content: string | Buffer) => {
  const p = path.join(ws, rel);
  mkdirSync(path.dirname(p), { recursive: true });
  writeFileSync(p, content);
};
const copyTemplates = () => cpSync(templates, ws, { recursive: true });
const cache = (opts: { timezone?: string; perFileChars?: number; totalChars?: number } = {}) =>
  new ContextCache({ workspace: ws, timezone: opts.timezone ?? TZ, log, ...opts });
// Section headings are the file paths; files have "## " headings of their own (AGENTS.md).
const SECTION = /^## [\w./-]+\.md(?: \((?:today|yesterday)\))?$/gm;
const headings = (text: string) => text.match(SECTION) ?? [];
const section = (text: string, heading: string) => {
  const start = text.indexOf(`## ${heading}\n`);
  if (start === -1) throw new Error(`no section ${heading}`);
  SECTION.lastIndex = start + 3;
  const next = SECTION.exec(text);
  return text.slice(start, next ? next.index - 1 : undefined);
};
const problems = () => lines.map((l) => JSON.parse(l) as { event: string }).filter((l) => l.event === "memory.file_problem");

/** Every file a context could contain, each with a unique secret. */
function plantEverything(): Record<string, string> {
  const files: Record<string, string> = {
    "SOUL.md": "soul-7f3a",
    "IDENTITY.md": "identity-91c2",
    "AGENTS.md": "agents-0b5e",
    "USER.md": "user-secret-4d1f",
    "MEMORY.md": "memory-secret-8e27",
    "HEARTBEAT.md": "heartbeat-secret-2a9c",
    "memory/2026-11-22.md": "main-today-secret-6b0d",
    "memory/2026-11-21.md": "main-yesterday-secret-c3e8",
    "memory/2026-11-20.md": "main-older-secret-5f14",
    [`memory/chats/${GROUP.kind === "shared" ? GROUP.chat : ""}/2026-11-22.md`]: "group-today-71aa",
    [`memory/chats/${GROUP.kind === "shared" ? GROUP.chat : ""}/2026-11-21.md`]: "group-yesterday-9d02",
    [`memory/chats/${OTHER.kind === "shared" ? OTHER.chat : ""}/2026-11-22.md`]: "other-chat-secret-e640",
    "notes/private.md": "notes-secret-1b7b",
  };
  for (const [rel, secret] of Object.entries(files)) put(rel, `# ${rel}\n\n${secret}\n`);
  return files;
}

describe("ContextCache.assemble", () => {
  it("puts the main scope's files in a fixed order, each under its path", () => {
    plantEverything();
    const text = cache().assemble(MAIN, NOW);
    expect(headings(text)).toEqual([
      "## SOUL.md",
      "## IDENTITY.md",
      "## AGENTS.md",
      "## USER.md",
      "## MEMORY.md",
      "## memory/2026-11-21.md (yesterday)",
      "## memory/2026-11-22.md (today)",
    ]);
    expect(section(text, "USER.md")).toBe("## USER.md\n# USER.md\n\nuser-secret-4d1f\n");
    expect(text).not.toContain("heartbeat-secret");
    expect(text).not.toContain("main-older-secret");
  });

  it("never shows a shared scope the owner's files, the main logs or another chat's log", () => {
    const files = plantEverything();
    const text = cache().assemble(GROUP, NOW);
    expect(headings(text)).toEqual(["## SOUL.md", "## IDENTITY.md", "## AGENTS.md", "## memory/chats/telegram_-1001/2026-11-22.md (today)"]);
    expect(text).toContain("group-today-71aa");
    for (const [rel, secret] of Object.entries(files)) {
      if (!canSee(GROUP, rel)) expect(text, rel).not.toContain(secret);
    }
    for (const secret of ["user-secret", "memory-secret", "heartbeat-secret", "main-today", "main-yesterday", "other-chat", "notes-secret", "group-yesterday"]) {
      expect(text).not.toContain(secret);
    }
  });

  it("names only files the scope may see, and refuses a forged chat slug", () => {
    for (const scope of [MAIN, GROUP, OTHER]) {
      for (const date of ["2026-11-22", "2027-01-01"]) for (const f of contextFiles(scope, date)) expect(canSee(scope, f.relPath), f.relPath).toBe(true);
    }
    plantEverything();
    expect(() => cache().assemble({ kind: "shared", chat: ".." }, NOW)).toThrow(/may not see/);
  });

  it("strips the templates' leading comments and leaves out missing and empty files", () => {
    copyTemplates();
    put("MEMORY.md", "");
    put("USER.md", "<!-- only a comment -->\n\n   \n");
    const text = cache().assemble(MAIN, NOW);
    expect(headings(text)).toEqual(["## SOUL.md", "## IDENTITY.md", "## AGENTS.md"]);
    expect(text).not.toContain("<!--");
    expect(text.startsWith("## SOUL.md\n# Soul\n\nYou are a personal assistant")).toBe(true);
    expect(text).toContain("## AGENTS.md\n# Operating rules");
  });

  it("returns an empty string for an empty or missing workspace", () => {
    expect(cache().assemble(MAIN, NOW)).toBe("");
    rmSync(ws, { recursive: true });
    expect(cache().assemble(GROUP, NOW)).toBe("");
  });

  it("keeps the head of a long note and the newest part of a long log, with markers", () => {
    const numbered = (tag: string, n: number) => Array.from({ length: n }, (_, i) => `${tag} ${String(i).padStart(5, "0")}`).join("\n");
    put("USER.md", numbered("user", 3000)); // 3000 × 11 ≈ 33,000 characters
    put("memory/2026-11-22.md", numbered("log", 3000));
    const text = cache().assemble(MAIN, NOW);
    const user = section(text, "USER.md");
    expect(user).toContain("user 00000\n");
    expect(user).not.toContain("user 02999");
    expect(user).toMatch(/user \d{5}\n\n\[… truncated: [\d,]+ characters not shown; use memory_get to read more\]/);
    const log = section(text, "memory/2026-11-22.md (today)");
    expect(log).toMatch(/^## memory\/2026-11-22\.md \(today\)\n\[… truncated: [\d,]+ characters not shown; use memory_get to read more\]\n\nlog \d{5}\n/);
    expect(log.trimEnd().endsWith("log 02999")).toBe(true);
    expect(log).not.toContain("log 00000");
    // Each body stays within the 20,000-character cap.
    for (const s of [user, log]) expect(s.length).toBeLessThan(20_000 + 200);
  });

  it("keeps the whole context within the total cap, shrinking the largest files first", () => {
    copyTemplates();
    const big = (tag: string) => Array.from({ length: 1700 }, (_, i) => `${tag} ${String(i).padStart(5, "0")}`).join("\n"); // ≈ 18,700
    put("USER.md", big("user"));
    put("MEMORY.md", big("memory"));
    put("memory/2026-11-21.md", big("yesterday"));
    put("memory/2026-11-22.md", big("today"));
    const text = cache().assemble(MAIN, NOW);
    expect(text.length).toBeLessThanOrEqual(60_000);
    expect(text.length).toBeGreaterThan(55_000);
    expect(headings(text)).toHaveLength(7);
    // The small identity files are whole; the four big ones each carry a marker.
    expect(section(text, "SOUL.md")).toContain("Reply in the language you were written to.");
    expect(text.match(/\[… truncated: /g)).toHaveLength(4);
    expect(section(text, "memory/2026-11-22.md (today)")).toContain("today 01699");
    expect(section(text, "USER.md")).toContain("user 00000");

    const tight = cache({ totalChars: 5_000 }).assemble(MAIN, NOW);
    expect(tight.length).toBeLessThanOrEqual(5_000);
    expect(headings(tight)).toHaveLength(7);
  });

  it("survives a 50 MB file and a non-UTF-8 file, capped and decoded", () => {
    const size = 50 * 1024 * 1024;
    const huge = Buffer.alloc(size, "m");
    huge.write("MEMORY-START\n", 0);
    put("MEMORY.md", huge);
    const log = Buffer.alloc(size, "l");
    log.write("\nLOG-END\n", size - 9);
    put("memory/2026-11-22.md", log);
    put("USER.md", Buffer.from("Name: Jos\xe9\n", "latin1"));
    const c = cache();
    const text = c.assemble(MAIN, NOW);
    expect(text.length).toBeLessThanOrEqual(60_000);
    expect(section(text, "MEMORY.md")).toContain("MEMORY-START");
    expect(section(text, "MEMORY.md")).toMatch(/truncated: about [\d,]+ characters/);
    expect(section(text, "memory/2026-11-22.md (today)").trimEnd().endsWith("LOG-END")).toBe(true);
    expect(section(text, "USER.md")).toContain("Name: Jos\uFFFD");
    c.invalidateAll();
    c.assemble(MAIN, NOW);
    expect(problems()).toHaveLength(1);
  });

  it("skips a directory named USER.md, logging it once", () => {
    copyTemplates();
    rmSync(path.join(ws, "USER.md"));
    mkdirSync(path.join(ws, "USER.md"));
    const c = cache();
    for (let i = 0; i < 3; i++) {
      const text = c.assemble(MAIN, NOW + i);
      expect(headings(text)).toEqual(["## SOUL.md", "## IDENTITY.md", "## AGENTS.md", "## MEMORY.md"]);
    }
    expect(problems()).toHaveLength(1);
  });

  it("dates today's and yesterday's logs in the owner's timezone, not UTC", () => {
    for (const d of ["2026-11-20", "2026-11-21", "2026-11-22", "2026-12-31", "2027-01-01"]) put(`memory/${d}.md`, `log of ${d}`);
    const logs = (tz: string, now: number) => headings(cache({ timezone: tz }).assemble(MAIN, now));
    // 05:30 UTC on the 22nd is 21:30 on the 21st in Los Angeles.
    expect(logs("America/Los_Angeles", Date.UTC(2026, 10, 22, 5, 30))).toEqual(["## memory/2026-11-20.md (yesterday)", "## memory/2026-11-21.md (today)"]);
    // 23:30 UTC on the 21st is 00:30 on the 22nd in Berlin.
    expect(logs("Europe/Berlin", Date.UTC(2026, 10, 21, 23, 30))).toEqual(["## memory/2026-11-21.md (yesterday)", "## memory/2026-11-22.md (today)"]);
    // Either side of midnight in Berlin, one minute apart.
    expect(logs("Europe/Berlin", Date.UTC(2026, 10, 21, 22, 59, 30))).toEqual(["## memory/2026-11-20.md (yesterday)", "## memory/2026-11-21.md (today)"]);
    // New Year in Tokyo while it is still the 31st in UTC.
    expect(logs("Asia/Tokyo", Date.UTC(2026, 11, 31, 15, 30))).toEqual(["## memory/2026-12-31.md (yesterday)", "## memory/2027-01-01.md (today)"]);
    for (const now of [Date.UTC(2026, 10, 22, 5, 30), Date.UTC(2026, 11, 31, 15, 30), NOW]) {
      for (const tz of ["America/Los_Angeles", "Asia/Tokyo", "Europe/Berlin", "UTC"]) expect(cache({ timezone: tz }).dateAt(now)).toBe(localDate(now, tz));
    }
  });
});

describe("ContextCache caching", () => {
  it("answers a repeat call from memory, without touching the disk", () => {
    plantEverything();
    const c = cache();
    const first = c.assemble(MAIN, NOW);
    const shared = c.assemble(GROUP, NOW);
    rmSync(ws, { recursive: true }); // any read now would come back "missing"
    expect(c.assemble(MAIN, NOW + 60_000)).toBe(first);
    expect(c.assemble(GROUP, NOW + 60_000)).toBe(shared);
  });

  it("re-reads exactly the invalidated file", () => {
    plantEverything();
    const c = cache();
    c.assemble(MAIN, NOW);
    put("USER.md", "new user text");
    put("MEMORY.md", "new memory text");
    expect(c.assemble(MAIN, NOW)).toContain("user-secret-4d1f");
    c.invalidate("USER.md");
    const text = c.assemble(MAIN, NOW);
    expect(text).toContain("new user text");
    expect(text).toContain("memory-secret-8e27"); // not invalidated: still the cached content
    c.invalidateAll();
    expect(c.assemble(MAIN, NOW)).toContain("new memory text");
  });

  it("sees a log created after it was cached as missing, once invalidated", () => {
    copyTemplates();
    const c = cache();
    expect(c.assemble(GROUP, NOW)).not.toContain("(today)");
    const { relPath } = appendToDailyLog(ws, GROUP, NOW, TZ, "hello group\n");
    c.invalidate(`./${relPath}`);
    expect(section(c.assemble(GROUP, NOW), `${relPath} (today)`)).toContain("hello group");
  });

  it("does not depend on the old logs in the folder", () => {
    copyTemplates();
    for (let i = 0; i < 400; i++) put(`memory/2020-${String((i % 12) + 1).padStart(2, "0")}-${String((i % 28) + 1).padStart(2, "0")}-${i}.md`, "old");
    put("memory/2026-11-22.md", "today");
    expect(headings(cache().assemble(MAIN, NOW)).slice(-1)).toEqual(["## memory/2026-11-22.md (today)"]);
  });
});

describe("ContextEpochs", () => {
  const exchange = (text: string, at = NOW) => formatExchange({ at, channel: "telegram", sender: "Owner", userText: text, replyText: "ok" }, TZ);

  it("returns a byte-identical snapshot and the same epoch while nothing was edited by hand", () => {
    copyTemplates();
    const epochs = new ContextEpochs(cache());
    const first = epochs.get("main", MAIN, NOW);
    expect(first.epoch).toBe(1);
    for (let i = 1; i < 10; i++) expect(epochs.get("main", MAIN, NOW + i * 60_000)).toEqual(first);
  });

  it("keeps a running session's snapshot across the daemon's own appends; a reset shows them", () => {
    copyTemplates();
    const epochs = new ContextEpochs(cache());
    appendToDailyLog(ws, MAIN, NOW, TZ, exchange("first message"));
    const first = epochs.get("main", MAIN, NOW);
    const { relPath } = appendToDailyLog(ws, MAIN, NOW, TZ, exchange("second message"));
    epochs.noteOwnWrite(relPath);
    const again = epochs.get("main", MAIN, NOW + 1000);
    expect(again).toEqual(first);
    expect(again.text).not.toContain("second message");
    // Another session starting now sees the append.
    expect(epochs.get("cron:daily", MAIN, NOW + 1000).text).toContain("second message");
    epochs.reset("main");
    const next = epochs.get("main", MAIN, NOW + 2000);
    expect(next.epoch).toBe(2);
    expect(next.text).toContain("> second message");
  });

  it("starts a new epoch after a hand edit of a file the session shows, and only then", () => {
    copyTemplates();
    const epochs = new ContextEpochs(cache());
    const main1 = epochs.get("main", MAIN, NOW);
    const group1 = epochs.get("group:telegram:-1001", GROUP, NOW);
    appendFileSync(path.join(ws, "USER.md"), "- Name: Ada\n");
    epochs.noteHandEdit("USER.md");
    const main2 = epochs.get("main", MAIN, NOW);
    expect(main2.epoch).toBe(2);
    expect(main2.text).toContain("- Name: Ada");
    expect(epochs.get("group:telegram:-1001", GROUP, NOW)).toEqual(group1); // the group never shows USER.md
    // An edit of an old log (part of no context) changes nothing either.
    put("memory/2020-01-01.md", "old");
    epochs.noteHandEdit("memory/2020-01-01.md");
    expect(epochs.get("main", MAIN, NOW)).toEqual(main2);
    writeFileSync(path.join(ws, "SOUL.md"), readFileSync(path.join(ws, "SOUL.md"), "utf8") + "\n- Loves puns.\n");
    epochs.noteHandEdit("SOUL.md");
    expect(epochs.get("group:telegram:-1001", GROUP, NOW)).toMatchObject({ epoch: 2, text: expect.stringContaining("Loves puns") });
    expect(main1.epoch).toBe(1);
  });

  it("starts a new epoch when the owner's date changes", () => {
    copyTemplates();
    put("memory/2026-11-22.md", "entry of the 22nd");
    put("memory/2026-11-23.md", "entry of the 23rd");
    const epochs = new ContextEpochs(cache());
    const beforeMidnight = Date.UTC(2026, 10, 22, 22, 59); // 23:59 in Berlin
    const first = epochs.get("main", MAIN, beforeMidnight);
    expect(first.text).toContain("## memory/2026-11-22.md (today)");
    const after = epochs.get("main", MAIN, beforeMidnight + 2 * 60_000);
    expect(after.epoch).toBe(2);
    expect(after.text).toContain("## memory/2026-11-22.md (yesterday)");
    expect(after.text).toContain("## memory/2026-11-23.md (today)\nentry of the 23rd");
  });

  it("starts over everywhere when the workspace was replaced", () => {
    copyTemplates();
    const epochs = new ContextEpochs(cache());
    const first = epochs.get("g", GROUP, NOW);
    rmSync(ws, { recursive: true });
    copyTemplates();
    put("SOUL.md", "a fresh soul");
    epochs.noteWorkspaceReplaced();
    const next = epochs.get("g", GROUP, NOW);
    expect(next.epoch).toBe(first.epoch + 1);
    expect(next.text).toContain("a fresh soul");
  });
});
