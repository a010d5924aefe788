// What the scheduler needs from the gateway, in one narrow interface: put a run on a lane, tell
// whether main is busy, send a proactive message, and know where the owner is. Tests hand the
// scheduler a fake of it; the daemon builds it from the gateway context.
import { emptyUsage, type AssistantMessage } from "../agent/messages.ts";
import type { DeliveryTarget } from "../channels/channel.ts";
import { NoTerminalClientError } from "../channels/terminal/channel.ts";
import type { BudgetDecision } from "../spending/budget.ts";
import { heartbeatModel } from "../config/config.ts";
import type { GatewayContext } from "../gateway/context.ts";
import type { LaneItem } from "../gateway/lanes.ts";

export interface SchedulerHost {
  /** Queues `item` behind whatever the session has (followup: a busy session delays it, never drops it). */
  submit(sessionKey: string, item: LaneItem): void;
  /** True while main has an active run or queued messages. */
  mainBusy(): boolean;
  /**
   * A proactive message from `from` (`cron job "Stretch" (a1b2c3d4)`, `heartbeat`); resolves with
   * where it went, rejects when it could not be delivered. For the terminal with no chat open it
   * goes to the `cron.fallback` channel when one is set and reachable, else to the mailbox.
   */
  send(to: DeliveryTarget, text: string, from: string): Promise<HostDelivery>;
  /** The owner's most recently used chat; the terminal when none is known yet. */
  ownerTarget(): DeliveryTarget;
  /**
   * The chat the current message of `sessionKey` came from (what `deliver: origin` means for a
   * job the agent creates there); null when unknown.
   */
  originOf(sessionKey: string): DeliveryTarget | null;
  /**
   * Whether background work in `sessionKey` may spend now (budget.ts); asked before a job or a
   * heartbeat is queued. Absent: there is no budget.
   */
  checkBudget?(purpose: "cron" | "heartbeat", sessionKey: string): BudgetDecision;
  /** When the owner last wrote to Hearth; null when never (since the home was created). */
  ownerMessageAt(): number | null;
  /** When a workspace file last changed; null when unknown (no watcher): the heartbeat then never skips as "unchanged". */
  workspaceChangedAt(): number | null;
  /**
   * Adds a delivered heartbeat to main's transcript as an assistant message, so the conversation
   * knows what was said. Call only while main's lane is held (from the heartbeat's reply).
   */
  recordInMain(text: string): void;
}

/** Shown in `to` (perhaps the fallback channel's chat instead of the terminal), or kept in the terminal's mailbox. */
export type HostDelivery = { type: "delivered"; to: DeliveryTarget } | { type: "kept"; to: DeliveryTarget };

export const CLI_TARGET: DeliveryTarget = { channel: "cli", chatId: "cli" };

export function gatewayHost(ctx: GatewayContext): SchedulerHost {
  const ownerTarget = (): DeliveryTarget => {
    const c = ctx.sessions.ownerContact();
    return c ? { channel: c.channel, chatId: c.chatId, ...(c.threadId ? { threadId: c.threadId } : {}) } : CLI_TARGET;
  };
  return {
    submit: (key, item) => ctx.lanes.submit(key, item, "followup"),
    mainBusy: () => ctx.lanes.snapshot().some((l) => l.key === "main" && (l.running || l.queued > 0)),
    send: (to, text, from) => sendScheduled(ctx, to, text, from, ownerTarget),
    ownerTarget,
    checkBudget: (purpose, sessionKey) => ctx.budget.check({ scope: "main", purpose, sessionKey }),
    originOf(sessionKey) {
      // Only the owner's main session may manage jobs; its messages come from the owner's DMs
      // (the router records the last one as the owner contact) or from the terminal.
      if (sessionKey !== "main") return null;
      return ctx.sessions.get("main")?.lastChannel === "cli" ? CLI_TARGET : ownerTarget();
    },
    ownerMessageAt: () => ctx.sessions.ownerMessageAt() ?? null,
    workspaceChangedAt: () => (ctx.runtime.memory ? ctx.runtime.memory.lastChangeAt() : null),
    recordInMain(text) {
      const message: AssistantMessage = { role: "assistant", content: [{ type: "text", text }], stop: "end_turn", model: heartbeatModel(ctx.config), usage: emptyUsage(), ts: ctx.clock() };
      ctx.runtime.appendMessage("main", message);
    },
  };
}

/** See SchedulerHost.send: the terminal's fallback channel, then its mailbox. */
async function sendScheduled(ctx: GatewayContext, to: DeliveryTarget, text: string, from: string, ownerTarget: () => DeliveryTarget): Promise<HostDelivery> {
  const fallback = ctx.config.cron.fallback;
  if (to.channel === "cli" && fallback) {
    try {
      await ctx.channels.send(to, text, { from, keep: false });
      return { type: "delivered", to };
    } catch (err) {
      if (!(err instanceof NoTerminalClientError)) throw err;
    }
    const other = fallbackTarget(ctx, fallback, ownerTarget());
    if (!other) {
      ctx.log.warn("cron.fallback_unreachable", { channel: fallback, reason: "no chat with the owner is known on it yet", action: "kept in the terminal's mailbox" });
    } else {
      try {
        await ctx.channels.send(other, text, { from });
        return { type: "delivered", to: other };
      } catch (err) {
        ctx.log.warn("cron.fallback_failed", { channel: fallback, error: err, action: "kept in the terminal's mailbox" });
      }
    }
  }
  const receipt = await ctx.channels.send(to, text, { from });
  return { type: receipt.type, to };
}

/**
 * The owner's chat on the fallback channel: the last one they used there, else (Telegram) their
 * private chat, whose id is their user id. Discord needs a DM the owner opened first.
 */
function fallbackTarget(ctx: GatewayContext, channel: "telegram" | "discord", last: DeliveryTarget): DeliveryTarget | null {
  if (last.channel === channel) return last;
  const owner = channel === "telegram" ? ctx.config.channels.telegram?.ownerIds[0] : undefined;
  return owner ? { channel, chatId: owner } : null;
}
