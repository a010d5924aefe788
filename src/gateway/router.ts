// The path of a message into Hearth (DESIGN §2): dedupe → access → commands → session →
// durable inbox → lane. Everything before the inbox is cheap: no model call is ever made for
// a refused, unaddressed or duplicate message.
import { userTurn } from "../agent/user-turn.ts";
import type { MediaRef } from "../agent/messages.ts";
import type { InboundMessage } from "../channels/channel.ts";
import { channelSection } from "../channels/registry.ts";
import type { Logger } from "../process/log.ts";
import { localTime } from "../memory/daily-log.ts";
import { DISK_FULL_NOT_SAVED, isDiskFull } from "../state/storage.ts";
import { accessRules, decideAccess, opensTasks } from "./access/access.ts";
import { tellOwnerChatGrew, type GrownChatDeps } from "./access/grown-chat.ts";
import { handleCommand, parseCommand } from "./commands.ts";
import { inboxId, type InboxEntry } from "./inbox.ts";
import type { LaneItem } from "./lane-item.ts";
import type { PairingRequest } from "./access/pairing.ts";
import { budgetGate } from "./budget-gate.ts";
import { reserveTranscription } from "./paid-calls.ts";
import { rateKeysFor, rateLimitText, rateRuleFor } from "../spending/rate-limit.ts";
import { showActivityWhile } from "./delivery/chat-activity.ts";
import { announceHeard } from "./delivery/heard-line.ts";
import { openAnswerReply, sendFileOnce } from "./delivery/reply-files.ts";
import { MAX_MESSAGE_CHARS, tooLongText } from "./message-limits.ts";
import { askAboutPairing } from "./questions/owner-questions.ts";
import { isTaskSession } from "../tasks/requests.ts";
import type { Config } from "../config/schema.ts";
import type { RateLimiter } from "../spending/rate-limit.ts";
import type { TaskService } from "../tasks/service.ts";
import type { PairingStore } from "./access/pairing.ts";
import type { AgentRuntime } from "./agent-runtime.ts";
import type { BudgetGateDeps } from "./budget-gate.ts";
import type { CommandDeps } from "./commands.ts";
import type { ChannelRegistry } from "./delivery/channel-registry.ts";
import type { Inbox } from "./inbox.ts";
import type { LaneManager } from "./lanes.ts";
import type { Outbox } from "./outbox.ts";
import type { PaidCallDeps } from "./paid-calls.ts";
import type { OwnerQuestionDeps } from "./questions/owner-questions.ts";
import type { PendingQuestions } from "./questions/questions.ts";
import type { SessionStore } from "./sessions.ts";
import { RECEIVED } from "../memory/provenance.ts";

/** What the router uses of the gateway: the stores a message passes, and what the commands, the budget gate, paid calls and the owner's questions use. */
export interface RouterDeps extends CommandDeps, BudgetGateDeps, PaidCallDeps, OwnerQuestionDeps, GrownChatDeps {
  channels: ChannelRegistry;
  clock: () => number;
  config: Config;
  inbox: Inbox;
  lanes: LaneManager;
  log: Logger;
  outbox: Outbox;
  pairing: PairingStore;
  questions: PendingQuestions;
  recent: RecentChats;
  rateLimits: RateLimiter;
  runtime: AgentRuntime;
  sessions: SessionStore;
  tasks: TaskService;
}

export { MAX_MESSAGE_CHARS, tooLongText };

const RECENT_LIMIT = 30;
const RECENT_TEXT_LIMIT = 500;

interface RecentLine {
  at: number;
  sender: string;
  text: string;
}

/** Unaddressed group messages, last 30 per chat: what the group was talking about. */
export class RecentChats {
  readonly #chats = new Map<string, RecentLine[]>();
  readonly #refused = new Set<string>();

  /** True the first time a message from this chat is refused (bounded memory). */
  firstRefusal(m: InboundMessage): boolean {
    const key = chatKey(m);
    if (this.#refused.has(key)) return false;
    if (this.#refused.size >= 10_000) this.#refused.clear();
    this.#refused.add(key);
    return true;
  }

  remember(m: InboundMessage): void {
    const key = chatKey(m);
    const lines = this.#chats.get(key) ?? [];
    lines.push({ at: m.receivedAt, sender: m.sender.name, text: m.text.slice(0, RECENT_TEXT_LIMIT) });
    if (lines.length > RECENT_LIMIT) lines.splice(0, lines.length - RECENT_LIMIT);
    this.#chats.set(key, lines);
  }

  /** The chat's recent lines as a preface, and forgets them (they are in the transcript now). */
  take(m: InboundMessage, timezone: string): string | undefined {
    const key = chatKey(m);
    const lines = this.#chats.get(key);
    this.#chats.delete(key);
    if (!lines?.length) return undefined;
    return `Earlier in this chat (not addressed to you):\n${lines.map((l) => `[${localTime(l.at, timezone)}] ${l.sender}: ${l.text}`).join("\n")}`;
  }
}

const chatKey = (m: InboundMessage) => `${m.channel}:${m.chat.id}:${m.chat.threadId ?? ""}`;

/** Replies to the same chat share one reply; each CLI request has its own. */
export const replyKeyOf = (m: InboundMessage): string => (m.channel === "cli" ? `cli:${m.id}` : chatKey(m));

/** Handles one inbound message. Never throws: problems are logged and, where useful, answered. */
export async function routeInbound(ctx: RouterDeps, inbound: InboundMessage): Promise<void> {
  let m = inbound;
  const log = ctx.log.child({ channel: m.channel, chat: m.chat.id, msg: m.id });
  try {
    if (ctx.inbox.has(inboxId(m))) {
      // A platform re-delivering what was taken (after a crash) is rare and never silent: a
      // message dropped by a wrong key would otherwise vanish without a trace.
      log.info("inbound.duplicate", { action: "dropped: a message with this id was accepted before" });
      return;
    }
    const rules = accessRules(ctx.config, m.channel);
    // Who can read the chat, from the members the adapter saw with this message: the scope
    // follows it on every message, and the owner hears once of a private chat that grew.
    const judged = ctx.audiences.judge(m, rules?.ownerIds ?? []);
    if (judged.grew) tellOwnerChatGrew(ctx, m, judged.grew);
    const decision = decideAccess(m, rules, ctx.pairing, judged.audience);
    switch (decision.type) {
      case "refuse":
        // The first refusal per chat is info (it shows the id an owner needs for an allowlist);
        // later ones are debug: a bot in a busy server sees many messages that are not for it.
        if (ctx.recent.firstRefusal(m)) log.info("inbound.refused", { reason: decision.reason, title: m.chat.title });
        else log.debug("inbound.refused", { reason: decision.reason });
        return;
      case "observe":
        if (m.unreadableNote === undefined) ctx.recent.remember(m);
        return;
      case "pair":
        await answerPairing(ctx, m, log);
        return;
      case "allow":
        break;
      default:
        decision satisfies never;
    }
    if (judged.audience.type === "private") ctx.audiences.notePrivate(m, decision.scope === "main");

    if (m.unreadableNote !== undefined) {
      // A photo, a sticker…: a short note for someone the bot talks with, never a model call.
      if (m.addressed) await ctx.channels.openReply(m).finish(m.unreadableNote);
      return;
    }
    if (m.text.length > MAX_MESSAGE_CHARS) {
      log.info("inbound.too_long", { chars: m.text.length });
      await ctx.channels
        .openReply(m)
        .finish(tooLongText(m.text.length), "failed");
      return;
    }

    // The answer to a question a tool asked in this chat goes to that tool, not to the agent.
    if (ctx.questions?.answer(m)) {
      log.debug("inbound.answer");
      return;
    }

    const command = parseCommand(m.text);
    if (command) {
      const reply = await handleCommand(ctx, command, { message: m, sessionKey: decision.sessionKey, scope: decision.scope, isOwner: decision.isOwner });
      if (reply !== null) await ctx.channels.openReply(m).finish(reply);
      return;
    }

    // Synchronous up to the inbox for text: the message is on disk before the channel's handler
    // returns (and the platform is acknowledged). A refusal waits for its reply, and a message
    // with attachments for their download (the channel awaits the returned promise).
    const refusal = decision.scope === "shared" && !decision.isOwner ? rateLimitRefusal(ctx, m, log) : null;
    if (refusal) {
      if (refusal.answer) await ctx.channels.openReply(m).finish(refusal.answer);
      return;
    }

    let media: MediaRef[] | undefined;
    let heard: string[] = [];
    let voiceNote = false;
    if (m.attachments?.length) {
      // Taking in files can cost money (a transcription): the budget is asked first, as the run
      // would ask it, so a message the run would refuse costs nothing and gets the same answer.
      const gate = budgetGate(ctx, { scope: decision.scope, purpose: "chat", sessionKey: decision.sessionKey });
      if (gate.type === "refused") {
        if (gate.text) await ctx.channels.openReply(m).finish(gate.text);
        return;
      }
      const usageTag = { session: decision.sessionKey, scope: decision.scope, purpose: "chat" as const, channel: m.channel, sender: m.sender.name };
      // The media code (download, sharp, PDF text, transcription) loads with the first attachment.
      const { takeInAttachments, withVoice } = await import("./media/media-intake.ts");
      // Downloading, converting and transcribing can take a while: the chat shows Hearth busy.
      const intake = await showActivityWhile(ctx.channels, m, "typing", () =>
        takeInAttachments(m, {
          workspace: ctx.config.workspace,
          maxBytes: ctx.config.media.maxBytes,
          scope: decision.scope,
          sessionKey: decision.sessionKey,
          isOwner: decision.isOwner,
          transcription: ctx.config.media.transcription,
          reserveTranscription: (stated: number | null) => reserveTranscription(ctx, usageTag, stated),
          log,
          ...(ctx.runtime.memory ? { onTextStored: (rel: string) => ctx.runtime.memory?.indexOwnFile(rel) } : {}),
          ...(ctx.runtime.memory?.provenance ? { onReceived: (rels: string[]) => ctx.runtime.memory?.provenance?.record(rels, RECEIVED) } : {}),
        }),
      );
      if (intake.type === "refused") {
        await ctx.channels.openReply(m).finish(intake.reply, "failed");
        return;
      }
      media = intake.media;
      if (intake.voice.length > 0) {
        if (decision.isOwner && ctx.config.media.transcription?.showHeard !== false) heard = intake.voice;
        m = { ...m, text: withVoice(m.text, intake.voice) };
        voiceNote = true;
      }
      if (ctx.inbox.has(inboxId(m))) return; // delivered again while it downloaded
    }

    ctx.sessions.touch(decision.sessionKey, decision.scope, { lastChannel: m.channel, ...(m.chat.title ? { title: m.chat.title } : {}) });
    if (decision.scope === "main") ctx.sessions.noteOwnerMessage();
    if (decision.scope === "main" && m.channel !== "cli") {
      ctx.sessions.setOwnerContact({ channel: m.channel, chatId: m.chat.id, ...(m.chat.threadId ? { threadId: m.chat.threadId } : {}) });
    }
    const preface = m.chat.type === "group" ? ctx.recent.take(m, ctx.config.timezone) : undefined;
    const entry = ctx.inbox.accept(m, decision.sessionKey, preface, media, heard, voiceNote);
    if (!entry) return;
    submitEntry(ctx, entry);
  } catch (err) {
    log.error("inbound.failed", { error: err });
    if (isDiskFull(err)) await ctx.channels.openReply(m).finish(DISK_FULL_NOT_SAVED, "failed").catch(() => {});
  }
}

/**
 * Rate limits for shared scopes (the owner is never limited): past one, a message costs nothing
 * and only the first refusal in a window is answered. Null when the message is admitted;
 * otherwise what to answer (null answer: stay silent).
 */
function rateLimitRefusal(ctx: RouterDeps, m: InboundMessage, log: Logger): { answer: string | null } | null {
  const rule = rateRuleFor(ctx.config, m);
  if (!rule) return null;
  const keys = rateKeysFor(m);
  const d = ctx.rateLimits.admit(keys.chat, keys.sender, rule, ctx.clock());
  if (d.type === "allow") return null;
  log.info("inbound.rate_limited", { limit: d.limit, user: m.sender.id, answered: d.answer });
  return { answer: d.answer ? rateLimitText(d) : null };
}

/**
 * Puts an inbox entry on its lane (new messages, and replays after a restart). `alone`: a
 * suspect after a crash runs in a run of its own ("solo"), or also with the daemon to itself
 * ("isolated"); see LaneItem.
 */
export function submitEntry(ctx: RouterDeps, entry: InboxEntry, alone?: "solo" | "isolated"): void {
  // A background task's entry waits for a task slot (tasks.maxConcurrent) and has its own reply.
  if (isTaskSession(entry.sessionKey)) return ctx.tasks.resume(entry.id, entry.sessionKey, entry.attempts, alone);
  const m = entry.message;
  // What was understood of a voice note goes out at once (a misheard note is caught early),
  // also when the entry is replayed after a crash and no record says it went out; the answer's
  // reply waits for it (openAnswerReply).
  void announceHeard(ctx, entry);
  // Another person's words (or a group's talk before the mention) are outside content; the turn
  // carries it, so the session stays tainted while the turn is in the model's view.
  const outside = !m.sender.isOwner ? `a message from ${m.sender.name}` : entry.preface ? "other people's messages in this chat" : m.outside;
  const item: LaneItem = {
    entryId: entry.id,
    turn: {
      ...userTurn({
        text: m.replyTo?.text ? `${m.text}\n\n(In reply to ${m.replyTo.fromBot ? "your message" : "a message"}: «${clipQuote(m.replyTo.text)}»)` : m.text,
        channel: m.channel,
        sender: m.sender.name,
        chat: m.chat.type === "group" ? m.chat.title : undefined,
        preface: entry.preface,
        at: m.receivedAt,
        timezone: ctx.config.timezone,
        media: entry.media,
      }),
      entry: entry.id,
      ...(outside ? { outside } : {}),
    },
    source: { channel: m.channel, sender: m.sender.name, text: m.text },
    replyKey: replyKeyOf(m),
    ...(ctx.sessions.get(entry.sessionKey)?.scope === "shared" ? { person: m.sender.id } : {}),
    ...(opensTasks(m, accessRules(ctx.config, m.channel)) ? { openTasks: true } : {}),
    // The reply is named by the entry that opens it: after a crash it continues in the
    // messages the outbox recorded for it.
    openReply: () => ctx.outbox.openReply(entry.id, (journal) => openAnswerReply(ctx, m, journal)),
    sendFile: (file, callId) => sendFileOnce(ctx, entry.id, m, file, [`call:${callId}`]),
    chat: { channel: m.channel, chatId: m.chat.id, ...(m.chat.threadId ? { threadId: m.chat.threadId } : {}) },
    ...(outside ? { taintedBy: `this run read ${outside}` } : {}),
    ask: (text, opts) => {
      const to = { channel: m.channel, chatId: m.chat.id, ...(m.chat.threadId ? { threadId: m.chat.threadId } : {}) };
      return ctx.questions.ask(to, m.sender.id, text, opts);
    },
    arrivedAt: ctx.clock(),
    ...(alone ? { solo: true } : {}),
    ...(alone === "isolated" ? { isolated: true } : {}),
  };
  ctx.lanes.submit(entry.sessionKey, item, queueModeFor(ctx, entry.sessionKey, m.channel));
}

const clipQuote = (t: string) => (t.length > 300 ? `${t.slice(0, 299)}…` : t).replace(/\s+/g, " ");

function queueModeFor(ctx: RouterDeps, sessionKey: string, channel: InboundMessage["channel"]) {
  return ctx.sessions.get(sessionKey)?.queueMode ?? accessRules(ctx.config, channel)?.queueMode ?? ctx.config.agent.queueMode;
}

/** A stranger under dmPolicy "pairing": at most one short answer per hour, whatever they send. */
async function answerPairing(ctx: RouterDeps, m: InboundMessage, log: Logger): Promise<void> {
  const channel = m.channel === "cli" ? undefined : (channelSection(ctx.config.channels, m.channel) as { maxPendingPairings?: number } | undefined);
  const req = ctx.pairing.request(m.channel, m.sender.id, m.sender.name, channel?.maxPendingPairings, m.chat.id);
  if (req.type === "silent") {
    log.debug("pairing.silent", { user: m.sender.id });
    return;
  }
  if (req.type === "code" && req.isNew) log.info("pairing.requested", { channel: m.channel, user: m.sender.id, name: m.sender.name });
  await ctx.channels.openReply(m).finish(pairingText(req, ctx.clock()));
  // The owner is told once per new code, with Approve / Deny where their chat has buttons.
  if (req.type === "code" && req.isNew) await askAboutPairing(ctx, m, req.code);
}

function pairingText(req: Exclude<PairingRequest, { type: "silent" }>, now: number): string {
  const intro = "Hi! I'm a personal assistant and only talk with people my owner has approved.";
  switch (req.type) {
    case "code":
      // The command's name only: how the owner runs Hearth (a path under their home) is none of a stranger's business.
      return `${intro}\n\nYour pairing code: ${req.code}\n\nSend it to my owner; they can approve it with: hearth pairing approve ${req.code} (the code is valid for one hour).`;
    case "full":
      return `${intro} Several requests are already waiting, so I can't give you a code now. Please try again in an hour.`;
    case "cooldown":
      return `${intro} Your last pairing code expired before it was approved. You can ask for a new one in ${Math.max(1, Math.ceil((req.until - now) / 60_000))} minutes.`;
    default:
      return req satisfies never;
  }
}
