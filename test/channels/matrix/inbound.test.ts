// How a Matrix room event becomes an InboundMessage: who addressed the bot (a DM, m.mentions, its
// name, a reply to it), threads, files and captions, and what is not a message (edits, the bot's own).
import { describe, expect, it } from "vitest";
import { normalizeEvent, type MatrixEventFacts, type MatrixInboundRules } from "../../../src/channels/matrix/inbound.ts";

const rules: MatrixInboundRules = { bot: { userId: "@hearth:example.org", name: "Hearth" }, ownerIds: ["@ann:example.org"], namePattern: null };
const facts = (over: Partial<MatrixEventFacts> & { content: Record<string, any> }): MatrixEventFacts => ({
  eventId: "$e1",
  roomId: "!room:example.org",
  roomName: "Family",
  sender: "@bob:example.org",
  senderName: "Bob",
  type: "m.room.message",
  ts: 1,
  direct: false,
  members: ["@bob:example.org", "@ann:example.org"],
  repliedToSender: undefined,
  ...over,
});
const message = (f: MatrixEventFacts) => {
  const r = normalizeEvent(f, rules);
  if (r.kind !== "message") throw new Error(`ignored: ${r.reason}`);
  return r;
};

describe("Matrix inbound", () => {
  it("a room message is addressed by m.mentions, by the bot's name or by a reply to the bot, and not otherwise", () => {
    expect(message(facts({ content: { msgtype: "m.text", body: "pizza tonight?" } })).message.addressed).toBe(false);
    expect(message(facts({ content: { msgtype: "m.text", body: "pizza?", "m.mentions": { user_ids: ["@hearth:example.org"] } } })).message.addressed).toBe(true);
    expect(message(facts({ content: { msgtype: "m.text", body: "Hearth, pizza?" } })).message.addressed).toBe(true);
    expect(message(facts({ content: { msgtype: "m.text", body: "the hearthstone game" } })).message.addressed).toBe(false);
    const reply = message(facts({ repliedToSender: "@hearth:example.org", content: { msgtype: "m.text", body: "> <@hearth:example.org> Pizza.\n\nyes please", "m.relates_to": { "m.in_reply_to": { event_id: "$bot" } } } }));
    expect(reply.message).toMatchObject({ addressed: true, text: "yes please", replyTo: { id: "$bot", fromBot: true } });
  });

  it("a direct chat is the sender's DM, the owner known by id; a thread is a conversation of its own", () => {
    // A direct room reports who is in it; whether that is still private is the gateway's call.
    const three = message(facts({ direct: true, sender: "@ann:example.org", content: { msgtype: "m.text", body: "hi" } }));
    expect(three.message.chat).toMatchObject({ type: "dm", members: ["@bob:example.org", "@ann:example.org"] });
    const dm = message(facts({ direct: true, members: ["@ann:example.org"], sender: "@ann:example.org", senderName: "Ann", content: { msgtype: "m.text", body: "hi" } }));
    expect(dm.message).toMatchObject({ chat: { id: "!room:example.org", type: "dm", members: ["@ann:example.org"] }, sender: { id: "@ann:example.org", isOwner: true }, addressed: true });
    const inThread = message(facts({ content: { msgtype: "m.text", body: "hearth?", "m.relates_to": { rel_type: "m.thread", event_id: "$root", is_falling_back: true, "m.in_reply_to": { event_id: "$last" } } } }));
    expect(inThread.message.chat).toMatchObject({ type: "group", threadId: "$root" });
    expect(inThread.message.replyTo).toBeUndefined();
    expect(inThread.message.raw).toEqual({ roomId: "!room:example.org", eventId: "$e1", threadId: "$root" });
  });

  it("a file comes with its caption (MSC2530) and, encrypted, with its key; edits and the bot's own messages are not messages", () => {
    const photo = message(facts({ content: { msgtype: "m.image", body: "look at this", filename: "cat.jpg", url: "mxc://example.org/abc", info: { mimetype: "image/jpeg", size: 10 } } }));
    expect(photo.message.text).toBe("look at this");
    expect(photo.file).toMatchObject({ kind: "image", name: "cat.jpg", mime: "image/jpeg", size: 10, url: "mxc://example.org/abc" });
    const sealed = message(facts({ content: { msgtype: "m.file", body: "report.pdf", file: { url: "mxc://example.org/x", key: { k: "k" }, iv: "iv", hashes: { sha256: "h" } }, info: { mimetype: "application/pdf" } } }));
    expect(sealed.message.text).toBe("");
    expect(sealed.file).toMatchObject({ kind: "document", name: "report.pdf", file: { url: "mxc://example.org/x" } });
    expect(normalizeEvent(facts({ content: { msgtype: "m.text", body: "* fixed", "m.relates_to": { rel_type: "m.replace", event_id: "$e0" } } }), rules)).toEqual({ kind: "ignored", reason: "an edit" });
    expect(normalizeEvent(facts({ sender: "@hearth:example.org", content: { msgtype: "m.text", body: "me" } }), rules)).toEqual({ kind: "ignored", reason: "own message" });
  });
});
