// The dashboard's note editor: exact bytes on save, a save refused when the file changed since
// it was opened (nothing written, the current text returned), never a write through a link.
import { lstatSync, mkdirSync, mkdtempSync, readFileSync, realpathSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { silentLogger } from "../../src/process/log.ts";
import { listNotes, MISSING_VERSION, readNoteForEdit, saveNote } from "../../src/memory/workspace-edit.ts";

let home: string;
let ws: string;

beforeEach(() => {
  home = realpathSync(mkdtempSync(path.join(os.tmpdir(), "hearth-edit-")));
  ws = path.join(home, "workspace");
  mkdirSync(path.join(ws, "memory/chats/telegram_-1"), { recursive: true });
  writeFileSync(path.join(ws, "USER.md"), "# User\nlong old text that is longer than the new one\n");
  writeFileSync(path.join(ws, "SOUL.md"), "# Soul\n");
  writeFileSync(path.join(ws, "memory/chats/telegram_-1/2026-11-25.md"), "log\n");
  writeFileSync(path.join(home, "config.json"), '{"secret":"CONFIGMARK"}\n');
});
afterEach(() => rmSync(home, { recursive: true, force: true }));

describe("workspace note editor", () => {
  it("saves exactly the new bytes over a longer file, and the next read has them", () => {
    const read = readNoteForEdit(ws, "USER.md", silentLogger);
    expect(read.type).toBe("ok");
    const text = "# User\nAda 🫖\n";
    const saved = saveNote(ws, "USER.md", text, read.type === "ok" ? read.version : "", silentLogger);
    expect(saved).toMatchObject({ type: "saved", relPath: "USER.md" });
    expect(readFileSync(path.join(ws, "USER.md"), "utf8")).toBe(text);
    expect(readNoteForEdit(ws, "USER.md", silentLogger)).toMatchObject({ type: "ok", text });
  });

  it("refuses a save when the file changed since it was opened, writes nothing and returns what is there", () => {
    const read = readNoteForEdit(ws, "USER.md", silentLogger);
    writeFileSync(path.join(ws, "USER.md"), "changed by someone else\n");
    const saved = saveNote(ws, "USER.md", "mine\n", read.type === "ok" ? read.version : "", silentLogger);
    expect(saved).toMatchObject({ type: "stale", current: "changed by someone else\n" });
    expect(readFileSync(path.join(ws, "USER.md"), "utf8")).toBe("changed by someone else\n");
  });

  it("creates a missing note only while it is still missing", () => {
    expect(readNoteForEdit(ws, "memory/ideas.md", silentLogger)).toEqual({ type: "missing", version: MISSING_VERSION });
    expect(saveNote(ws, "memory/ideas.md", "first\n", MISSING_VERSION, silentLogger).type).toBe("saved");
    expect(saveNote(ws, "memory/ideas.md", "second\n", MISSING_VERSION, silentLogger)).toMatchObject({ type: "stale", current: "first\n" });
    expect(readFileSync(path.join(ws, "memory/ideas.md"), "utf8")).toBe("first\n");
  });

  it("never writes through a link, nor outside the workspace, nor to what is not a note", () => {
    rmSync(path.join(ws, "SOUL.md"));
    symlinkSync(path.join(home, "config.json"), path.join(ws, "SOUL.md"));
    expect(saveNote(ws, "SOUL.md", "x", MISSING_VERSION, silentLogger).type).toBe("refused");
    expect(saveNote(ws, "../config.json", "x", MISSING_VERSION, silentLogger).type).toBe("refused");
    expect(saveNote(ws, "notes.txt", "x", MISSING_VERSION, silentLogger).type).toBe("refused");
    expect(readFileSync(path.join(home, "config.json"), "utf8")).toBe('{"secret":"CONFIGMARK"}\n');
    expect(lstatSync(path.join(ws, "SOUL.md")).isSymbolicLink()).toBe(true);
  });

  it("lists the notes with who sees them, the workspace's own files first", () => {
    expect(listNotes(ws)).toEqual([
      { relPath: "SOUL.md", audience: "shared" },
      { relPath: "USER.md", audience: "main only" },
      { relPath: "memory/chats/telegram_-1/2026-11-25.md", audience: "this chat" },
    ]);
  });
});
