// What a Telegram chat shows of Hearth besides its messages: the command menus (setMyCommands)
// and the 👀 reaction on a message while it is being answered (setMessageReaction).
import { withWorkingSign } from "../working-sign.ts";
import type { Api } from "grammy";
import type { Logger } from "../../process/log.ts";
import type { MenuCommand, ReplySink } from "../channel.ts";
import { describeError } from "./errors.ts";

/** The menus the gateway derived from its command table: the owner's, and everyone else's. */
export interface CommandMenus {
  owner: MenuCommand[];
  everyone: MenuCommand[];
}

/** Where messages get the 👀 reaction while answered: private chats only, every chat, or nowhere. */
export type ReactionMode = "private" | "all" | "off";

const WORKING: [{ type: "emoji"; emoji: "👀" }] = [{ type: "emoji", emoji: "👀" }];

/**
 * Sets the menus: everyone's as the default scope, the owner's for each owner's private chat
 * (scope `chat`: a private chat's id is its user's id). Never throws: a menu is a convenience,
 * so a failure is logged and the channel runs on.
 */
export async function setCommandMenus(api: Pick<Api, "setMyCommands">, menus: CommandMenus, ownerIds: string[], log: Logger, token: string): Promise<void> {
  const entries = (list: MenuCommand[]) => list.map((c) => ({ command: c.name, description: c.description }));
  try {
    await api.setMyCommands(entries(menus.everyone), { scope: { type: "default" } });
    for (const id of ownerIds) {
      // Owner ids are Telegram user ids (numbers); anything else cannot name a private chat.
      if (!/^\d+$/.test(id)) continue;
      await api.setMyCommands(entries(menus.owner), { scope: { type: "chat", chat_id: Number(id) } });
    }
  } catch (err) {
    log.warn("telegram.menu_failed", { error: describeError(err, token) });
  }
}

/**
 * Wraps the reply to one message: 👀 goes on the message now and comes off before the final
 * delivery resolves, so the reply is recorded as delivered (gateway/outbox.ts) only after the
 * sign is gone. A reply opened again after a restart (its journal) puts it on again and takes it
 * off with its own delivery, so no message keeps the sign once its answer is delivered. A
 * reaction that Telegram refuses (an old message, reactions off in the chat) is logged, never
 * fatal to the answer.
 */
export function withWorkingReaction(sink: ReplySink, api: Pick<Api, "setMessageReaction">, message: { chatId: number; messageId: number }, log: Logger, token: string): ReplySink {
  const react = (on: boolean) =>
    api.setMessageReaction(message.chatId, message.messageId, on ? WORKING : []).then(
      () => {},
      (err: unknown) => log.debug("telegram.reaction_failed", { on, chat: String(message.chatId), error: describeError(err, token) }),
    );
  return withWorkingSign(sink, react);
}
