// Commands a platform delivers as commands (Discord's slash commands): the same command code as
// typed ones (commands.ts), but only the owner's count, and every answer is private to its sender
// (PlatformCommand.answer). Nothing here touches the inbox, the lanes' queues or a model.
import type { PlatformCommand } from "../channels/channel.ts";
import { accessRules, decideAccess } from "./access/access.ts";
import { tellOwnerChatGrew, type GrownChatDeps } from "./access/grown-chat.ts";
import { handleCommand, parseCommand } from "./commands.ts";
import type { Config } from "../config/schema.ts";
import type { Logger } from "../process/log.ts";
import type { PairingStore } from "./access/pairing.ts";
import type { CommandDeps } from "./commands.ts";

/** What a platform's commands use of the gateway. */
export interface PlatformCommandDeps extends CommandDeps, Omit<GrownChatDeps, "sessions"> {
  config: Config;
  log: Logger;
  pairing: PairingStore;
}

export const NOT_OWNER_TEXT = "Only my owner can use these commands.";
export const NOT_HERE_TEXT = "I don't answer in this chat, so its commands do nothing here. Use them in our private chat.";

/** Answers one platform command. Never throws: a failure is logged and, where possible, answered. */
export async function routePlatformCommand(ctx: PlatformCommandDeps, c: PlatformCommand): Promise<void> {
  const m = c.message;
  const log = ctx.log.child({ channel: m.channel, chat: m.chat.id, msg: m.id });
  try {
    const rules = accessRules(ctx.config, m.channel);
    // Decided before anything else: a stranger learns nothing of the chat or the command.
    if (!rules?.ownerIds.includes(m.sender.id)) {
      log.info("command.refused", { reason: "not the owner", user: m.sender.id });
      await c.answer(NOT_OWNER_TEXT);
      return;
    }
    const judged = ctx.audiences.judge(m, rules.ownerIds);
    if (judged.grew) tellOwnerChatGrew(ctx, m, judged.grew);
    const decision = decideAccess(m, rules, ctx.pairing, judged.audience);
    if (decision.type !== "allow") {
      log.info("command.refused", { reason: decision.type === "refuse" ? decision.reason : decision.type });
      await c.answer(NOT_HERE_TEXT);
      return;
    }
    const command = parseCommand(m.text) ?? { name: "help", args: "" };
    const reply = await handleCommand(ctx, command, { message: m, sessionKey: decision.sessionKey, scope: decision.scope, isOwner: decision.isOwner });
    // null: the command answered with buttons in the chat itself (the owner's bare /model).
    await c.answer(reply ?? "The choices are in the chat, as buttons.");
  } catch (err) {
    log.error("command.failed", { error: err });
    await c.answer("Something went wrong with that command; the log has the details.").catch(() => {});
  }
}
