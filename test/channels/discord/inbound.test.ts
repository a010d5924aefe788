// Discord message normalisation: who is addressed, which ids the gateway gets, what text the
// model reads. Pure functions over the message facts (factsOf is exercised against real
// discord.js in channel.test.ts).
import { describe, expect, it } from "vitest";
import { attachmentKind, cleanText, normalizeMessage, type DiscordInboundRules, type DiscordMessageFacts, type NormalizeResult } from "../../../src/channels/discord/inbound.ts";

const BOT = { id: "900", name: "Hearth" };
const OWNER = "100";
const ALICE = { id: "200", name: "alice" };
const GUILD = "500";
const GENERAL = "600";
const THREAD = "700";
const DM = "800";

const rules = (over: Partial<DiscordInboundRules> = {}): DiscordInboundRules => ({ bot: BOT, ownerIds: [OWNER], namePattern: null, ...over });

function facts(over: Partial<DiscordMessageFacts> = {}): DiscordMessageFacts {
  return {
    id: "1001",
    content: "hello there",
    createdAt: 1_700_000_000_000,
    author: { id: ALICE.id, name: ALICE.name, bot: false },
    place: { kind: "channel", guildId: GUILD, channelId: GENERAL, title: "Lab › #general" },
    mentions: { users: [], roleIds: [], everyone: false },
    attachments: [],
    voice: false,
    system: false,
    ...over,
  };
}

const mentioningBot = { users: [BOT], roleIds: [], everyone: false };

function inbound(result: NormalizeResult) {
  if (result.kind !== "inbound") throw new Error(`expected an inbound message, got ignored: ${result.reason}`);
  return result.message;
}

describe("normalizeMessage: addressing", () => {
  it("a guild message without a mention is not addressed (the gateway only observes it)", () => {
    const m = inbound(normalizeMessage(facts(), rules()));
    expect(m.addressed).toBe(false);
    expect(m.text).toBe("hello there");
  });

  it("a user mention of the bot addresses it", () => {
    const m = inbound(normalizeMessage(facts({ content: `<@${BOT.id}> hello`, mentions: mentioningBot }), rules()));
    expect(m.addressed).toBe(true);
  });

  it("role mentions (even the bot's own role) and @everyone do not address it", () => {
    const m = inbound(
      normalizeMessage(facts({ content: "<@&555> @everyone standup in 5", mentions: { users: [], roleIds: ["555"], everyone: true } }), rules()),
    );
    expect(m.addressed).toBe(false);
  });

  it("the bot's id written as text without a Discord mention does not address it", () => {
    // Discord decides what a mention is; content alone (e.g. an escaped mention) is not one.
    const m = inbound(normalizeMessage(facts({ content: `\\<@${BOT.id}> is the bot's id` }), rules()));
    expect(m.addressed).toBe(false);
  });

  it("a reply to one of the bot's messages addresses it and says so", () => {
    const m = inbound(normalizeMessage(facts({ content: "and tomorrow?", reference: { messageId: "990", authorId: BOT.id, content: "Sunny today." } }), rules()));
    expect(m.addressed).toBe(true);
    expect(m.replyTo).toEqual({ id: "990", fromBot: true, text: "Sunny today." });
  });

  it("a reply to someone else does not address it", () => {
    const m = inbound(normalizeMessage(facts({ reference: { messageId: "991", authorId: ALICE.id } }), rules()));
    expect(m.addressed).toBe(false);
    expect(m.replyTo).toEqual({ id: "991", fromBot: false });
  });

  it("the configured name pattern addresses it, case-insensitively", () => {
    const pattern = new RegExp("^hearth\\b", "i");
    expect(inbound(normalizeMessage(facts({ content: "HEARTH, what's on today?" }), rules({ namePattern: pattern }))).addressed).toBe(true);
    expect(inbound(normalizeMessage(facts({ content: "the hearth is warm" }), rules({ namePattern: pattern }))).addressed).toBe(false);
    expect(inbound(normalizeMessage(facts({ content: "hearth, hi" }), rules())).addressed).toBe(false);
  });

  it("a DM is always addressed", () => {
    const m = inbound(normalizeMessage(facts({ place: { kind: "dm", channelId: DM, with: ALICE.id } }), rules()));
    expect(m.addressed).toBe(true);
  });
});

describe("normalizeMessage: ids and sessions", () => {
  it("a guild channel: chat.id is the channel, the guild is a scope id for the allowlist", () => {
    const m = inbound(normalizeMessage(facts(), rules()));
    expect(m).toMatchObject({ id: "1001", channel: "discord", receivedAt: 1_700_000_000_000 });
    expect(m.chat).toEqual({ id: GENERAL, type: "group", scopeIds: [GUILD], title: "Lab › #general" });
    expect(m.raw).toEqual({ channelId: GENERAL, messageId: "1001" });
  });

  it("a thread: chat.id is the parent, threadId the thread (its own session); replies go to the thread", () => {
    const m = inbound(normalizeMessage(facts({ place: { kind: "thread", guildId: GUILD, channelId: THREAD, parentId: GENERAL, title: "Lab › #general › plans" } }), rules()));
    expect(m.chat).toEqual({ id: GENERAL, type: "group", threadId: THREAD, scopeIds: [GUILD, THREAD], title: "Lab › #general › plans" });
    expect(m.raw).toEqual({ channelId: THREAD, messageId: "1001" });
  });

  it("a DM: chat.id is the DM channel", () => {
    const m = inbound(normalizeMessage(facts({ place: { kind: "dm", channelId: DM, with: ALICE.id } }), rules()));
    expect(m.chat).toEqual({ id: DM, type: "dm", members: [ALICE.id] });
    expect(m.raw).toEqual({ channelId: DM, messageId: "1001" });
  });

  it("a group DM is a group, whoever is in it, and needs a mention like any group", () => {
    const m = inbound(normalizeMessage(facts({ place: { kind: "group-dm", channelId: DM, title: "Trip" } }), rules()));
    expect(m.chat).toEqual({ id: DM, type: "group", members: "unknown", title: "Trip" });
    expect(m.addressed).toBe(false);
  });

  it("the sender is the owner exactly when listed in ownerIds", () => {
    expect(inbound(normalizeMessage(facts(), rules())).sender).toEqual({ id: ALICE.id, name: "alice", isOwner: false });
    const owner = normalizeMessage(facts({ author: { id: OWNER, name: "boss", bot: false } }), rules());
    expect(inbound(owner).sender).toEqual({ id: OWNER, name: "boss", isOwner: true });
  });
});

describe("normalizeMessage: what is ignored", () => {
  it("the bot's own messages (Discord echoes them back)", () => {
    expect(normalizeMessage(facts({ author: { id: BOT.id, name: "Hearth", bot: true } }), rules())).toEqual({ kind: "ignored", reason: "own message" });
  });

  it("other bots, even when they mention the bot", () => {
    const r = normalizeMessage(facts({ author: { id: "300", name: "otherbot", bot: true }, content: `<@${BOT.id}> hi`, mentions: mentioningBot }), rules());
    expect(r).toEqual({ kind: "ignored", reason: "from a bot" });
  });

  it("system messages", () => {
    expect(normalizeMessage(facts({ system: true }), rules()).kind).toBe("ignored");
  });

  it("a message that is nothing but the bot's mention", () => {
    expect(normalizeMessage(facts({ content: `<@${BOT.id}>`, mentions: mentioningBot }), rules())).toEqual({ kind: "ignored", reason: "no text" });
  });
});

describe("text cleanup", () => {
  it("drops the bot's mention in front, so '@Hearth /stop' is the command /stop", () => {
    expect(inbound(normalizeMessage(facts({ content: `<@${BOT.id}> /stop`, mentions: mentioningBot }), rules())).text).toBe("/stop");
    expect(cleanText(`<@!${BOT.id}>, /queue collect`, [], BOT)).toBe("/queue collect");
    expect(cleanText(`<@${BOT.id}> <@${BOT.id}> hi`, [], BOT)).toBe("hi");
  });

  it("drops it at the end and names it mid-sentence", () => {
    expect(cleanText(`thanks <@${BOT.id}>!`, [], BOT)).toBe("thanks");
    expect(cleanText(`ask <@${BOT.id}> about it later`, [], BOT)).toBe("ask @Hearth about it later");
  });

  it("names other mentioned users; leaves unknown mentions and roles as written", () => {
    expect(cleanText(`<@${BOT.id}> remind <@${ALICE.id}> and <@!${ALICE.id}> about <@&555> <@42>`, [ALICE], BOT)).toBe("remind @alice and @alice about <@&555> <@42>");
  });

  it("keeps markdown and line breaks", () => {
    const content = `<@${BOT.id}> fix this:\n\`\`\`ts\nconst a = 1;\n\`\`\``;
    expect(cleanText(content, [], BOT)).toBe("fix this:\n```ts\nconst a = 1;\n```");
  });

  it("an image alone is still a message, and attachments never add text (no file URL reaches the model)", () => {
    const cat = { name: "cat.png", url: "https://cdn.discordapp.com/attachments/1/2/cat.png" };
    const alone = inbound(normalizeMessage(facts({ content: "", attachments: [cat], place: { kind: "dm", channelId: DM, with: ALICE.id } }), rules()));
    expect(alone.text).toBe("");
    const captioned = inbound(normalizeMessage(facts({ content: "look", attachments: [cat], place: { kind: "dm", channelId: DM, with: ALICE.id } }), rules()));
    expect(captioned.text).toBe("look");
    expect(normalizeMessage(facts({ content: "  ", place: { kind: "dm", channelId: DM, with: ALICE.id } }), rules())).toEqual({ kind: "ignored", reason: "no text" });
  });

  it("a sticker or a poll alone is a message with the unsupported note (the gateway answers it without a model call)", () => {
    const sticker = inbound(normalizeMessage(facts({ content: "", unsupported: "sticker", place: { kind: "dm", channelId: DM, with: ALICE.id } }), rules()));
    expect([sticker.text, sticker.unreadableNote, sticker.addressed]).toEqual(["", "Nice sticker! I can only read text for now, though.", true]);
    const poll = inbound(normalizeMessage(facts({ content: "", unsupported: "poll" }), rules()));
    expect([poll.unreadableNote, poll.addressed]).toEqual(["I can't read polls yet, sorry. Could you write the question as a message?", false]);
    expect(inbound(normalizeMessage(facts({ content: "hi", unsupported: "sticker" }), rules())).unreadableNote).toBeUndefined();
  });

  it("a voice message's recording is audio whatever content type it states", () => {
    expect([attachmentKind("audio/ogg"), attachmentKind(undefined, true), attachmentKind("application/octet-stream", true), attachmentKind(undefined)]).toEqual([
      "audio",
      "audio",
      "audio",
      "document",
    ]);
  });
});
