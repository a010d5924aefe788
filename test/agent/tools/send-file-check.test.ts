import { linkSync, mkdirSync, mkdtempSync, realpathSync, renameSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import type { Scope } from "../../../src/agent/messages.ts";
import { checkOutgoing, readOutgoing } from "../../../src/agent/tools/send-file.ts";
import { silentLogger } from "../../../src/process/log.ts";

let dir: string;
let ws: string;
beforeEach(() => {
  dir = realpathSync(mkdtempSync(join(tmpdir(), "hearth-send-")));
  ws = join(dir, "ws");
  mkdirSync(join(ws, "memory", "chats", "telegram_-5"), { recursive: true });
  writeFileSync(join(ws, "pic.png"), "png");
  writeFileSync(join(ws, "memory", "chats", "telegram_-5", "ours.jpg"), "jpg");
  writeFileSync(join(dir, "outside.png"), "secret");
  writeFileSync(join(dir, "config.json"), '{"token":"secret"}');
  symlinkSync(join(dir, "outside.png"), join(ws, "link.png"));
});
afterEach(() => rmSync(dir, { recursive: true, force: true }));

const check = (requested: string, scope: Scope = "main", sessionKey = "main") => checkOutgoing({ workspace: ws, scope, sessionKey, requested }, silentLogger);
const refusedAs = (p: string, why: string) => ({ ok: false, reason: `Refused ${JSON.stringify(p)}: ${why}. Only a plain file (one name, not a link) can be sent to a chat.` });

describe("the outgoing-file rule (send_file and markdown images)", () => {
  it("main scope: a plain workspace file, as a photo when it is a picture; the bytes come from the checked descriptor", () => {
    expect(check("pic.png")).toEqual({ ok: true, relative: "pic.png", file: { file: join(ws, "pic.png"), name: "pic.png", mime: "image/png", asPhoto: true } });
    expect(check(join(ws, "pic.png")).ok).toBe(true);
    const read = readOutgoing({ workspace: ws, scope: "main", sessionKey: "main", requested: "pic.png" }, silentLogger);
    expect(read.ok && Buffer.from(read.file.data).toString()).toBe("png");
  });

  it("refuses what lies outside the workspace, any link, a second name (config.json hard-linked in), a folder and a missing file", () => {
    const outside = { ok: false, reason: 'Refused "../outside.png": it is outside the workspace. Only files inside the workspace can be sent to a chat.' };
    expect(check("../outside.png")).toEqual(outside);
    expect(check(join(dir, "outside.png"))).toEqual({ ok: false, reason: `Refused ${JSON.stringify(join(dir, "outside.png"))}: it is outside the workspace. Only files inside the workspace can be sent to a chat.` });
    expect(check("link.png")).toEqual(refusedAs("link.png", "a symlink"));
    linkSync(join(dir, "config.json"), join(ws, "settings.json"));
    expect(check("settings.json")).toEqual(refusedAs("settings.json", "a file with 2 names (hard links)"));
    symlinkSync(join(ws, "memory"), join(ws, "notes"));
    expect(check("notes/chats/telegram_-5/ours.jpg")).toEqual(refusedAs("notes/chats/telegram_-5/ours.jpg", "the folder notes on its path is a link"));
    expect(check("memory")).toEqual({ ok: false, reason: '"memory" cannot be sent: not a regular file (directory).' });
    expect(check("nope.png")).toEqual({ ok: false, reason: '"nope.png" is not a file in the workspace.' });
  });

  it("a shared scope: only its own chat folder, and there only plain files", () => {
    expect(check("memory/chats/telegram_-5/ours.jpg", "shared", "group:telegram:-5").ok).toBe(true);
    expect(check("pic.png", "shared", "group:telegram:-5")).toEqual({ ok: false, reason: 'Refused "pic.png": this conversation can only send files from memory/chats/telegram_-5/.' });
    expect(check("memory/chats/telegram_-5/ours.jpg", "shared", "group:telegram:-6").ok).toBe(false);
    linkSync(join(ws, "pic.png"), join(ws, "memory", "chats", "telegram_-5", "copy.png"));
    expect(check("memory/chats/telegram_-5/copy.png", "shared", "group:telegram:-5")).toEqual(refusedAs("memory/chats/telegram_-5/copy.png", "a file with 2 names (hard links)"));
  });

  it("what is sent is what was read from the checked descriptor: a link swapped in afterwards changes nothing", () => {
    writeFileSync(join(ws, "memory", "chats", "telegram_-5", "plan.md"), "picnic");
    const read = readOutgoing({ workspace: ws, scope: "shared", sessionKey: "group:telegram:-5", requested: "memory/chats/telegram_-5/plan.md" }, silentLogger);
    renameSync(join(ws, "memory", "chats", "telegram_-5", "plan.md"), join(ws, "gone.md"));
    symlinkSync(join(dir, "config.json"), join(ws, "memory", "chats", "telegram_-5", "plan.md"));
    expect(read.ok && Buffer.from(read.file.data).toString()).toBe("picnic");
    expect(check("memory/chats/telegram_-5/plan.md", "shared", "group:telegram:-5")).toEqual(refusedAs("memory/chats/telegram_-5/plan.md", "a symlink"));
  });
});
