// A chat the owner had alone with Hearth gained someone (audience.ts judged it shared): the
// owner's notices, approvals and "owner" deliveries no longer go there, and the owner is told
// once, in a private chat of theirs, never in the grown chat itself.
import type { DeliveryTarget, InboundMessage } from "../../channels/channel.ts";
import { printable } from "../../channels/printable.ts";
import { channelDescriptor, CONFIGURABLE, ownerPrivateChat, type ConfigurableId } from "../../channels/registry.ts";
import type { Config } from "../../config/schema.ts";
import type { Logger } from "../../process/log.ts";
import type { ChannelRegistry } from "../delivery/channel-registry.ts";
import type { ChatAudiences, ChatGrowth } from "./audience.ts";

/** What telling the owner uses of the gateway; `sessions` is the session store's part that keeps the owner's last chat. */
export interface GrownChatDeps {
  audiences: ChatAudiences;
  channels: ChannelRegistry;
  config: Config;
  log: Logger;
  sessions: {
    ownerContact(): DeliveryTarget | undefined;
    setOwnerContact(to: DeliveryTarget): void;
    forgetOwnerContact(): void;
    flush(): void;
  };
}

/** The terminal: its mailbox keeps a notice no chat took (the scheduler's CLI_TARGET). */
const TERMINAL: DeliveryTarget = { channel: "cli", chatId: "cli" };

/** The chat as the owner knows it: its title and platform, else its address. */
function chatName(m: InboundMessage): string {
  const platform = channelDescriptor(m.channel)?.name ?? m.channel;
  return m.chat.title ? `“${m.chat.title}” (${platform})` : `${m.channel}:${m.chat.id}`;
}

/** Up to three of `ids` (printable: a member's id is theirs to choose), and how many more. */
export function peopleText(ids: readonly string[]): string {
  if (ids.length === 0) return "Someone else";
  const shown = ids.slice(0, 3).map(printable);
  const more = ids.length - shown.length;
  return more > 0 ? `${shown.join(", ")} and ${more} more` : shown.length === 1 ? shown[0]! : `${shown.slice(0, -1).join(", ")} and ${shown.at(-1)}`;
}

/** The one message the owner gets when a private chat of theirs gained `others`. */
export function grownChatText(m: InboundMessage, others: readonly string[]): string {
  return `🔓 ${peopleText(others)} can now read ${chatName(m)}, a chat you had with me alone. I answer there as in a group from now on, without your private memory or our conversation. Once only you and I are in it again, send /private there.`;
}

/**
 * m's chat grew. When the owner thought it private (Hearth answered them there privately, or it
 * is the chat they last wrote from), the owner's contact moves off it at once (synchronously,
 * before the message runs) and the owner is told in another private chat of theirs: the channel's
 * own private chat with them, one Hearth knows, else the terminal's mailbox. Never throws.
 */
export function tellOwnerChatGrew(ctx: GrownChatDeps, m: InboundMessage, growth: ChatGrowth): void {
  const same = (t: Pick<DeliveryTarget, "channel" | "chatId">) => t.channel === m.channel && t.chatId === m.chat.id;
  const contact = ctx.sessions.ownerContact();
  if (!growth.owners && !(contact && same(contact))) return;
  const usable = (t: DeliveryTarget | null | undefined): t is DeliveryTarget =>
    !!t && !same(t) && !ctx.audiences.isShared(t) && t.channel !== "cli" && ctx.channels.status(t.channel).state === "running";
  const elsewhere = [contact, ownerPrivateChat(ctx.config.channels, m.channel as ConfigurableId), ...ctx.audiences.ownerChats(), ...CONFIGURABLE.map((c) => ownerPrivateChat(ctx.config.channels, c.id))].filter(usable);
  const targets = [...new Map(elsewhere.map((t) => [`${t.channel}:${t.chatId}:${t.threadId ?? ""}`, t])).values()];
  if (contact && same(contact)) {
    if (targets[0]) ctx.sessions.setOwnerContact(targets[0]);
    else ctx.sessions.forgetOwnerContact();
    // Now, not half a second later: the message about to run asks its approvals there.
    ctx.sessions.flush();
  }
  const text = grownChatText(m, growth.others);
  void (async () => {
    for (const to of [...targets, TERMINAL]) {
      try {
        await ctx.channels.send(to, text, { from: "Hearth" });
        return;
      } catch (err) {
        ctx.log.warn("owner.notice_undelivered", { channel: to.channel, error: err });
      }
    }
  })();
}
