// The one opener of workspace files: every link an owner's program could plant is refused where
// it would carry a private file (or a secret from outside the workspace) to a shared scope, and
// nothing is ever written through a link.
import { execFileSync } from "node:child_process";
import { closeSync, existsSync, linkSync, lstatSync, mkdirSync, mkdtempSync, readFileSync, readSync, realpathSync, rmSync, statSync, symlinkSync, writeFileSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { createLogger, type Logger } from "../../src/process/log.ts";
import { ContextCache } from "../../src/memory/context.ts";
import { appendToDailyLog, appendToWorkspaceFile, WorkspaceWriteError } from "../../src/memory/daily-log.ts";
import type { MemoryScope } from "../../src/memory/visibility.ts";
import { ProblemLog, readNote } from "../../src/memory/workspace-files.ts";
import { NOT_VISIBLE, openWorkspaceFile, type OpenMode, type Opened } from "../../src/memory/workspace-open.ts";

const MAIN: MemoryScope = { kind: "main" };
const GROUP: MemoryScope = { kind: "shared", chat: "telegram_-2001" };
const CHAT = "memory/chats/telegram_-2001";
const TODAY = "2026-11-23";
const AT = Date.UTC(2026, 10, 23, 12, 0);
const USER = "# User\nThe owner's passport is UMARK-4417.\n";
const MEMORY = "# Memory\n- The safe code is MMARK-9023.\n";
const CONFIG = '{"channels":{"telegram":{"token":"123456:CMARK-bot-token"}}}\n';

let home: string;
let ws: string;
let lines: string[];
let log: Logger;
let problems: ProblemLog;

beforeEach(() => {
  home = realpathSync(mkdtempSync(path.join(os.tmpdir(), "hearth-open-")));
  ws = path.join(home, "workspace");
  mkdirSync(path.join(ws, CHAT), { recursive: true });
  writeFileSync(path.join(home, "config.json"), CONFIG);
  writeFileSync(path.join(ws, "USER.md"), USER);
  writeFileSync(path.join(ws, "MEMORY.md"), MEMORY);
  writeFileSync(path.join(ws, "SOUL.md"), "# Soul\nBe kind.\n");
  lines = [];
  log = createLogger({ level: "debug", sink: { write: (l) => lines.push(l) } });
  problems = new ProblemLog(log);
});
afterEach(() => {
  rmSync(home, { recursive: true, force: true });
});

const at = (rel: string) => path.join(ws, rel);
const open = (rel: string, scope: MemoryScope, mode: OpenMode = "read"): Opened => openWorkspaceFile({ workspace: ws, relPath: rel, scope, mode }, problems);
/** What the open would let a caller read: the text, or the outcome without a descriptor. */
const readVia = (rel: string, scope: MemoryScope): string | Exclude<Opened, { type: "ok" }> => {
  const o = open(rel, scope);
  if (o.type !== "ok") return o;
  try {
    const buf = Buffer.alloc(o.stat.size);
    readSync(o.fd, buf, 0, buf.length, 0);
    return buf.toString("utf8");
  } finally {
    closeSync(o.fd);
  }
};
const problemLines = () => lines.map((l) => JSON.parse(l) as { event: string; path: string; reason: string }).filter((l) => l.event === "memory.file_problem");
const ownerFilesUnchanged = () => {
  expect(readFileSync(at("USER.md"), "utf8")).toBe(USER);
  expect(readFileSync(at("MEMORY.md"), "utf8")).toBe(MEMORY);
  expect(readFileSync(path.join(home, "config.json"), "utf8")).toBe(CONFIG);
};

describe("openWorkspaceFile: reading for a shared scope", () => {
  it("reads the chat's own plain notes and the identity files", () => {
    writeFileSync(at(`${CHAT}/${TODAY}.md`), "# today\n");
    expect(readVia(`${CHAT}/${TODAY}.md`, GROUP)).toBe("# today\n");
    expect(readVia("SOUL.md", GROUP)).toBe("# Soul\nBe kind.\n");
    expect(readVia(`${CHAT}/none.md`, GROUP)).toEqual({ type: "missing" });
  });

  it("refuses every path outside its files before looking at the disk", () => {
    for (const rel of ["USER.md", "MEMORY.md", `memory/${TODAY}.md`, "memory/chats/telegram_-9/x.md", `${CHAT}/../../../USER.md`, "../config.json", "", "/etc/passwd", `${CHAT}/notes.txt`]) {
      expect(readVia(rel, GROUP), rel).toEqual({ type: "refused", reason: NOT_VISIBLE });
    }
    expect(problemLines()).toEqual([]);
  });

  it("refuses a symlink to USER.md, a linked chat folder and a hard link to MEMORY.md, each logged once", () => {
    symlinkSync("../../../USER.md", at(`${CHAT}/${TODAY}.md`));
    mkdirSync(at("memory/chats"), { recursive: true });
    // The folder link: the chat's folder is the owner's daily log folder, so its "own" log of
    // today is the owner's.
    writeFileSync(at(`memory/${TODAY}.md`), "# owner log LMARK-3300\n");
    symlinkSync("..", at("memory/chats/telegram_-2002"));
    mkdirSync(at("memory/chats/telegram_-2003"));
    linkSync(at("MEMORY.md"), at(`memory/chats/telegram_-2003/${TODAY}.md`));

    for (let i = 0; i < 3; i++) {
      expect(readVia(`${CHAT}/${TODAY}.md`, GROUP)).toEqual({ type: "refused", reason: "a symlink" });
      expect(readVia(`memory/chats/telegram_-2002/${TODAY}.md`, { kind: "shared", chat: "telegram_-2002" })).toEqual({
        type: "refused",
        reason: "the folder memory/chats/telegram_-2002 on its path is a link",
      });
      expect(readVia(`memory/chats/telegram_-2003/${TODAY}.md`, { kind: "shared", chat: "telegram_-2003" })).toEqual({ type: "refused", reason: "a file with 2 names (hard links)" });
    }
    expect(problemLines().map((l) => [path.relative(ws, l.path), l.reason])).toEqual([
      [`${CHAT}/${TODAY}.md`, "a symlink"],
      [`memory/chats/telegram_-2002/${TODAY}.md`, "the folder memory/chats/telegram_-2002 on its path is a link"],
      [`memory/chats/telegram_-2003/${TODAY}.md`, "a file with 2 names (hard links)"],
    ]);
  });

  it("refuses a symlink that stays inside the chat's own folder too: shared files are plain files", () => {
    writeFileSync(at(`${CHAT}/real.md`), "own note\n");
    symlinkSync("real.md", at(`${CHAT}/alias.md`));
    expect(readVia(`${CHAT}/alias.md`, GROUP)).toEqual({ type: "refused", reason: "a symlink" });
  });
});

describe("openWorkspaceFile: identity files are plain files for every scope", () => {
  it("refuses SOUL.md linked to config.json, for the main scope as for a shared one", () => {
    rmSync(at("SOUL.md"));
    symlinkSync("../config.json", at("SOUL.md"));
    expect(readVia("SOUL.md", MAIN)).toEqual({ type: "refused", reason: "a symlink" });
    expect(readVia("SOUL.md", GROUP)).toEqual({ type: "refused", reason: "a symlink" });
    rmSync(at("SOUL.md"));
    linkSync(path.join(home, "config.json"), at("SOUL.md"));
    expect(readVia("SOUL.md", MAIN)).toEqual({ type: "refused", reason: "a file with 2 names (hard links)" });
  });

  it("keeps config.json out of every scope's context, whichever scope reads first", () => {
    rmSync(at("SOUL.md"));
    symlinkSync("../config.json", at("SOUL.md"));
    const cache = new ContextCache({ workspace: ws, timezone: "UTC", log });
    for (const scope of [MAIN, GROUP, MAIN]) {
      const text = cache.assemble(scope, AT);
      expect(text).not.toContain("CMARK");
      expect(text).not.toContain("## SOUL.md");
    }
    expect(cache.assemble(GROUP, AT)).toBe("");
  });
});

describe("openWorkspaceFile: the owner's files for the main scope", () => {
  it("follows a symlink to a markdown file inside the workspace, and says where it led", () => {
    mkdirSync(at("notes"));
    writeFileSync(at("notes/me.md"), "about me\n");
    rmSync(at("USER.md"));
    symlinkSync("notes/me.md", at("USER.md"));
    const o = open("USER.md", MAIN);
    expect(o).toMatchObject({ type: "ok", relPath: "notes/me.md", absPath: at("notes/me.md"), created: false });
    if (o.type === "ok") closeSync(o.fd);
  });

  it("refuses a symlink out of the workspace and one to a non-markdown file", () => {
    rmSync(at("USER.md"));
    symlinkSync("../config.json", at("USER.md"));
    expect(readVia("USER.md", MAIN)).toEqual({ type: "refused", reason: "a link to a place outside the workspace" });
    writeFileSync(at("secret.txt"), "x");
    rmSync(at("USER.md"));
    symlinkSync("secret.txt", at("USER.md"));
    expect(readVia("USER.md", MAIN)).toEqual({ type: "refused", reason: "a link to a file that is not a markdown note" });
  });

  it("reads an owner file that has a second name, which itself stays refused to the chat", () => {
    linkSync(at("MEMORY.md"), at(`${CHAT}/${TODAY}.md`));
    expect(readVia("MEMORY.md", MAIN)).toBe(MEMORY);
    expect(readVia(`${CHAT}/${TODAY}.md`, MAIN)).toEqual({ type: "refused", reason: "a file with 2 names (hard links)" });
    expect(readVia(`${CHAT}/${TODAY}.md`, GROUP)).toEqual({ type: "refused", reason: "a file with 2 names (hard links)" });
    // …and a symlink from an owner file to that second name does not make it readable either.
    rmSync(at("USER.md"));
    symlinkSync(`${CHAT}/${TODAY}.md`, at("USER.md"));
    expect(readVia("USER.md", MAIN)).toEqual({ type: "refused", reason: "a file with 2 names (hard links)" });
  });

  it("gives readNote (the heartbeat's HEARTBEAT.md) nothing through a link to config.json", () => {
    writeFileSync(at("HEARTBEAT.md"), "<!-- for the owner -->\n# Heartbeat\n- check mail\n");
    expect(readNote(ws, "HEARTBEAT.md", MAIN, 20_000, problems)).toBe("# Heartbeat\n- check mail\n");
    rmSync(at("HEARTBEAT.md"));
    symlinkSync("../config.json", at("HEARTBEAT.md"));
    expect(readNote(ws, "HEARTBEAT.md", MAIN, 20_000, problems)).toBeNull();
    expect(readNote(ws, "HEARTBEAT.md", GROUP, 20_000, problems)).toBeNull();
  });

  it("works when the workspace folder itself is reached through a symlink", () => {
    const linked = path.join(home, "ws-link");
    symlinkSync(ws, linked);
    const o = openWorkspaceFile({ workspace: linked, relPath: "USER.md", scope: MAIN, mode: "read" }, problems);
    expect(o).toMatchObject({ type: "ok", relPath: "USER.md", absPath: at("USER.md") });
    if (o.type === "ok") closeSync(o.fd);
  });
});

describe("openWorkspaceFile: appending never writes through a link", () => {
  it("creates a missing file and its folders, owner-only, and says it created it", () => {
    const o = open(`memory/chats/telegram_-7/${TODAY}.md`, { kind: "shared", chat: "telegram_-7" }, "append");
    expect(o).toMatchObject({ type: "ok", created: true });
    if (o.type === "ok") closeSync(o.fd);
    expect(statSync(at(`memory/chats/telegram_-7/${TODAY}.md`)).mode & 0o777).toBe(0o600);
    expect(statSync(at("memory/chats/telegram_-7")).mode & 0o777).toBe(0o700);
    const again = open(`memory/chats/telegram_-7/${TODAY}.md`, { kind: "shared", chat: "telegram_-7" }, "append");
    expect(again).toMatchObject({ type: "ok", created: false });
    if (again.type === "ok") closeSync(again.fd);
  });

  it("refuses a symlinked, dangling, hard-linked or folder-linked log, in every scope, and writes nothing", () => {
    symlinkSync("../../../USER.md", at(`${CHAT}/${TODAY}.md`));
    expect(() => appendToDailyLog(ws, GROUP, AT, "UTC", "group chatter\n", problems)).toThrow(WorkspaceWriteError);

    // The main scope's own log as a symlink to a chat's log: the owner's words must not land there.
    writeFileSync(at("memory/chats/telegram_-2001/other.md"), "");
    symlinkSync("chats/telegram_-2001/other.md", at(`memory/${TODAY}.md`));
    expect(() => appendToDailyLog(ws, MAIN, AT, "UTC", "owner chatter\n", problems)).toThrow("a symlink");
    expect(readFileSync(at("memory/chats/telegram_-2001/other.md"), "utf8")).toBe("");

    // A dangling symlink would create its target: refused, the target stays absent.
    mkdirSync(at("memory/chats/telegram_-2004"));
    symlinkSync(path.join(home, "planted.md"), at(`memory/chats/telegram_-2004/${TODAY}.md`));
    expect(() => appendToDailyLog(ws, { kind: "shared", chat: "telegram_-2004" }, AT, "UTC", "x\n", problems)).toThrow("a symlink");
    expect(existsSync(path.join(home, "planted.md"))).toBe(false);

    mkdirSync(at("memory/chats/telegram_-2003"));
    linkSync(at("MEMORY.md"), at(`memory/chats/telegram_-2003/${TODAY}.md`));
    expect(() => appendToDailyLog(ws, { kind: "shared", chat: "telegram_-2003" }, AT, "UTC", "x\n", problems)).toThrow("a file with 2 names (hard links)");
    linkSync(at("USER.md"), at("user-alias.md"));
    expect(() => appendToWorkspaceFile(ws, "MEMORY.md", MAIN, "- fact\n", {}, problems)).toThrow("a file with 2 names");

    // A linked chat folder pointing at the workspace root: no file is created through it.
    symlinkSync("../..", at("memory/chats/telegram_-2002"));
    expect(() => appendToDailyLog(ws, { kind: "shared", chat: "telegram_-2002" }, AT, "UTC", "x\n", problems)).toThrow("the folder memory/chats/telegram_-2002 on its path is a link");
    expect(existsSync(at(`${TODAY}.md`))).toBe(false);

    ownerFilesUnchanged();
    expect(lstatSync(at(`${CHAT}/${TODAY}.md`)).isSymbolicLink()).toBe(true);
  });

  it("separates an append from a hand edit that left no final line end", () => {
    writeFileSync(at("MEMORY.md"), "# Memory\n- no newline");
    appendToWorkspaceFile(ws, "MEMORY.md", MAIN, "- fact\n", { separate: true }, problems);
    expect(readFileSync(at("MEMORY.md"), "utf8")).toBe("# Memory\n- no newline\n- fact\n");
  });

  it("gives a FIFO at a log's name an error instead of hanging", () => {
    execFileSync("mkfifo", [at(`${CHAT}/${TODAY}.md`)]);
    expect(open(`${CHAT}/${TODAY}.md`, GROUP, "append")).toEqual({ type: "unreadable", reason: "not a regular file (FIFO)" });
    expect(open(`${CHAT}/${TODAY}.md`, GROUP, "read")).toEqual({ type: "unreadable", reason: "not a regular file (FIFO)" });
  });
});
