// Questions with buttons on Telegram: an inline keyboard under a plain-text message, presses
// arriving as callback queries (answered with `answerCallbackQuery`, whose text only the presser
// sees), and the question edited to show how it ended, without its keyboard.
import type { Api } from "grammy";
import type { CallbackQuery } from "grammy/types";
import type { ChoiceHandler, ChoiceQuestion } from "../channel.ts";
import { printable } from "../printable.ts";
import type { ReplyTarget } from "./transport.ts";

/** The callback data of a button: `q:<key>:<choice>` (at most 64 bytes, Telegram's limit). */
export const choiceData = (key: string, choiceId: string): string => `q:${key}:${choiceId}`;

/** The question key and choice of a button's data; null for data Hearth did not make. */
export function parseChoiceData(data: string): { key: string; choiceId: string } | null {
  const m = /^q:([A-Za-z0-9_-]{1,24}):([A-Za-z0-9_-]{1,16})$/.exec(data);
  return m ? { key: m[1]!, choiceId: m[2]! } : null;
}

export async function sendQuestion(api: Pick<Api, "sendMessage">, target: ReplyTarget, q: ChoiceQuestion): Promise<string> {
  const keyboard = q.choices.map((c) => ({ text: c.label, callback_data: choiceData(q.key, c.id) }));
  // Two buttons a row: four fit a phone's width that way.
  const rows = [];
  for (let i = 0; i < keyboard.length; i += 2) rows.push(keyboard.slice(i, i + 2));
  const sent = await api.sendMessage(target.chatId, q.text, {
    reply_markup: { inline_keyboard: rows },
    ...(target.threadId !== undefined ? { message_thread_id: target.threadId } : {}),
  });
  return String(sent.message_id);
}

export async function settleQuestion(api: Pick<Api, "editMessageText">, target: ReplyTarget, messageId: string, text: string): Promise<void> {
  await api.editMessageText(target.chatId, Number(messageId), text, { reply_markup: { inline_keyboard: [] } });
}

/**
 * A callback query to the handler, and the handler's answer back to the presser. A press on a
 * button Hearth did not make (or with no handler yet) is answered with nothing, so the client
 * stops its spinner.
 */
export async function handleCallback(query: CallbackQuery, ownerIds: readonly string[], handler: ChoiceHandler | undefined, answer: (text: string) => Promise<unknown>): Promise<void> {
  const parsed = query.data === undefined ? null : parseChoiceData(query.data);
  if (!parsed || !handler) {
    await answer("");
    return;
  }
  const from = query.from;
  const name = [from.first_name, from.last_name].filter(Boolean).join(" ") || from.username || String(from.id);
  const text = await handler({ ...parsed, channel: "telegram", by: { id: String(from.id), name: printable(name), isOwner: ownerIds.includes(String(from.id)) } });
  await answer(text);
}
