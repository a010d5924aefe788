// Telegram messages → InboundMessage: the addressed rules, commands, captions, topics, senders.
import type { Message } from "grammy/types";
import { describe, expect, it } from "vitest";
import { normalizeMessage, unsupportedReply, type InboundRules } from "../../../src/channels/telegram/inbound.ts";
import { entitiesOf } from "../../support/telegram-emulator.ts";

const BOT = { id: 666, username: "HearthBot" };
const rules = (extra: Partial<InboundRules> = {}): InboundRules => ({ me: BOT, ownerIds: ["100"], namePattern: null, ...extra });

const ann = { id: 100, is_bot: false, first_name: "Ann", last_name: "Lee", username: "annlee" };
const bob = { id: 200, is_bot: false, first_name: "Bob" };
const dmChat = (user: { id: number; first_name: string }) => ({ id: user.id, type: "private" as const, first_name: user.first_name });
const group = { id: -1001, type: "supergroup" as const, title: "Family" };
const forum = { id: -1002, type: "supergroup" as const, title: "Club", is_forum: true as const };

let nextId = 10;
function msg(fields: Record<string, unknown>): Message {
  const text = fields.text as string | undefined;
  const entities = text !== undefined && !("entities" in fields) ? entitiesOf(text) : undefined;
  return { message_id: nextId++, date: 1_800_000_000, chat: group, from: bob, ...(entities?.length ? { entities } : {}), ...fields } as unknown as Message;
}

function inbound(m: Message, r: InboundRules = rules()) {
  const result = normalizeMessage(m, r);
  if (result.type !== "message") throw new Error(`expected a message, got ${JSON.stringify(result)}`);
  return result.message;
}

describe("telegram inbound normalisation", () => {
  it("describes a DM: chat, sender, owner flag, id scoped by bot and chat, raw reply data, time in ms", () => {
    const m = inbound(msg({ message_id: 5, chat: dmChat(ann), from: ann, text: "hello" }));
    expect(m).toEqual({
      id: "666:100:5",
      channel: "telegram",
      chat: { id: "100", type: "dm", members: ["100"] },
      sender: { id: "100", name: "Ann Lee", isOwner: true },
      text: "hello",
      addressed: true,
      receivedAt: 1_800_000_000_000,
      raw: { chatId: 100, messageId: 5, group: false },
    });
    expect(JSON.parse(JSON.stringify(m.raw))).toEqual(m.raw);
  });

  it("names a sender by first + last name, else username, else id; only ownerIds are owners", () => {
    expect(inbound(msg({ from: { id: 7, is_bot: false, first_name: "", username: "zed" }, text: "@HearthBot hi" })).sender).toEqual({ id: "7", name: "zed", isOwner: false });
    expect(inbound(msg({ from: bob, text: "@HearthBot hi" })).sender).toEqual({ id: "200", name: "Bob", isOwner: false });
  });

  it("a group message without mention, reply or name is delivered unaddressed (the gateway keeps it as context)", () => {
    const m = inbound(msg({ text: "what time is dinner?" }));
    expect(m.addressed).toBe(false);
    expect(m.chat).toEqual({ id: "-1001", type: "group", title: "Family" });
    expect(m.raw).toEqual({ chatId: -1001, messageId: expect.any(Number), group: true });
  });

  it("an @mention entity of the bot addresses it, case-insensitively; other mentions and mere text do not", () => {
    expect(inbound(msg({ text: "hey @hearthbot what's up" })).addressed).toBe(true);
    expect(inbound(msg({ text: "hey @SomeoneElse" })).addressed).toBe(false);
    // No entity: Telegram did not see a mention (e.g. inside code), so neither do we.
    expect(inbound(msg({ text: "`@HearthBot` is its name", entities: [{ type: "code", offset: 0, length: 12 }] })).addressed).toBe(false);
  });

  it("a text_mention of the bot's user id addresses it", () => {
    const m = msg({ text: "Hearth, help", entities: [{ type: "text_mention", offset: 0, length: 6, user: { id: 666, is_bot: true, first_name: "Hearth" } }] });
    expect(inbound(m).addressed).toBe(true);
  });

  it("a mention in a caption addresses the bot; the caption is the text", () => {
    const m = inbound(msg({ photo: [{ file_id: "f", file_unique_id: "u", width: 1, height: 1 }], caption: "@HearthBot look", caption_entities: entitiesOf("@HearthBot look") }));
    expect(m.text).toBe("@HearthBot look");
    expect(m.addressed).toBe(true);
  });

  it("a reply to the bot's message addresses it and carries replyTo; a reply to someone else does not", () => {
    const toBot = inbound(msg({ text: "and tomorrow?", reply_to_message: { message_id: 3, date: 1, chat: group, from: { id: 666, is_bot: true, first_name: "Hearth" }, text: "Sunny." } }));
    expect(toBot.addressed).toBe(true);
    expect(toBot.replyTo).toEqual({ id: "-1001:3", text: "Sunny.", fromBot: true });
    const toBob = inbound(msg({ text: "agreed", reply_to_message: { message_id: 4, date: 1, chat: group, from: bob, text: "pizza?" } }));
    expect(toBob.addressed).toBe(false);
    expect(toBob.replyTo).toEqual({ id: "-1001:4", text: "pizza?", fromBot: false });
  });

  it("the name pattern addresses the bot", () => {
    const r = rules({ namePattern: /\bhearth\b/i });
    expect(inbound(msg({ text: "Hearth, what's the plan?" }), r).addressed).toBe(true);
    expect(inbound(msg({ text: "hearthstone tonight?" }), r).addressed).toBe(false);
  });

  it("commands: /cmd@OurBot is normalised to /cmd and addressed; a bare /cmd is addressed in groups too", () => {
    const own = inbound(msg({ text: "/queue@HearthBot collect" }));
    expect(own.text).toBe("/queue collect");
    expect(own.addressed).toBe(true);
    expect(inbound(msg({ text: "/stop@hearthbot" })).text).toBe("/stop");
    const bare = inbound(msg({ text: "/status" }));
    expect(bare).toMatchObject({ text: "/status", addressed: true });
    expect(inbound(msg({ chat: dmChat(ann), from: ann, text: "/new@HearthBot" })).text).toBe("/new");
  });

  it("a command for another bot is ignored, so the gateway never runs it as ours", () => {
    expect(normalizeMessage(msg({ text: "/stop@OtherBot" }), rules())).toEqual({ type: "ignored", reason: "command for @OtherBot" });
  });

  it("a slash that is not a command stays text", () => {
    const m = inbound(msg({ text: "/home/ann is full @HearthBot" }));
    expect(m.text).toBe("/home/ann is full @HearthBot");
  });

  it("a forum topic's message_thread_id becomes chat.threadId and goes into raw; the topic's root is not a reply", () => {
    const m = inbound(
      msg({
        chat: forum,
        text: "@HearthBot hi",
        message_thread_id: 42,
        is_topic_message: true,
        reply_to_message: { message_id: 42, date: 1, chat: forum, from: { id: 666, is_bot: true, first_name: "Hearth" }, forum_topic_created: { name: "Trips", icon_color: 1 } },
      }),
    );
    expect(m.chat.threadId).toBe("42");
    expect(m.raw).toMatchObject({ threadId: 42, group: true });
    expect(m.replyTo).toBeUndefined();
  });

  it("a plain reply thread in a non-forum supergroup is not a topic", () => {
    const m = inbound(msg({ text: "@HearthBot hi", message_thread_id: 9, reply_to_message: { message_id: 9, date: 1, chat: group, from: bob, text: "x" } }));
    expect(m.chat.threadId).toBeUndefined();
  });

  it("a photo, document or voice note without a caption is a message with no text and its file; addressed in a group only as a reply to the bot", () => {
    const photo = normalizeMessage(msg({ chat: dmChat(bob), photo: [{ file_id: "small", file_unique_id: "u", width: 1, height: 1, file_size: 10 }, { file_id: "f", file_unique_id: "u2", width: 9, height: 9, file_size: 90 }] }), rules());
    expect(photo).toEqual({ type: "message", message: expect.objectContaining({ text: "", addressed: true }), files: [{ fileId: "f", kind: "image", name: "photo.jpg", mime: "image/jpeg", size: 90 }] });
    expect(photo.type === "message" && photo.message.unreadableNote).toBeUndefined();
    expect(normalizeMessage(msg({ sticker: { file_id: "s" } }), rules())).toMatchObject({ message: { unreadableNote: unsupportedReply("sticker"), addressed: false } });
    const voiceToBot = normalizeMessage(msg({ voice: { file_id: "v", duration: 2 }, reply_to_message: { message_id: 3, date: 1, chat: group, from: { id: 666, is_bot: true, first_name: "H" } } }), rules());
    expect(voiceToBot).toMatchObject({ message: { addressed: true }, files: [{ fileId: "v", kind: "audio", name: "voice.ogg", mime: "audio/ogg" }] });
    expect(normalizeMessage(msg({ document: { file_id: "d", file_unique_id: "u" } }), rules())).toMatchObject({ files: [{ fileId: "d", kind: "document", name: "file", mime: "" }] });
    expect(normalizeMessage(msg({ video_note: { file_id: "n", file_unique_id: "u", length: 1, duration: 1 } }), rules())).toMatchObject({ files: [{ kind: "video" }] });
  });

  it("a message with text carries no unreadable note", () => {
    expect(inbound(msg({ text: "@HearthBot hi" })).unreadableNote).toBeUndefined();
  });

  it("each unsupported kind has a short polite answer that says what cannot be read", () => {
    expect(unsupportedReply("sticker")).toBe("Nice sticker! I can only read text for now, though.");
    expect(normalizeMessage(msg({ location: { latitude: 1, longitude: 2 } }), rules())).toMatchObject({ message: { unreadableNote: unsupportedReply("location") } });
    for (const kind of ["sticker", "location", "contact", "poll", "other"] as const) {
      expect(unsupportedReply(kind).length).toBeLessThan(120);
    }
  });

  it("service messages, channel posts and the bot's own messages are ignored", () => {
    expect(normalizeMessage(msg({ new_chat_members: [bob] }), rules()).type).toBe("ignored");
    expect(normalizeMessage(msg({ chat: { id: -5, type: "channel", title: "News" }, text: "post" }), rules()).type).toBe("ignored");
    expect(normalizeMessage(msg({ from: { id: 666, is_bot: true, first_name: "H" }, text: "me" }), rules()).type).toBe("ignored");
  });

  it("an anonymous admin (sender_chat) is never the owner", () => {
    const m = inbound(msg({ from: { id: 100, is_bot: false, first_name: "Group" }, sender_chat: group, text: "@HearthBot hi" }));
    expect(m.sender).toEqual({ id: "-1001", name: "Family", isOwner: false });
  });
});
