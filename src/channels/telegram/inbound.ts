// A Telegram message → Hearth's InboundMessage (DESIGN §3, §8): who wrote it, where, whether it
// was addressed to the bot, and what the channel needs later to answer it. Pure: no I/O, so
// every rule here is tested with plain objects.
//
// Access is not decided here (the gateway does that); this file only describes the message
// truthfully, including `addressed` for group messages that the gateway keeps as context.
import type { Message, MessageEntity } from "grammy/types";
import type { InboundMessage } from "../channel.ts";
import { printable } from "../printable.ts";
import { unsupportedReply, type UnsupportedKind } from "../unsupported.ts";

/** What a reply needs to find its way back; JSON-serialisable (the inbox persists it). */
export interface TelegramRaw {
  chatId: number;
  messageId: number;
  /** A forum topic (or a private-chat topic): replies go into it. */
  threadId?: number;
  /** Group replies quote the message that triggered them. */
  group: boolean;
}

export interface InboundRules {
  /** The bot itself, from getMe. */
  me: { id: number; username: string };
  ownerIds: readonly string[];
  /** channels.telegram.namePattern, compiled (case-insensitive). */
  namePattern: RegExp | null;
}

export { unsupportedReply } from "../unsupported.ts";

/** A file of the message, described; the channel adds the download (getFile + the file route). */
export interface TelegramFile {
  fileId: string;
  kind: "image" | "document" | "audio" | "video";
  name: string;
  mime: string;
  size?: number;
  /** A voice note's or audio file's stated length in seconds. */
  durationSeconds?: number;
}

export type NormalizedMessage =
  | { type: "message"; message: InboundMessage; files: TelegramFile[]; mediaGroupId?: string }
  | { type: "ignored"; reason: string };

/** Telegram's bot download limit: a larger photo size cannot be fetched. */
const DOWNLOAD_LIMIT = 20 * 1024 * 1024;

/** The files the gateway takes in; other media stay unreadable notes. */
export function filesOf(msg: Message): TelegramFile[] {
  const size = (n: number | undefined) => (n === undefined ? {} : { size: n });
  if (msg.photo?.length) {
    // Sizes come smallest first; the largest one Telegram lets a bot download.
    const fitting = msg.photo.filter((p) => (p.file_size ?? 0) <= DOWNLOAD_LIMIT);
    const p = fitting.at(-1) ?? msg.photo.at(-1)!;
    return [{ fileId: p.file_id, kind: "image", name: "photo.jpg", mime: "image/jpeg", ...size(p.file_size) }];
  }
  if (msg.document) {
    const d = msg.document;
    const mime = d.mime_type ?? "";
    return [{ fileId: d.file_id, kind: mime.startsWith("image/") ? "image" : "document", name: d.file_name ?? "file", mime, ...size(d.file_size) }];
  }
  const seconds = (n: number | undefined) => (typeof n === "number" && Number.isFinite(n) && n >= 0 ? { durationSeconds: n } : {});
  if (msg.voice) return [{ fileId: msg.voice.file_id, kind: "audio", name: "voice.ogg", mime: msg.voice.mime_type ?? "audio/ogg", ...size(msg.voice.file_size), ...seconds(msg.voice.duration) }];
  if (msg.audio) return [{ fileId: msg.audio.file_id, kind: "audio", name: msg.audio.file_name ?? "audio", mime: msg.audio.mime_type ?? "", ...size(msg.audio.file_size), ...seconds(msg.audio.duration) }];
  const video = msg.video ?? msg.video_note ?? msg.animation;
  if (video) return [{ fileId: video.file_id, kind: "video", name: "video.mp4", mime: "video/mp4", ...size(video.file_size) }];
  return [];
}

/**
 * Content that is neither text nor a file (filesOf takes photos, documents, audio and videos),
 * checked in order; the first key present names the kind. Captioned media count as text.
 */
const MEDIA: ReadonlyArray<[keyof Message, UnsupportedKind]> = [
  ["sticker", "sticker"],
  ["location", "location"],
  ["venue", "location"],
  ["contact", "contact"],
  ["poll", "poll"],
  ["dice", "other"],
  ["game", "other"],
  ["story", "other"],
  ["paid_media", "other"],
  ["checklist", "other"],
];

/** `/cmd` or `/cmd@SomeBot` at the very start, as Telegram parses bot commands. */
const COMMAND = /^\/([A-Za-z0-9_]{1,64})(?:@([A-Za-z0-9_]+))?(?=\s|$)/;

export function normalizeMessage(msg: Message, rules: InboundRules): NormalizedMessage {
  if (msg.chat.type === "channel") return { type: "ignored", reason: "channel post" };
  const sender = senderOf(msg, rules);
  if (!sender) return { type: "ignored", reason: "no sender" };
  if (sender.id === String(rules.me.id)) return { type: "ignored", reason: "own message" };

  const group = msg.chat.type !== "private";
  const thread = threadOf(msg);
  const chat: InboundMessage["chat"] = {
    id: String(msg.chat.id),
    // A private chat is the bot and its one user for good: Telegram adds nobody to it.
    ...(group ? { type: "group" as const } : { type: "dm" as const, members: [sender.id] }),
    ...(thread !== undefined ? { threadId: String(thread) } : {}),
    ...("title" in msg.chat && msg.chat.title ? { title: printable(msg.chat.title) } : {}),
  };
  const raw: TelegramRaw = { chatId: msg.chat.id, messageId: msg.message_id, ...(thread !== undefined ? { threadId: thread } : {}), group };
  const reply = replyOf(msg, rules);

  const base = {
    // The dedupe key: message ids count per chat *and bot* (a private chat's id is the user's
    // whichever bot they write to), so after a token change a new bot's first messages carry the
    // ids the old bot's had, and without the bot in the key they were dropped as duplicates.
    id: `${rules.me.id}:${msg.chat.id}:${msg.message_id}`,
    channel: "telegram" as const,
    chat,
    sender,
    ...(reply ? { replyTo: reply } : {}),
    receivedAt: platformTime(msg.date),
    raw,
  };

  const files = filesOf(msg);
  const group_ = msg.media_group_id !== undefined ? { mediaGroupId: msg.media_group_id } : {};
  const body = msg.text ?? msg.caption;
  if ((body === undefined || body.trim() === "") && files.length > 0) {
    return { type: "message", message: { ...base, text: "", addressed: !group || reply?.fromBot === true }, files, ...group_ };
  }
  if (body === undefined || body.trim() === "") {
    const kind = MEDIA.find(([key]) => msg[key] !== undefined)?.[1];
    if (!kind) return { type: "ignored", reason: "service message" };
    // Whether anyone gets the note is the gateway's decision, like for any other message.
    return { type: "message", message: { ...base, text: "", addressed: !group || reply?.fromBot === true, unreadableNote: unsupportedReply(kind) }, files: [] };
  }

  const entities = msg.entities ?? msg.caption_entities ?? [];
  const command = COMMAND.exec(body);
  let text = body;
  let addressedByCommand = false;
  if (command) {
    const target = command[2];
    // A command for another bot in the same group is none of our business: passing it on
    // would let the gateway run it as ours.
    if (target && target.toLowerCase() !== rules.me.username.toLowerCase()) return { type: "ignored", reason: `command for @${target}` };
    text = `/${command[1]}${body.slice(command[0].length)}`;
    addressedByCommand = true;
  }

  const addressed =
    !group ||
    addressedByCommand ||
    mentionsBot(body, entities, rules.me) ||
    reply?.fromBot === true ||
    (rules.namePattern !== null && rules.namePattern.test(body));

  return { type: "message", message: { ...base, text, addressed }, files, ...group_ };
}


function senderOf(msg: Message, rules: InboundRules): InboundMessage["sender"] | undefined {
  if (msg.sender_chat) {
    // An anonymous group admin writing "as the group", or a post from a linked channel: not a
    // person who could be recognised, and never the owner.
    const title = "title" in msg.sender_chat ? msg.sender_chat.title : undefined;
    return { id: String(msg.sender_chat.id), name: title ? printable(title) : "anonymous", isOwner: false };
  }
  const from = msg.from;
  if (!from) return undefined;
  const name = [from.first_name, from.last_name].filter((p) => p && p.trim()).join(" ").trim() || from.username || String(from.id);
  const id = String(from.id);
  return { id, name: printable(name), isOwner: rules.ownerIds.includes(id) };
}

/**
 * A forum topic (or private-chat topic) is its own conversation. Plain reply threads in
 * ordinary supergroups also carry message_thread_id; they are not topics and stay one chat.
 */
function threadOf(msg: Message): number | undefined {
  if (msg.message_thread_id === undefined) return undefined;
  const forum = "is_forum" in msg.chat && msg.chat.is_forum === true;
  return msg.is_topic_message || forum ? msg.message_thread_id : undefined;
}

function replyOf(msg: Message, rules: InboundRules): InboundMessage["replyTo"] | undefined {
  const r = msg.reply_to_message;
  if (!r) return undefined;
  // In a forum every message of a topic "replies" to the topic's creation message: that is
  // not a reply to anyone, least of all to the bot that may have created the topic.
  if (r.forum_topic_created || (msg.is_topic_message && r.message_id === msg.message_thread_id)) return undefined;
  const text = r.text ?? r.caption;
  return { id: `${msg.chat.id}:${r.message_id}`, ...(text !== undefined ? { text } : {}), fromBot: r.from?.id === rules.me.id };
}

function mentionsBot(text: string, entities: readonly MessageEntity[], me: InboundRules["me"]): boolean {
  const handle = `@${me.username}`.toLowerCase();
  return entities.some((e) => {
    if (e.type === "text_mention") return e.user.id === me.id;
    if (e.type !== "mention") return false;
    // Offsets are in UTF-16 code units, like JavaScript string indices.
    return text.slice(e.offset, e.offset + e.length).toLowerCase() === handle;
  });
}

/** Telegram dates are Unix seconds; some emulators send milliseconds. */
function platformTime(date: number): number {
  return date < 1e11 ? date * 1000 : date;
}
