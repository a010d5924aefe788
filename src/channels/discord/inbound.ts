// A Discord message → Hearth's InboundMessage (DESIGN §3, §4, §8). Two steps: `factsOf` reads
// what matters from a discord.js Message (the only part that knows discord.js), and
// `normalizeMessage` decides everything else as a pure function of those facts, so the rules
// (who is addressed, what the session ids are, how the text is cleaned) are tested without a
// client.
//
// Ids follow the gateway's session keys: a guild channel is `chat.id` = the channel; a thread
// is `chat.id` = its parent channel and `chat.threadId` = the thread, so each thread is its own
// session (`group:discord:<parent>:<thread>`); `scopeIds` carry the guild (and the thread) for
// the guild allowlist. A DM is `chat.id` = the DM channel, the bot and one person for good; a
// group DM (or a DM between two people where someone used the bot's command) is a group.
import { ChannelType, MessageFlags, type Message } from "discord.js";
import type { InboundMessage } from "../channel.ts";
import { printable } from "../printable.ts";
import { unsupportedReply, type UnsupportedKind } from "../unsupported.ts";

/** What the channel keeps in `InboundMessage.raw`: enough to answer from ids alone (a replay after a restart). */
export interface DiscordReplyRef {
  /** The channel to post in: the DM channel, the guild channel, or the thread itself. */
  channelId: string;
  /** The message to reply to. */
  messageId: string;
}

/** Where a message was posted. */
export type DiscordPlace =
  /** The bot's DM with one person (`with`), who alone can read it. */
  | { kind: "dm"; channelId: string; with: string }
  /** A DM channel with more than the bot and one person (a group DM), or one the bot is not a member of. */
  | { kind: "group-dm"; channelId: string; title?: string }
  | { kind: "channel"; guildId: string; channelId: string; title?: string }
  | { kind: "thread"; guildId: string; channelId: string; parentId: string; title?: string };

/** The parts of a Discord message Hearth looks at, close to Discord's own fields. */
export interface DiscordMessageFacts {
  id: string;
  content: string;
  createdAt: number;
  author: { id: string; name: string; bot: boolean };
  place: DiscordPlace;
  /** `users` are user mentions (from Discord's `mentions`); roles and @everyone never address the bot. */
  mentions: { users: Array<{ id: string; name: string }>; roleIds: string[]; everyone: boolean };
  /** The message this one replies to; `authorId` absent when Discord did not include it. */
  reference?: { messageId: string; authorId?: string; content?: string };
  /** Files on the message, as Discord states them (`size` in bytes); fetched later, only for an accepted message. */
  /** `durationSeconds`: a voice message's length as Discord states it. */
  attachments: Array<{ name: string; url: string; contentType?: string; size?: number; durationSeconds?: number }>;
  /** A voice message (Discord's IS_VOICE_MESSAGE flag): its one attachment is the recording. */
  voice: boolean;
  /** Content Hearth cannot read in any form (a sticker, a poll); absent for text and files. */
  unsupported?: UnsupportedKind;
  /** A system message (member joined, thread created, pin…): never an instruction. */
  system: boolean;
}

export interface DiscordInboundRules {
  bot: { id: string; name: string };
  ownerIds: readonly string[];
  /** Matched (case-insensitively) against the cleaned text; null when unset. */
  namePattern: RegExp | null;
}

export type NormalizeResult = { kind: "inbound"; message: InboundMessage } | { kind: "ignored"; reason: string };

const REPLY_TEXT_LIMIT = 500;

export function normalizeMessage(facts: DiscordMessageFacts, rules: DiscordInboundRules): NormalizeResult {
  if (facts.author.id === rules.bot.id) return { kind: "ignored", reason: "own message" };
  if (facts.author.bot) return { kind: "ignored", reason: "from a bot" };
  if (facts.system) return { kind: "ignored", reason: "system message" };

  const text = cleanText(facts.content, facts.mentions.users, rules.bot);
  // A picture or a voice message alone is still a message; its files travel as attachments.
  const unreadable = !text && facts.attachments.length === 0;
  if (unreadable && !facts.unsupported) return { kind: "ignored", reason: "no text" };

  const mentioned = facts.mentions.users.some((u) => u.id === rules.bot.id);
  const repliesToBot = facts.reference?.authorId === rules.bot.id;
  const named = rules.namePattern !== null && rules.namePattern.test(text);
  const place = facts.place;
  const ref: DiscordReplyRef = { channelId: place.channelId, messageId: facts.id };

  const message: InboundMessage = {
    id: facts.id,
    channel: "discord",
    chat: chatOf(place),
    sender: { id: facts.author.id, name: printable(facts.author.name), isOwner: rules.ownerIds.includes(facts.author.id) },
    text,
    addressed: place.kind === "dm" || mentioned || repliesToBot || named,
    receivedAt: facts.createdAt,
    raw: ref,
    // Whether anyone gets the note is the gateway's decision, like for any other message.
    ...(unreadable && facts.unsupported ? { unreadableNote: unsupportedReply(facts.unsupported) } : {}),
  };
  if (facts.reference) {
    const quoted = facts.reference.content?.trim();
    message.replyTo = {
      id: facts.reference.messageId,
      fromBot: repliesToBot,
      ...(quoted ? { text: quoted.slice(0, REPLY_TEXT_LIMIT) } : {}),
    };
  }
  return { kind: "inbound", message };
}

export function chatOf(place: DiscordPlace): InboundMessage["chat"] {
  switch (place.kind) {
    case "dm":
      return { id: place.channelId, type: "dm", members: [place.with] };
    case "group-dm":
      return { id: place.channelId, type: "group", members: "unknown", ...(place.title ? { title: printable(place.title) } : {}) };
    case "channel":
      return { id: place.channelId, type: "group", scopeIds: [place.guildId], ...(place.title ? { title: printable(place.title) } : {}) };
    case "thread":
      return {
        id: place.parentId,
        type: "group",
        threadId: place.channelId,
        // The thread itself may be allowlisted too.
        scopeIds: [place.guildId, place.channelId],
        ...(place.title ? { title: printable(place.title) } : {}),
      };
    default:
      return place satisfies never;
  }
}

/**
 * The text as the model should read it. The bot's own mention is dropped where it only calls
 * the bot (at the start or the end: "@Hearth /stop" → "/stop") and becomes "@Name" mid-sentence;
 * other user mentions become "@name".
 */
export function cleanText(content: string, mentioned: ReadonlyArray<{ id: string; name: string }>, bot: { id: string; name: string }): string {
  const self = `<@!?${bot.id}>`;
  let text = content.trim();
  text = text.replace(new RegExp(`^(?:${self}[\\s,:;.!]*)+`), "");
  text = text.replace(new RegExp(`(?:[\\s,]*${self})+[\\s.!?]*$`), "");
  text = text.replace(new RegExp(self, "g"), `@${bot.name}`);
  text = text.replace(/<@!?(\d+)>/g, (whole, id: string) => {
    const user = mentioned.find((u) => u.id === id);
    return user ? `@${printable(user.name)}` : whole;
  });
  return text.trim();
}

/**
 * The kind of a Discord attachment, from its content type; a voice message's recording is audio
 * whatever type it states. An unknown type is a document: the gateway reads its bytes and says
 * clearly when it cannot use them.
 */
export function attachmentKind(contentType: string | undefined, voice = false): "image" | "document" | "audio" | "video" {
  if (voice) return "audio";
  const t = contentType ?? "";
  if (t.startsWith("image/")) return "image";
  if (t.startsWith("audio/")) return "audio";
  if (t.startsWith("video/")) return "video";
  return "document";
}

/** Reads the facts from a discord.js message. Works with partial (uncached) DM channels. */
export function factsOf(message: Message): DiscordMessageFacts {
  const channel = message.channel;
  let place: DiscordPlace;
  if (!message.inGuild()) {
    const name = channel.type === ChannelType.GroupDM ? channel.name : null;
    place = channel.type === ChannelType.GroupDM ? { kind: "group-dm", channelId: message.channelId, ...(name ? { title: name } : {}) } : { kind: "dm", channelId: message.channelId, with: message.author.id };
  } else if (channel.isThread()) {
    const parent = channel.parent;
    const title = [message.guild.name, parent ? `#${parent.name}` : undefined, channel.name].filter(Boolean).join(" › ");
    place = { kind: "thread", guildId: message.guildId, channelId: channel.id, parentId: channel.parentId ?? channel.id, title };
  } else {
    const name = "name" in channel && typeof channel.name === "string" ? ` › #${channel.name}` : "";
    place = { kind: "channel", guildId: message.guildId, channelId: message.channelId, title: `${message.guild.name}${name}` };
  }

  const members = message.mentions.members;
  const reference = message.reference?.messageId
    ? {
        messageId: message.reference.messageId,
        ...(message.mentions.repliedUser ? { authorId: message.mentions.repliedUser.id } : {}),
        ...contentOf(message, message.reference.messageId),
      }
    : undefined;

  return {
    id: message.id,
    content: message.content,
    createdAt: message.createdTimestamp,
    author: { id: message.author.id, name: message.member?.displayName ?? message.author.displayName, bot: message.author.bot },
    place,
    mentions: {
      users: message.mentions.users.map((u) => ({ id: u.id, name: members?.get(u.id)?.displayName ?? u.displayName })),
      roleIds: [...message.mentions.roles.keys()],
      everyone: message.mentions.everyone,
    },
    ...(reference ? { reference } : {}),
    attachments: message.attachments.map((a) => ({
      name: a.name,
      url: a.url,
      ...(a.contentType ? { contentType: a.contentType } : {}),
      size: a.size,
      ...(typeof a.duration === "number" && Number.isFinite(a.duration) && a.duration >= 0 ? { durationSeconds: a.duration } : {}),
    })),
    voice: message.flags.has(MessageFlags.IsVoiceMessage),
    ...(message.stickers.size > 0 ? { unsupported: "sticker" as const } : message.poll ? { unsupported: "poll" as const } : {}),
    system: message.system,
  };
}

/** The replied-to message's text, when discord.js has it (Discord sends it with the reply). */
function contentOf(message: Message, id: string): { content?: string } {
  const replied = message.channel.messages.cache.get(id);
  return replied?.content ? { content: replied.content } : {};
}
