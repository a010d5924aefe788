// A signal-cli envelope → Hearth's InboundMessage. `normalizeEnvelope` is a pure function of the
// envelope as signal-cli writes it (its JSON, `receive` events) and the channel's rules, so who is
// addressed, the ids and the text are tested without a daemon.
//
// Ids: a private chat is `chat.id` = the other person's number (their UUID when they hide it); a
// group is `chat.id` = its base64 group id. A message is named by its author and its timestamp,
// which is how Signal itself names a message (quotes, reactions, edits and deletes use the pair).
import type { InboundMessage } from "../channel.ts";
import { printable } from "../printable.ts";
import { unsupportedReply } from "../unsupported.ts";

/** The parts of signal-cli's envelope Hearth reads (its JsonMessageEnvelope). */
export interface SignalEnvelope {
  source?: string;
  sourceNumber?: string | null;
  sourceUuid?: string | null;
  sourceName?: string | null;
  timestamp?: number;
  dataMessage?: SignalDataMessage | null;
}

export interface SignalDataMessage {
  timestamp?: number;
  message?: string | null;
  groupInfo?: { groupId?: string; groupName?: string | null } | null;
  quote?: { id?: number; author?: string | null; authorNumber?: string | null; authorUuid?: string | null; text?: string | null } | null;
  mentions?: Array<{ name?: string | null; number?: string | null; uuid?: string | null; start?: number; length?: number }> | null;
  attachments?: SignalAttachmentFacts[] | null;
  sticker?: unknown;
  reaction?: SignalReaction | null;
  remoteDelete?: unknown;
  contacts?: unknown[] | null;
  pollCreate?: unknown;
}

/** A reaction to a message, which Signal names by its author and timestamp. */
export interface SignalReaction {
  emoji?: string;
  targetAuthor?: string | null;
  targetAuthorNumber?: string | null;
  targetAuthorUuid?: string | null;
  targetSentTimestamp?: number;
  isRemove?: boolean;
}

/** A reaction someone (not Hearth) added to one of Hearth's own messages; null for anything else. */
export function reactionToOwn(envelope: SignalEnvelope, rules: SignalInboundRules): { emoji: string; targetTimestamp: number; chatId: string; sender: InboundMessage["sender"] } | null {
  const r = envelope.dataMessage?.reaction;
  const author = envelope.sourceNumber || envelope.sourceUuid || envelope.source;
  if (!r || r.isRemove || !r.emoji || typeof r.targetSentTimestamp !== "number" || !author || author === rules.account) return null;
  if ((r.targetAuthorNumber || r.targetAuthor) !== rules.account) return null;
  const groupId = envelope.dataMessage?.groupInfo?.groupId;
  const isOwner = rules.ownerIds.includes(author) || (envelope.sourceUuid ? rules.ownerIds.includes(envelope.sourceUuid) : false);
  return { emoji: r.emoji, targetTimestamp: r.targetSentTimestamp, chatId: groupId || author, sender: { id: author, name: printable(envelope.sourceName || author), isOwner } };
}

export interface SignalAttachmentFacts {
  contentType?: string | null;
  filename?: string | null;
  id?: string | null;
  size?: number | null;
  voiceNote?: boolean | null;
}

/** What the channel keeps in `InboundMessage.raw`: enough to quote the message after a restart. */
export interface SignalMessageRef {
  timestamp: number;
  author: string;
  groupId?: string;
}

export interface SignalInboundRules {
  /** The linked number: Hearth's own. */
  account: string;
  ownerIds: readonly string[];
  /** Matched (case-insensitively) against the text; null when unset. */
  namePattern: RegExp | null;
}

export type NormalizeResult = { kind: "inbound"; message: InboundMessage; attachments: SignalAttachmentFacts[] } | { kind: "ignored"; reason: string };

const REPLY_TEXT_LIMIT = 500;
/** Signal writes a mention into the text as this character, described in `mentions`. */
const MENTION_MARK = "\uFFFC";

/** Whether a chat id names a person (a number, or an account's UUID) rather than a group (a base64 id of 32 bytes). */
export function isPersonChat(chatId: string): boolean {
  return /^(?:\+\d{6,15}|[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12})$/.test(chatId);
}

export function normalizeEnvelope(envelope: SignalEnvelope, rules: SignalInboundRules): NormalizeResult {
  const data = envelope.dataMessage;
  // Receipts, typing, calls and the linked devices' sync messages are not messages to Hearth.
  if (!data) return { kind: "ignored", reason: "not a data message" };
  const author = envelope.sourceNumber || envelope.sourceUuid || envelope.source;
  const timestamp = data.timestamp ?? envelope.timestamp;
  if (!author || typeof timestamp !== "number") return { kind: "ignored", reason: "no author or timestamp" };
  if (author === rules.account) return { kind: "ignored", reason: "own message" };
  if (data.reaction || data.remoteDelete) return { kind: "ignored", reason: "a reaction or a deletion" };

  const botMentioned = (data.mentions ?? []).some((m) => m.number === rules.account);
  const text = cleanText(data.message ?? "", data.mentions ?? [], rules.account);
  const attachments = (data.attachments ?? []).filter((a) => typeof a.id === "string" && a.id !== "");
  const unsupported = data.sticker ? "sticker" : data.contacts?.length ? "contact" : data.pollCreate ? "poll" : undefined;
  const unreadable = !text && attachments.length === 0;
  if (unreadable && !unsupported) return { kind: "ignored", reason: "no text" };

  const groupId = data.groupInfo?.groupId;
  const quoteAuthor = data.quote ? data.quote.authorNumber || data.quote.authorUuid || data.quote.author : undefined;
  const repliesToBot = quoteAuthor === rules.account;
  const named = rules.namePattern !== null && rules.namePattern.test(text);
  const ref: SignalMessageRef = { timestamp, author, ...(groupId ? { groupId } : {}) };
  const name = printable(envelope.sourceName || author);

  const message: InboundMessage = {
    id: `${author}:${timestamp}`,
    channel: "signal",
    // A chat without a group is the account and one person for good; a group is a group whatever its size.
    chat: groupId ? { id: groupId, type: "group", ...(data.groupInfo?.groupName ? { title: printable(data.groupInfo.groupName) } : {}) } : { id: author, type: "dm", members: [author] },
    sender: { id: author, name, isOwner: rules.ownerIds.includes(author) || (envelope.sourceUuid ? rules.ownerIds.includes(envelope.sourceUuid) : false) },
    text,
    addressed: !groupId || botMentioned || repliesToBot || named,
    receivedAt: timestamp,
    raw: ref,
    ...(unreadable && unsupported ? { unreadableNote: unsupportedReply(unsupported) } : {}),
  };
  if (data.quote && typeof data.quote.id === "number" && quoteAuthor) {
    const quoted = data.quote.text?.trim();
    message.replyTo = { id: `${quoteAuthor}:${data.quote.id}`, fromBot: repliesToBot, ...(quoted ? { text: quoted.slice(0, REPLY_TEXT_LIMIT) } : {}) };
  }
  return { kind: "inbound", message, attachments };
}

/**
 * The text as the model should read it: the bot's own mention is dropped where it only calls the
 * bot (at the start or the end) and other mentions become "@name". Signal counts mention
 * positions in UTF-16 code units, as JavaScript strings do.
 */
export function cleanText(message: string, mentions: NonNullable<SignalDataMessage["mentions"]>, account: string): string {
  const sorted = [...mentions].filter((m) => typeof m.start === "number" && typeof m.length === "number").sort((a, b) => b.start! - a.start!);
  let text = message;
  for (const m of sorted) {
    const self = m.number === account;
    const label = self ? "@\u0000self" : `@${printable(m.name || m.number || "someone")}`;
    text = text.slice(0, m.start!) + label + text.slice(m.start! + m.length!);
  }
  text = text.trim().replace(/^(?:@\u0000self[\s,:;.!]*)+/, "").replace(/(?:[\s,]*@\u0000self)+[\s.!?]*$/, "").replaceAll("@\u0000self", "@Hearth");
  return text.replaceAll(MENTION_MARK, "").trim();
}

/** The kind of an attachment from its content type; a voice note is audio whatever it states. */
export function attachmentKind(a: SignalAttachmentFacts): "image" | "document" | "audio" | "video" {
  const t = a.contentType ?? "";
  if (a.voiceNote || t.startsWith("audio/")) return "audio";
  if (t.startsWith("image/")) return "image";
  if (t.startsWith("video/")) return "video";
  return "document";
}

/** The sender's file name, or one made up from the kind ("voice-note.aac"). */
export function attachmentName(a: SignalAttachmentFacts): string {
  if (a.filename) return printable(a.filename);
  const ext = (a.contentType ?? "").split("/")[1]?.split(/[;+]/)[0] || "bin";
  return `${a.voiceNote ? "voice-note" : attachmentKind(a) === "image" ? "photo" : "attachment"}.${ext}`;
}
