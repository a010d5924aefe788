// Where a Telegram reply goes: the chat, topic and message a reply answers, read from the raw
// data the channel stored with the message (which may come back from the inbox after a restart).
import type { DeliveryTarget, InboundMessage } from "../channel.ts";
import type { TelegramRaw } from "./inbound.ts";
import type { ReplyTarget } from "./transport.ts";

export function replyTargetOf(m: InboundMessage): ReplyTarget {
  const raw = parseRaw(m.raw);
  if (!raw) return deliveryTargetOf({ channel: "telegram", chatId: m.chat.id, ...(m.chat.threadId ? { threadId: m.chat.threadId } : {}) });
  return {
    chatId: raw.chatId,
    ...(raw.threadId !== undefined ? { threadId: raw.threadId } : {}),
    ...(raw.group ? { replyToMessageId: raw.messageId } : {}),
  };
}

export function deliveryTargetOf(to: DeliveryTarget): ReplyTarget {
  const thread = to.threadId !== undefined ? Number(to.threadId) : undefined;
  return { chatId: numericId(to.chatId), ...(thread !== undefined && Number.isSafeInteger(thread) ? { threadId: thread } : {}) };
}

/** Chat ids are numbers on Telegram; "@channelname" stays a string. */
function numericId(id: string): number | string {
  const n = Number(id);
  return /^-?\d+$/.test(id) && Number.isSafeInteger(n) ? n : id;
}

/** The inbox may hand back raw data written by an older version: check, never trust. */
export function parseRaw(raw: unknown): TelegramRaw | undefined {
  if (typeof raw !== "object" || raw === null) return undefined;
  const r = raw as Partial<TelegramRaw>;
  if (typeof r.chatId !== "number" || typeof r.messageId !== "number") return undefined;
  return { chatId: r.chatId, messageId: r.messageId, group: r.group === true, ...(typeof r.threadId === "number" ? { threadId: r.threadId } : {}) };
}
