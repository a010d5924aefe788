// A Matrix room message as Hearth reads it: the facts of one event (decrypted already), turned
// into an InboundMessage or a reason to ignore it. Pure: the channel gathers the facts (room,
// members, the bot's own ids), this file decides what they mean.
import type { Attachment, ChatMembers, InboundMessage } from "../channel.ts";
import { printable } from "../printable.ts";

export interface MatrixEventFacts {
  eventId: string;
  roomId: string;
  roomName: string | undefined;
  sender: string;
  senderName: string;
  type: string;
  content: Record<string, any>;
  ts: number;
  /** The room is a direct chat with the bot (see channel.ts #isDirect). */
  direct: boolean;
  /** The room's joined and invited members but the bot when the event came; "unknown" in a large room. */
  members: ChatMembers;
  /** The sender of the event this one replies to, when it replies. */
  repliedToSender: string | undefined;
}

export interface MatrixInboundRules {
  bot: { userId: string; name: string };
  ownerIds: string[];
  namePattern: RegExp | null;
}

/** Where an answer goes: the room, the thread, the event answered. JSON in InboundMessage.raw. */
export interface MatrixReplyRef {
  roomId: string;
  eventId: string;
  threadId?: string;
}

export type MatrixFile = { url: string | undefined; file: EncryptedFileInfo | undefined; name: string; mime: string; size: number | undefined; kind: Attachment["kind"]; durationSeconds: number | undefined };

/** The `file` of an encrypted attachment (the spec's EncryptedFile). */
export interface EncryptedFileInfo {
  url: string;
  key: { k: string };
  iv: string;
  hashes: { sha256: string };
}

export type Normalized = { kind: "message"; message: Omit<InboundMessage, "attachments">; file: MatrixFile | undefined } | { kind: "ignored"; reason: string };

const FILE_TYPES: Record<string, Attachment["kind"]> = { "m.image": "image", "m.file": "document", "m.audio": "audio", "m.video": "video" };

export function normalizeEvent(f: MatrixEventFacts, rules: MatrixInboundRules): Normalized {
  if (f.type !== "m.room.message") return { kind: "ignored", reason: `event type ${f.type}` };
  if (f.sender === rules.bot.userId) return { kind: "ignored", reason: "own message" };
  const relation = f.content["m.relates_to"] as { rel_type?: string; event_id?: string; "m.in_reply_to"?: { event_id?: string }; is_falling_back?: boolean } | undefined;
  if (relation?.rel_type === "m.replace") return { kind: "ignored", reason: "an edit" };
  const msgtype = String(f.content.msgtype ?? "");
  const fileKind = FILE_TYPES[msgtype];
  let text: string;
  let file: MatrixFile | undefined;
  if (fileKind) {
    const info = (f.content.info ?? {}) as { mimetype?: string; size?: number; duration?: number };
    const name = String(f.content.filename ?? f.content.body ?? "file");
    // MSC2530: with a `filename`, a `body` that differs from it is the caption.
    text = typeof f.content.filename === "string" && f.content.body !== f.content.filename ? String(f.content.body ?? "") : "";
    file = {
      url: typeof f.content.url === "string" ? f.content.url : undefined,
      file: typeof f.content.file?.url === "string" ? (f.content.file as EncryptedFileInfo) : undefined,
      name: printable(name),
      mime: info.mimetype ?? "",
      size: info.size,
      kind: msgtype === "m.audio" && f.content["org.matrix.msc3245.voice"] !== undefined ? "audio" : fileKind,
      durationSeconds: typeof info.duration === "number" ? info.duration / 1000 : undefined,
    };
  } else if (msgtype === "m.text" || msgtype === "m.notice" || msgtype === "m.emote") {
    text = String(f.content.body ?? "");
  } else {
    return { kind: "ignored", reason: `msgtype ${msgtype}` };
  }
  const replyTo = relation?.["m.in_reply_to"]?.event_id;
  // A thread's fallback reply points at the thread's last event: not a reply the sender chose.
  const realReply = replyTo !== undefined && !(relation?.rel_type === "m.thread" && relation.is_falling_back);
  if (realReply) text = stripReplyFallback(text);
  const threadId = relation?.rel_type === "m.thread" ? relation.event_id : undefined;
  const mentions = (f.content["m.mentions"] as { user_ids?: unknown } | undefined)?.user_ids;
  const mentioned = Array.isArray(mentions) && mentions.includes(rules.bot.userId);
  const named = namesBot(text, rules.bot);
  const addressed = f.direct || mentioned || named || (rules.namePattern?.test(text) ?? false) || (realReply && f.repliedToSender === rules.bot.userId);
  const raw: MatrixReplyRef = { roomId: f.roomId, eventId: f.eventId, ...(threadId ? { threadId } : {}) };
  return {
    kind: "message",
    file,
    message: {
      id: f.eventId,
      channel: "matrix",
      // A direct room can be joined by more people at any time: whether it is still private is
      // the gateway's to decide from its members, on every message.
      chat: { id: f.roomId, type: f.direct ? "dm" : "group", members: f.members, ...(threadId ? { threadId } : {}), ...(f.roomName ? { title: printable(f.roomName) } : {}) },
      sender: { id: f.sender, name: printable(f.senderName), isOwner: rules.ownerIds.includes(f.sender) },
      text: text.trim(),
      addressed,
      ...(realReply ? { replyTo: { id: replyTo!, fromBot: f.repliedToSender === rules.bot.userId } } : {}),
      receivedAt: f.ts,
      raw,
    },
  };
}

/** Older clients quote the message replied to as "> " lines before the answer. */
function stripReplyFallback(body: string): string {
  const lines = body.split("\n");
  let i = 0;
  while (i < lines.length && lines[i]!.startsWith("> ")) i++;
  if (i === 0) return body;
  if (lines[i] === "") i++;
  return lines.slice(i).join("\n");
}

/** The bot's display name or its user id's localpart as a word of the text. */
function namesBot(text: string, bot: { userId: string; name: string }): boolean {
  const local = bot.userId.slice(1).split(":")[0]!;
  const lower = text.toLowerCase();
  return [bot.name, local, bot.userId].some((n) => n.length > 1 && new RegExp(`(^|[^\\p{L}\\p{N}_])${escape(n.toLowerCase())}($|[^\\p{L}\\p{N}_])`, "u").test(lower));
}

const escape = (s: string) => s.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");
