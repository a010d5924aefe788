// The scheduler's host (scheduler/host.ts) over the gateway context: lanes, sessions, channels,
// the budget and the runtime, so the scheduler itself never sees the gateway.
import { ownerPrivateChat, type ConfigurableId } from "../../channels/registry.ts";
import { emptyUsage, type AssistantMessage } from "../../agent/messages.ts";
import type { DeliveryTarget } from "../../channels/channel.ts";
import { NoTerminalClientError } from "../../channels/terminal/channel.ts";
import { heartbeatModel } from "../../config/config.ts";
import { CLI_TARGET, type HostDelivery, type SchedulerHost } from "../../scheduler/host.ts";
import { chatPlaces } from "../access/chat-places.ts";
import { ownerTarget as ownerTargetOf } from "../sessions.ts";
import type { Config } from "../../config/schema.ts";
import type { Logger } from "../../process/log.ts";
import type { Budget } from "../../spending/budget.ts";
import type { TaskService } from "../../tasks/service.ts";
import type { PairingStore } from "../access/pairing.ts";
import type { AgentRuntime } from "../agent-runtime.ts";
import type { ChannelRegistry } from "../delivery/channel-registry.ts";
import type { LaneManager } from "../lanes.ts";
import type { SessionStore } from "../sessions.ts";

/** What the scheduler's host uses of the gateway. */
export interface SchedulerHostDeps {
  budget: Budget;
  channels: ChannelRegistry;
  clock: () => number;
  config: Config;
  lanes: LaneManager;
  log: Logger;
  pairing: PairingStore;
  runtime: AgentRuntime;
  sessions: SessionStore;
  tasks: TaskService;
}

export function gatewayHost(ctx: SchedulerHostDeps): SchedulerHost {
  const ownerTarget = (): DeliveryTarget => ownerTargetOf(ctx.sessions);
  return {
    submit: (key, item) => ctx.lanes.submit(key, item, "followup"),
    mainBusy: () => ctx.lanes.snapshot().some((l) => l.key === "main" && (l.running || l.queued > 0)),
    send: (to, text, from) => sendScheduled(ctx, to, text, from, ownerTarget),
    ownerTarget,
    checkBudget: (purpose, sessionKey, scope) => ctx.budget.check({ scope, purpose, sessionKey }),
    placeOf: chatPlaces(ctx.config, ctx.pairing, () => ctx.sessions.ownerContact()),
    originOf(sessionKey) {
      // Only the owner's main session may manage jobs; its messages come from the owner's DMs
      // (the router records the last one as the owner contact) or from the terminal.
      if (sessionKey !== "main") return null;
      return ctx.sessions.get("main")?.lastChannel === "cli" ? CLI_TARGET : ownerTarget();
    },
    ownerMessageAt: () => ctx.sessions.ownerMessageAt() ?? null,
    workspaceChangedAt: () => (ctx.runtime.memory ? ctx.runtime.memory.lastChangeAt() : null),
    spawnTask: (t) => ctx.tasks.spawn({ task: t.task, label: t.label }, t.parent, { by: t.by, to: t.to, outside: t.outside }).id,
    outsideContent: (sessionKey) => ctx.runtime.outsideContent(sessionKey),
    recordInMain(text) {
      const message: AssistantMessage = { role: "assistant", content: [{ type: "text", text }], stop: "end_turn", model: heartbeatModel(ctx.config), usage: emptyUsage(), ts: ctx.clock() };
      ctx.runtime.appendMessage("main", message);
    },
  };
}

/** See SchedulerHost.send: the terminal's fallback channel, then its mailbox. */
async function sendScheduled(ctx: SchedulerHostDeps, to: DeliveryTarget, text: string, from: string, ownerTarget: () => DeliveryTarget): Promise<HostDelivery> {
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
 * The owner's chat on the fallback channel: the last one they used there, else their private
 * chat where the platform's chat id for it is their user id (Telegram). Discord needs a DM the
 * owner opened first.
 */
function fallbackTarget(ctx: SchedulerHostDeps, channel: ConfigurableId, last: DeliveryTarget): DeliveryTarget | null {
  if (last.channel === channel) return last;
  return ownerPrivateChat(ctx.config.channels, channel);
}
