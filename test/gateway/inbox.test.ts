import { appendFileSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { basename, dirname, join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import type { InboundMessage } from "../../src/channels/channel.ts";
import { Inbox } from "../../src/gateway/inbox.ts";
import { silentLogger } from "../../src/process/log.ts";

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
  chat: { id: "1", type: "dm", members: ["1"] },
  sender: { id: "1", name: "Owner", isOwner: true },
  text,
  addressed: true,
  receivedAt: 1,
});

describe("Inbox", () => {
  it("keeps what was accepted but not done open across a restart, counting only runs that started", () => {
    const { inbox } = Inbox.open(path, silentLogger);
    inbox.accept(msg("a"), "main");
    inbox.accept(msg("b"), "main");
    inbox.markStarted("telegram:a");
    inbox.markDone("telegram:a");
    inbox.markStarted("telegram:b");

    const second = Inbox.open(path, silentLogger);
    expect(second.pending.map((e) => [e.id, e.attempts])).toEqual([["telegram:b", 1]]);
    // Opening again without a run starting counts nothing (the old inbox counted every start).
    const third = Inbox.open(path, silentLogger);
    expect(third.pending.map((e) => [e.id, e.attempts])).toEqual([["telegram:b", 1]]);
    third.inbox.markStarted("telegram:b");
    expect(Inbox.open(path, silentLogger).pending.map((e) => e.attempts)).toEqual([2]);
  });

  it("an entry given up is closed for good and still recognised as a duplicate", () => {
    const { inbox } = Inbox.open(path, silentLogger);
    inbox.accept(msg("a"), "main");
    inbox.markAbandoned("telegram:a", "two runs started");
    const reopened = Inbox.open(path, silentLogger);
    expect(reopened.pending).toEqual([]);
    expect(reopened.inbox.accept(msg("a"), "main")).toBeNull();
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
    const { pending } = Inbox.open(path, silentLogger);
    expect(pending.map((e) => e.message.text)).toEqual(["keep me"]);
    const lines = readFileSync(path, "utf8").trim().split("\n");
    expect(lines.length).toBeLessThan(60);
    for (const l of lines) expect(() => JSON.parse(l)).not.toThrow();
  });

  it("skips records of the wrong shape, naming the file and the line, and keeps the rest", () => {
    const { inbox } = Inbox.open(path, silentLogger);
    inbox.accept(msg("a", "first"), "main");
    appendFileSync(path, 'null\n{"type":"accepted"}\n{"type":"started"}\n[1,2]\n"text"\n');
    inbox.accept(msg("b", "second"), "main");
    const logged: Array<[string, unknown]> = [];
    const log = { ...silentLogger, warn: (event: string, fields?: unknown) => void logged.push([event, fields]) };
    const { pending } = Inbox.open(path, log);
    expect(pending.map((e) => e.message.text)).toEqual(["first", "second"]);
    expect(logged.map(([event, fields]) => [event, (fields as { file: string; lines: number[] }).file, (fields as { lines: number[] }).lines])).toEqual([["state.records_skipped", path, [2, 3, 4, 5, 6]]]);
  });

  it("sets aside an inbox that cannot be read at all and starts empty, keeping the original", () => {
    mkdirSync(path);
    writeFileSync(join(path, "inside"), "kept");
    const { inbox, pending } = Inbox.open(path, silentLogger);
    expect(pending).toEqual([]);
    const kept = readdirSync(dirname(path)).filter((n) => n.startsWith(`${basename(path)}.damaged-`));
    expect(kept).toHaveLength(1);
    expect(readFileSync(join(dirname(path), kept[0]!, "inside"), "utf8")).toBe("kept");
    expect(inbox.accept(msg("c", "after"), "main")?.id).toBe("telegram:c");
  });

  it("writes the accepted record to disk before accept returns", () => {
    const { inbox } = Inbox.open(path, silentLogger);
    inbox.accept(msg("a", "durable"), "main");
    const last = JSON.parse(readFileSync(path, "utf8").trim().split("\n").at(-1)!);
    expect(last).toMatchObject({ type: "accepted", entry: { id: "telegram:a", attempts: 0, message: { text: "durable" } } });
  });

  it("reads an inbox written by the previous version ('replayed' records, 'replays' counts) without counting them", () => {
    const old = { id: "telegram:x", sessionKey: "main", message: msg("x", "old"), acceptedAt: 1, replays: 1 };
    appendFileSync(path, `${JSON.stringify({ type: "accepted", entry: old })}\n${JSON.stringify({ type: "replayed", id: "telegram:x", ts: 2 })}\n`);
    expect(Inbox.open(path, silentLogger).pending.map((e) => [e.id, e.attempts])).toEqual([["telegram:x", 0]]);
  });

  it("a long-running daemon's inbox is compacted as it goes, keeping open entries and dedupe", () => {
    const { inbox } = Inbox.open(path, silentLogger);
    inbox.accept(msg("open", "still open"), "main");
    for (let i = 0; i < 2_600; i++) {
      inbox.accept(msg(`m${i}`), "main");
      inbox.markDone(`telegram:m${i}`);
    }
    expect(readFileSync(path, "utf8").trim().split("\n").length).toBeLessThan(3_000);
    expect(inbox.has("telegram:m0")).toBe(true);
    const reopened = Inbox.open(path, silentLogger);
    expect(reopened.pending.map((e) => e.message.text)).toEqual(["still open"]);
    expect(reopened.inbox.has("telegram:m2599")).toBe(true);
  }, 30_000);

  it("keeps the preface captured at acceptance for a replay", () => {
    const { inbox } = Inbox.open(path, silentLogger);
    inbox.accept(msg("a"), "group:telegram:1", "Earlier in this chat: …");
    expect(Inbox.open(path, silentLogger).pending[0]!.preface).toBe("Earlier in this chat: …");
  });
});
