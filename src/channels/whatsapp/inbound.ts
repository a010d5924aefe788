// A WhatsApp message (socket.ts's WhatsAppMessage) → Hearth's InboundMessage, a pure function of
// the message and the channel's rules.
//
// Ids: a person's chat is `chat.id` = their number (digits, as `ownerIds` writes it); a group's is
// its JID (`…@g.us`). A message is `<chat>:<WhatsApp's id>`. The linked account's own messages
// are ignored, except in its chat with itself ("Message yourself") when the account is one of
// the owner's numbers: there the owner talks to Hearth, and Hearth's own answers (which it
// remembers by id) are not read back.
import type { InboundMessage } from "../channel.ts";
import { printable } from "../printable.ts";
import { unsupportedReply } from "../unsupported.ts";
import type { WhatsAppMessage } from "./socket.ts";

export interface WhatsAppInboundRules {
  /** The linked number (digits). */
  me: string;
  ownerIds: readonly string[];
  namePattern: RegExp | null;
  /** Whether Hearth sent the message `id` itself. */
  sentByHearth(id: string): boolean;
}

/** What the channel keeps in `InboundMessage.raw`: enough to quote the message after a restart. */
export interface WhatsAppMessageRef {
  id: string;
  chatJid: string;
  sender: string;
  fromMe: boolean;
}

export type NormalizeResult = { kind: "inbound"; message: InboundMessage } | { kind: "ignored"; reason: string };

const REPLY_TEXT_LIMIT = 500;

/** A number as `ownerIds` may write it ("+49 151 …") in WhatsApp's form: digits only. */
export const digitsOf = (id: string): string => id.replace(/[^\d]/g, "");

/** A chat id as Hearth names it → the JID WhatsApp addresses. */
export const jidOf = (chatId: string): string => (chatId.includes("@") ? chatId : `${digitsOf(chatId)}@s.whatsapp.net`);

/** A JID → the chat id Hearth names it by (a person's number, or the group's JID). */
export const chatIdOf = (jid: string): string => (jid.endsWith("@s.whatsapp.net") ? jid.split("@")[0]!.split(":")[0]! : jid);

export function normalizeWhatsApp(m: WhatsAppMessage, rules: WhatsAppInboundRules): NormalizeResult {
  const owners = rules.ownerIds.map(digitsOf);
  const chatId = chatIdOf(m.chatJid);
  const group = m.chatJid.endsWith("@g.us");
  const selfChat = !group && chatId === rules.me;
  if (m.fromMe) {
    if (!selfChat || !owners.includes(rules.me)) return { kind: "ignored", reason: "own message" };
    if (rules.sentByHearth(m.id)) return { kind: "ignored", reason: "Hearth's own answer" };
  }
  if (m.chatJid === "status@broadcast" || m.chatJid.endsWith("@broadcast") || m.chatJid.endsWith("@newsletter")) return { kind: "ignored", reason: "a status or a channel" };
  const text = m.text.trim();
  const unreadable = !text && !m.media;
  if (unreadable && !m.unsupported) return { kind: "ignored", reason: "no text" };

  const sender = m.fromMe ? rules.me : m.sender;
  const mentioned = m.mentioned.includes(rules.me);
  const repliesToBot = m.quoted?.sender !== undefined && digitsOf(m.quoted.sender) === rules.me;
  const named = rules.namePattern !== null && rules.namePattern.test(text);
  const ref: WhatsAppMessageRef = { id: m.id, chatJid: m.chatJid, sender: m.sender, fromMe: m.fromMe };
  const message: InboundMessage = {
    id: `${chatId}:${m.id}`,
    channel: "whatsapp",
    // A person's chat is the account and that person for good (the owner's "Message yourself": the owner alone).
    chat: group ? { id: chatId, type: "group", ...(m.groupSubject ? { title: printable(m.groupSubject) } : {}) } : { id: chatId, type: "dm", members: [sender] },
    sender: { id: sender, name: printable(m.senderName || sender), isOwner: !sender.includes("@") && owners.includes(digitsOf(sender)) },
    text,
    addressed: !group || mentioned || repliesToBot || named,
    receivedAt: m.timestamp,
    raw: ref,
    ...(unreadable && m.unsupported ? { unreadableNote: unsupportedReply(m.unsupported) } : {}),
  };
  if (m.quoted) {
    const quoted = m.quoted.text?.trim();
    message.replyTo = { id: `${chatId}:${m.quoted.id}`, fromBot: repliesToBot, ...(quoted ? { text: quoted.slice(0, REPLY_TEXT_LIMIT) } : {}) };
  }
  return { kind: "inbound", message };
}
