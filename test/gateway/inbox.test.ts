import { appendFileSync, mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import type { InboundMessage } from "../../src/channels/channel.ts";
import { Inbox } from "../../src/gateway/inbox.ts";
import { silentLogger } from "../../src/log.ts";

let dir: string;
let path: string;
beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), "hearth-inbox-"));
  path = join(dir, "inbox.jsonl");
});
afterEach(() => rmSync(dir, { recursive: true, force: true }));

const msg = (id: string, text = "hi"): InboundMessage => ({
  id,
  channel: "telegram",
  chat: { id: "1", type: "dm" },
  sender: { id: "1", name: "Owner", isOwner: true },
  text,
  addressed: true,
  receivedAt: 1,
});

describe("Inbox", () => {
  it("replays what was accepted but not done, once", () => {
    const { inbox } = Inbox.open(path, silentLogger);
    inbox.accept(msg("a"), "main");
    inbox.accept(msg("b"), "main");
    inbox.markDone("telegram:a");

    const second = Inbox.open(path, silentLogger);
    expect(second.recovery.replay.map((e) => e.id)).toEqual(["telegram:b"]);
    expect(second.recovery.abandoned).toEqual([]);

    // Crashed again before b was done: b is given up, not replayed forever.
    const third = Inbox.open(path, silentLogger);
    expect(third.recovery.replay).toEqual([]);
    expect(third.recovery.abandoned.map((e) => e.id)).toEqual(["telegram:b"]);
    expect(Inbox.open(path, silentLogger).recovery).toEqual({ replay: [], abandoned: [] });
  });

  it("recognises a re-delivered platform message after a restart (dedupe survives compaction)", () => {
    const { inbox } = Inbox.open(path, silentLogger);
    inbox.accept(msg("a"), "main");
    inbox.markDone("telegram:a");
    const { inbox: reopened } = Inbox.open(path, silentLogger);
    expect(reopened.has("telegram:a")).toBe(true);
    expect(reopened.accept(msg("a"), "main")).toBeNull();
  });

  it("rejects a duplicate while the first is still open", () => {
    const { inbox } = Inbox.open(path, silentLogger);
    expect(inbox.accept(msg("a"), "main")).not.toBeNull();
    expect(inbox.accept(msg("a"), "main")).toBeNull();
  });

  it("compacts the file on open and survives a torn last line", () => {
    const { inbox } = Inbox.open(path, silentLogger);
    for (let i = 0; i < 50; i++) {
      inbox.accept(msg(`m${i}`), "main");
      inbox.markDone(`telegram:m${i}`);
    }
    inbox.accept(msg("open", "keep me"), "main");
    appendFileSync(path, '{"type":"accepted","entry":{"id":"telegram:to'); // crash mid-write
    const { recovery } = Inbox.open(path, silentLogger);
    expect(recovery.replay.map((e) => e.message.text)).toEqual(["keep me"]);
    const lines = readFileSync(path, "utf8").trim().split("\n");
    expect(lines.length).toBeLessThan(60);
    for (const l of lines) expect(() => JSON.parse(l)).not.toThrow();
  });

  it("keeps the preface captured at acceptance for a replay", () => {
    const { inbox } = Inbox.open(path, silentLogger);
    inbox.accept(msg("a"), "group:telegram:1", "Earlier in this chat: …");
    expect(Inbox.open(path, silentLogger).recovery.replay[0]!.preface).toBe("Earlier in this chat: …");
  });
});
