// The task service's host (tasks/host.ts) over the gateway context: a task is an inbox entry of
// session `task:<id>` whose reply is its result, delivered through the outbox to the chat that
// started it, so the inbox's recovery and the outbox's exactly-once delivery cover tasks too.
import type { InboundMessage, ReplyJournal, ReplySink } from "../../channels/channel.ts";
import { CLI_TARGET } from "../../scheduler/host.ts";
import type { TaskHost } from "../../tasks/host.ts";
import { isTaskSession } from "../../tasks/requests.ts";
import { inboxId } from "../inbox.ts";
import { accessRules, groupTarget } from "../access/access.ts";
import { groupRateRule, rateKeysOf, taskRateLimitText } from "../../spending/rate-limit.ts";
import { gatewayHost } from "./scheduler-host.ts";
import { chatPlaces } from "../access/chat-places.ts";
import type { Config } from "../../config/schema.ts";
import type { Logger } from "../../process/log.ts";
import type { Budget } from "../../spending/budget.ts";
import type { RateLimiter } from "../../spending/rate-limit.ts";
import type { PairingStore } from "../access/pairing.ts";
import type { AgentRuntime } from "../agent-runtime.ts";
import type { ChannelRegistry } from "../delivery/channel-registry.ts";
import type { Inbox } from "../inbox.ts";
import type { LaneManager } from "../lanes.ts";
import type { Outbox } from "../outbox.ts";
import type { SessionStore } from "../sessions.ts";
import type { SchedulerHostDeps } from "./scheduler-host.ts";

/** What the task service's host uses of the gateway. */
export interface TaskHostDeps extends SchedulerHostDeps {
  budget: Budget;
  channels: ChannelRegistry;
  clock: () => number;
  config: Config;
  inbox: Inbox;
  lanes: LaneManager;
  log: Logger;
  outbox: Outbox;
  pairing: PairingStore;
  rateLimits: RateLimiter;
  runtime: AgentRuntime;
  sessions: SessionStore;
}

export function gatewayTaskHost(ctx: TaskHostDeps): TaskHost {
  return {
    accept(taskId, sessionKey, to, text) {
      const m: InboundMessage = {
        id: `task-${taskId}`,
        channel: to.channel,
        // Never judged: a task's entry goes to the inbox directly, in the session its place decided.
        chat: { id: to.chatId, type: "dm", members: "unknown", ...(to.threadId ? { threadId: to.threadId } : {}) },
        sender: { id: "hearth", name: `task ${taskId}`, isOwner: true },
        text,
        addressed: true,
        receivedAt: ctx.clock(),
      };
      if (!ctx.inbox.accept(m, sessionKey)) throw new Error(`task entry ${inboxId(m)} was accepted before`);
      return inboxId(m);
    },
    known: (entryId) => ctx.inbox.has(entryId),
    submit(sessionKey, run, alone) {
      ctx.lanes.submit(sessionKey, { ...run, ...(alone ? { solo: true } : {}), ...(alone === "isolated" ? { isolated: true } : {}) }, "followup");
    },
    stop(sessionKey) {
      ctx.lanes.stop(sessionKey);
    },
    openResult(entryId) {
      const entry = ctx.inbox.get(entryId);
      if (!entry) throw new Error(`task entry ${entryId} is not open in the inbox`);
      return ctx.outbox.openReply(entryId, (journal) => openTaskDelivery(ctx, entry.message, journal));
    },
    markDone: (entryId) => ctx.inbox.markDone(entryId),
    noteInSession(sessionKey, text, outside) {
      if (ctx.lanes.isRunning(sessionKey)) return false;
      ctx.runtime.appendMessage(sessionKey, { role: "user", kind: "system", text, ...(outside ? { outside } : {}), ts: ctx.clock() });
      return true;
    },
    outsideContent: (sessionKey) => ctx.runtime.outsideContent(sessionKey),
    originOf: (sessionKey) => groupTarget(sessionKey) ?? gatewayHost(ctx).originOf(sessionKey),
    placeOf: chatPlaces(ctx.config, ctx.pairing, () => ctx.sessions.ownerContact()),
    checkBudget: (sessionKey, scope) => ctx.budget.check({ scope, purpose: "task", sessionKey }),
    admitShared(sessionKey, person) {
      const to = groupTarget(sessionKey);
      if (!to || to.channel === "cli") return null;
      const rules = accessRules(ctx.config, to.channel);
      // The owner is never rate limited, in a group neither.
      if (person !== undefined && rules?.ownerIds.includes(person)) return null;
      const rule = groupRateRule(ctx.config, to.channel);
      if (!rule) return null;
      const keys = rateKeysOf(to.channel, to.chatId, person ?? "");
      // Without a member (a run answering several), the group's window alone.
      const d = ctx.rateLimits.admit(keys.chat, keys.sender, person !== undefined ? rule : { ...rule, perSender: 0 }, ctx.clock());
      if (d.type === "allow") return null;
      ctx.log.info("task.rate_limited", { session: sessionKey, limit: d.limit });
      return taskRateLimitText(d);
    },
  };
}

/** Whether inbox entry `entryId` is a task's (its reply is a task result). */
export function isTaskEntry(ctx: TaskHostDeps, entryId: string): boolean {
  const entry = ctx.inbox.get(entryId);
  return entry !== undefined && isTaskSession(entry.sessionKey);
}

/**
 * Where a task's result goes, for a first delivery and for a re-delivery after a crash: only the
 * final text, as a message of its own in the chat that started the task (the terminal: every
 * listening `hearth chat`, else its mailbox). The text is already labelled.
 */
export function openTaskDelivery(ctx: TaskHostDeps, m: InboundMessage, journal: ReplyJournal): ReplySink {
  const from = m.sender.name;
  const deliver: (text: string) => Promise<void> =
    m.channel === "cli"
      ? async (text) => {
          await ctx.channels.send(CLI_TARGET, text, { from });
        }
      : (text) => ctx.channels.openReply({ channel: m.channel, chatId: m.chat.id, ...(m.chat.threadId ? { threadId: m.chat.threadId } : {}) }, journal).finish(text);
  return {
    textDelta: () => {},
    textReset: () => {},
    toolStarted: () => {},
    toolFinished: () => {},
    finish: (text, outcome) => (outcome === "kept" ? Promise.resolve() : deliver(text)),
    fail: (text) => deliver(text),
  };
}
