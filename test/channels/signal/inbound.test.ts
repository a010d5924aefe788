// The Signal envelope → InboundMessage rules, and the bounded event-stream parser.
import { describe, expect, it } from "vitest";
import { EventParser } from "../../../src/channels/signal/events.ts";
import { attachmentName, normalizeEnvelope, type SignalEnvelope } from "../../../src/channels/signal/inbound.ts";

const BOT = "+4915100000000";
const OWNER = "+4915111111111";
const rules = { account: BOT, ownerIds: [OWNER], namePattern: null };
const GROUP = Buffer.alloc(32, 1).toString("base64");
const envelope = (data: Record<string, unknown>, from = OWNER): SignalEnvelope => ({ sourceNumber: from, sourceName: "Ann", timestamp: 1700000000000, dataMessage: { timestamp: 1700000000000, ...data } });

describe("Signal inbound", () => {
  it("a private message is the owner's, addressed, named by author and timestamp", () => {
    const r = normalizeEnvelope(envelope({ message: "hello" }), rules);
    expect(r.kind === "inbound" && r.message).toMatchObject({
      id: `${OWNER}:1700000000000`,
      channel: "signal",
      chat: { id: OWNER, type: "dm", members: [OWNER] },
      sender: { id: OWNER, name: "Ann", isOwner: true },
      text: "hello",
      addressed: true,
      raw: { timestamp: 1700000000000, author: OWNER },
    });
  });

  it("in a group: addressed only by a mention of the bot (dropped from the text) or a reply to it; other mentions become @name", () => {
    const plain = normalizeEnvelope(envelope({ message: "pizza?", groupInfo: { groupId: GROUP, groupName: "Family" } }, "+4915222222222"), rules);
    expect(plain.kind === "inbound" && plain.message).toMatchObject({ chat: { id: GROUP, type: "group", title: "Family" }, addressed: false, sender: { isOwner: false } });
    const mentioned = normalizeEnvelope(
      envelope({ message: "\uFFFC ask \uFFFC about it", mentions: [{ number: BOT, start: 0, length: 1 }, { number: "+4915333", name: "Cleo", start: 6, length: 1 }], groupInfo: { groupId: GROUP } }, "+4915222222222"),
      rules,
    );
    expect(mentioned.kind === "inbound" && [mentioned.message.text, mentioned.message.addressed]).toEqual(["ask @Cleo about it", true]);
    const reply = normalizeEnvelope(envelope({ message: "and you?", quote: { id: 42, authorNumber: BOT, text: "Earlier answer" }, groupInfo: { groupId: GROUP } }, "+4915222222222"), rules);
    expect(reply.kind === "inbound" && reply.message).toMatchObject({ addressed: true, replyTo: { id: `${BOT}:42`, fromBot: true, text: "Earlier answer" } });
  });

  it("ignores its own messages, receipts and sync messages, reactions and empty messages; a sticker alone gets the note", () => {
    expect(normalizeEnvelope(envelope({ message: "echo" }, BOT), rules)).toEqual({ kind: "ignored", reason: "own message" });
    expect(normalizeEnvelope({ sourceNumber: OWNER, timestamp: 1 }, rules).kind).toBe("ignored");
    expect(normalizeEnvelope(envelope({ reaction: { emoji: "👍" } }), rules).kind).toBe("ignored");
    expect(normalizeEnvelope(envelope({ message: "" }), rules).kind).toBe("ignored");
    const sticker = normalizeEnvelope(envelope({ sticker: { packId: "x" } }), rules);
    expect(sticker.kind === "inbound" && sticker.message.unreadableNote).toBe("Nice sticker! I can only read text for now, though.");
  });

  it("a voice note is audio with a made-up name; a photo keeps its own", () => {
    const r = normalizeEnvelope(envelope({ attachments: [{ id: "a1", contentType: "audio/aac", voiceNote: true }, { id: "a2", contentType: "image/jpeg", filename: "beach.jpg" }] }), rules);
    expect(r.kind === "inbound" && r.attachments.map(attachmentName)).toEqual(["voice-note.aac", "beach.jpg"]);
  });
});

describe("Signal event stream parser", () => {
  const bytes = (s: string) => new TextEncoder().encode(s);

  it("reads events split anywhere, skips keep-alive comments", () => {
    const p = new EventParser();
    const stream = 'event:receive\ndata:{"a":1}\n\n:\n\nevent:receive\r\ndata: {"b":2}\r\n\r\n';
    const events = [...stream].flatMap((ch) => p.push(bytes(ch)));
    expect(events).toEqual([
      { type: "receive", data: '{"a":1}' },
      { type: "receive", data: '{"b":2}' },
    ]);
  });

  it("refuses an event or a line longer than its bound instead of growing", () => {
    const p = new EventParser();
    expect(() => p.push(bytes(`data:${"x".repeat(1_000_001)}`))).toThrow(/longer than 1000000 bytes/);
    const q = new EventParser();
    q.push(bytes(`data:${"x".repeat(600_000)}\n`));
    expect(() => q.push(bytes(`data:${"x".repeat(600_000)}\n`))).toThrow(/longer than 1000000 bytes/);
  });
});
