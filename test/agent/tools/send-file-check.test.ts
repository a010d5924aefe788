import { mkdirSync, mkdtempSync, realpathSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { checkOutgoingSync } from "../../../src/agent/tools/send-file.ts";

let dir: string;
let ws: string;
beforeEach(() => {
  dir = realpathSync(mkdtempSync(join(tmpdir(), "hearth-send-")));
  ws = join(dir, "ws");
  mkdirSync(join(ws, "memory", "chats", "telegram_-5"), { recursive: true });
  writeFileSync(join(ws, "pic.png"), "png");
  writeFileSync(join(ws, "memory", "chats", "telegram_-5", "ours.jpg"), "jpg");
  writeFileSync(join(dir, "outside.png"), "secret");
  symlinkSync(join(dir, "outside.png"), join(ws, "link.png"));
});
afterEach(() => rmSync(dir, { recursive: true, force: true }));

describe("checkOutgoingSync: send_file's rule for markdown images", () => {
  it("main scope: any workspace file, as a photo when it is a picture", () => {
    expect(checkOutgoingSync(ws, "main", "main", "pic.png")).toEqual({ ok: true, relative: "pic.png", file: { file: join(ws, "pic.png"), name: "pic.png", mime: "image/png", asPhoto: true } });
  });

  it("refuses what lies outside the workspace, also through a symlink, a folder, and a missing file", () => {
    expect(checkOutgoingSync(ws, "main", "main", "../outside.png")).toEqual({ ok: false, reason: "outside the workspace" });
    expect(checkOutgoingSync(ws, "main", "main", join(dir, "outside.png"))).toEqual({ ok: false, reason: "outside the workspace" });
    expect(checkOutgoingSync(ws, "main", "main", "link.png")).toEqual({ ok: false, reason: "outside the workspace" });
    expect(checkOutgoingSync(ws, "main", "main", "memory")).toEqual({ ok: false, reason: "not a file" });
    expect(checkOutgoingSync(ws, "main", "main", "nope.png")).toEqual({ ok: false, reason: "no such file in the workspace" });
  });

  it("a shared scope: only its own chat folder", () => {
    expect(checkOutgoingSync(ws, "shared", "group:telegram:-5", "memory/chats/telegram_-5/ours.jpg").ok).toBe(true);
    expect(checkOutgoingSync(ws, "shared", "group:telegram:-5", "pic.png")).toEqual({ ok: false, reason: 'Refused "pic.png": this conversation can only send files from memory/chats/telegram_-5/.' });
    expect(checkOutgoingSync(ws, "shared", "group:telegram:-6", "memory/chats/telegram_-5/ours.jpg").ok).toBe(false);
  });
});
