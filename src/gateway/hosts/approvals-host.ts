// The approvals' host (approvals/host.ts) over the gateway context: questions go to the run's
// chat when its channel has buttons, else to the owner's preferred chat (sessions.ts
// `ownerTarget`), else to the private chat of the first Telegram owner; a terminal run's question
// with none of these is kept for the next `hearth chat`.
import { CONFIGURABLE, ownerPrivateChat } from "../../channels/registry.ts";
import { ownerTarget } from "../sessions.ts";
import type { DeliveryTarget } from "../../channels/channel.ts";
import type { ApprovalHost } from "../../approvals/host.ts";
import type { Config } from "../../config/schema.ts";
import type { Logger } from "../../process/log.ts";
import type { ChannelRegistry } from "../delivery/channel-registry.ts";
import type { SessionStore } from "../sessions.ts";

/** What the approvals' host uses of the gateway. */
export interface ApprovalsHostDeps {
  channels: ChannelRegistry;
  config: Config;
  log: Logger;
  sessions: SessionStore;
}

export function approvalsHost(ctx: ApprovalsHostDeps): ApprovalHost {
  const candidates = (to: DeliveryTarget | null): DeliveryTarget[] => {
    const owner = ownerTarget(ctx.sessions);
    // Then the owner's private chat on every platform where its id is the owner's user id (Telegram).
    const privates = CONFIGURABLE.map((c) => ownerPrivateChat(ctx.config.channels, c.id));
    return [to, owner, ...privates].filter((t): t is DeliveryTarget => t !== null);
  };
  return {
    async ask(to, question) {
      for (const target of candidates(to)) {
        if (!ctx.channels.canAsk(target.channel)) continue;
        try {
          return { to: target, messageId: await ctx.channels.askChoices(target, question) };
        } catch (err) {
          ctx.log.warn("approvals.ask_failed", { channel: target.channel, error: err });
        }
      }
      // The terminal's own run with no chat open anywhere to ask (a run retried after a
      // restart took its chat's connection with it): the next `hearth chat` shows it.
      const held = to?.channel === "cli" ? ctx.channels.holdForTerminal(question) : null;
      return held && to ? { to, messageId: held } : null;
    },
    async settle(to, messageId, text) {
      try {
        await ctx.channels.settleChoices(to, messageId, text);
      } catch (err) {
        ctx.log.warn("approvals.settle_failed", { channel: to.channel, error: err });
      }
    },
  };
}
