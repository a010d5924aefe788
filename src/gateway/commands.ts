// Slash commands (DESIGN §2 step 3): answered at once, outside the queue, without a model call.
import { hearthCmd } from "../process/hearth-command.ts";
import type { Scope } from "../agent/messages.ts";
import { modelErrorNotice } from "../agent/model-errors.ts";
import { UnknownModelError } from "../agent/providers/registry.ts";
import type { InboundMessage, MenuCommand } from "../channels/channel.ts";
import { queueModes, type QueueMode } from "../fields/config-fields.ts";
import { formatDuration, formatTokens, gatewayStatus, mcpDownLines, sessionModelInfo } from "./status.ts";
import { spendingLine, usdText } from "../spending/budget.ts";
import { chatKeyOf, grantLines, grantText, placeText } from "../approvals/grants.ts";
import { askModel } from "./questions/owner-questions.ts";
import { approvePairing } from "./access/pairing-approval.ts";
import { TaskInputError } from "../tasks/requests.ts";
import { accessRules, opensTasks } from "./access/access.ts";
import { taskListBlock, taskListText } from "../tasks/view.ts";
import type { Approvals } from "../approvals/service.ts";
import type { Config } from "../config/schema.ts";
import type { Logger } from "../process/log.ts";
import type { Budget } from "../spending/budget.ts";
import type { TaskService } from "../tasks/service.ts";
import type { PairingApprovalDeps } from "./access/pairing-approval.ts";
import type { PairingStore } from "./access/pairing.ts";
import type { ChatAudiences } from "./access/audience.ts";
import { peopleText } from "./access/grown-chat.ts";
import type { AgentRuntime } from "./agent-runtime.ts";
import type { LaneManager } from "./lanes.ts";
import type { OwnerQuestionDeps } from "./questions/owner-questions.ts";
import type { SessionStore } from "./sessions.ts";
import type { StatusDeps } from "./status.ts";

/** What the slash commands use of the gateway. */
export interface CommandDeps extends StatusDeps, OwnerQuestionDeps, PairingApprovalDeps {
  approvals: Approvals;
  audiences: ChatAudiences;
  budget: Budget;
  clock: () => number;
  config: Config;
  lanes: LaneManager;
  log: Logger;
  pairing: PairingStore;
  runtime: AgentRuntime;
  sessions: SessionStore;
  tasks: TaskService;
}

export interface Command {
  name: string;
  args: string;
}

/**
 * The one command table: /help, the unknown-command check, Telegram's command menus and
 * Discord's slash commands are all derived from it (`commandMenu`, `slashCommands`).
 */
export interface CommandSpec {
  readonly name: string;
  readonly aliases?: readonly string[];
  /** Its argument as /help shows it ("[focus]"). */
  readonly usage?: string;
  /** One line for /help and the menus (Discord allows 100 characters). */
  readonly summary: string;
  /** `anyone`: everyone Hearth talks with (each in their own conversation); `owner`: the owner alone. */
  readonly who: "anyone" | "owner";
  /** False: handled but not listed (Telegram's /start, /approve that the pairing flow names). */
  readonly listed: boolean;
  /** One of the owner's everyday commands, registered as a Discord slash command, with its one optional argument. */
  readonly slash?: { option?: MenuCommand["option"] };
}

export const COMMANDS: readonly CommandSpec[] = [
  { name: "stop", summary: "stop the current answer and drop queued messages", who: "anyone", listed: true, slash: {} },
  { name: "new", aliases: ["reset"], summary: "start a fresh conversation (the old one stays on disk)", who: "anyone", listed: true, slash: {} },
  { name: "status", summary: "model, context use, queue and today's usage", who: "anyone", listed: true, slash: {} },
  {
    name: "compact",
    usage: "[focus]",
    summary: "summarise older turns to free context",
    who: "anyone",
    listed: true,
    slash: { option: { name: "focus", description: "what the summary should keep" } },
  },
  { name: "queue", usage: "[steer|followup|collect|interrupt]", summary: "what a message does while I'm answering", who: "anyone", listed: true },
  {
    name: "model",
    usage: "[name]",
    summary: "show or switch this conversation's model (owner only)",
    who: "anyone",
    listed: true,
    slash: { option: { name: "name", description: "the model to switch to (provider/model), or default" } },
  },
  { name: "voice", usage: "[on|off|auto]", summary: "whether my answers in this chat are spoken (owner)", who: "owner", listed: true },
  {
    name: "budget",
    usage: "[raise N]",
    summary: "spending against the limits; raise today's limit by N dollars (owner)",
    who: "owner",
    listed: true,
    slash: { option: { name: "raise", description: "raise today's limit by this many US dollars", prefix: "raise " } },
  },
  { name: "grants", summary: "what you allowed for a while or always (owner); /revoke N takes grant N back", who: "owner", listed: true, slash: {} },
  { name: "revoke", usage: "N", summary: "take grant N back (owner)", who: "owner", listed: false },
  { name: "grant", usage: "PATTERN", summary: "allow commands matching PATTERN in this chat for a while (owner)", who: "owner", listed: false },
  { name: "tasks", usage: "[cancel ID]", summary: "background tasks, running and recent; stop one (owner)", who: "owner", listed: true },
  { name: "private", summary: "make this chat private again once only you and I are in it (owner)", who: "owner", listed: true },
  { name: "undo", summary: "take back my last change to your memory files (owner)", who: "owner", listed: true },
  { name: "help", summary: "this list", who: "anyone", listed: true },
  { name: "start", summary: "this list", who: "anyone", listed: false },
  { name: "approve", usage: "CODE", summary: "approve a pairing code", who: "owner", listed: false },
];

const HELP = [
  "Commands:",
  ...COMMANDS.filter((c) => c.listed).map(
    (c) => `/${c.name}${c.aliases?.length ? ` (or ${c.aliases.map((a) => `/${a}`).join(", ")})` : ""}${c.usage ? ` ${c.usage}` : ""} — ${c.summary}`,
  ),
].join("\n");

const KNOWN = new Set(COMMANDS.flatMap((c) => [c.name, ...(c.aliases ?? [])]));

/** A platform's command menu for `audience`: the owner sees every listed command, everyone else those they may use. */
export function commandMenu(audience: "owner" | "everyone"): MenuCommand[] {
  return COMMANDS.filter((c) => c.listed && (audience === "owner" || c.who === "anyone")).map((c) => ({ name: c.name, description: c.summary }));
}

/** The owner's everyday commands as slash commands (Discord), each with its one optional argument. */
export function slashCommands(): MenuCommand[] {
  return COMMANDS.filter((c) => c.slash).map((c) => ({ name: c.name, description: c.summary, ...(c.slash?.option ? { option: c.slash.option } : {}) }));
}

/**
 * A slash command ("/stop", "/queue collect") or a bare "stop"; null for ordinary text.
 * Channels strip their own bot's suffix ("/stop@HearthBot"); one still carrying an "@" suffix
 * was meant for another bot and is not ours.
 */
export function parseCommand(text: string): Command | null {
  const t = text.trim();
  if (/^stop[.!]?$/i.test(t)) return { name: "stop", args: "" };
  const m = /^\/([A-Za-z_]+)(?:\s+([\s\S]*))?$/.exec(t);
  if (!m) return null;
  return { name: m[1]!.toLowerCase(), args: (m[2] ?? "").trim() };
}

export interface CommandOrigin {
  message: InboundMessage;
  sessionKey: string;
  scope: Scope;
  isOwner: boolean;
}

/** Runs a command and returns the reply text; null when the command answered with buttons itself. */
export async function handleCommand(ctx: CommandDeps, cmd: Command, origin: CommandOrigin): Promise<string | null> {
  const { sessionKey } = origin;
  if (!KNOWN.has(cmd.name)) return `Unknown command /${cmd.name}.\n\n${HELP}`;
  switch (cmd.name) {
    case "help":
    case "start":
      return HELP;
    case "stop": {
      const { stoppedRun, cleared } = ctx.lanes.stop(sessionKey);
      if (!stoppedRun && cleared === 0) return "Nothing to stop.";
      return cleared > 0 ? `Stopped. (${cleared} queued message${cleared === 1 ? "" : "s"} dropped.)` : "Stopped.";
    }
    case "new":
    case "reset": {
      const { stoppedRun } = ctx.lanes.stop(sessionKey);
      ctx.runtime.resetSession(sessionKey, cmd.name);
      return `${stoppedRun ? "Stopped the current answer. " : ""}Started a fresh conversation; the earlier one is kept on disk.`;
    }
    case "status":
      return statusText(ctx, origin);
    case "compact":
      return compact(ctx, origin, cmd.args);
    case "budget":
      return budgetCommand(ctx, origin, cmd.args);
    case "tasks":
      return tasksCommand(ctx, origin, cmd.args);
    case "queue": {
      if (!cmd.args) {
        const current = ctx.sessions.get(sessionKey)?.queueMode ?? ctx.config.agent.queueMode;
        return `Queue mode: ${current}. Choose with /queue ${queueModes.join("|")}.`;
      }
      const mode = cmd.args.toLowerCase() as QueueMode;
      if (!queueModes.includes(mode)) return `Unknown queue mode "${cmd.args}". Accepted: ${queueModes.join(", ")}.`;
      ctx.sessions.choose(sessionKey, origin.scope, { queueMode: mode });
      return `Queue mode for this conversation: ${mode}.`;
    }
    case "model": {
      const text = model(ctx, origin, cmd.args);
      // The owner's bare /model offers the models as buttons where the chat has them.
      if (origin.isOwner && !cmd.args && origin.message.channel !== "cli") {
        const m = origin.message;
        const to = { channel: m.channel, chatId: m.chat.id, ...(m.chat.threadId ? { threadId: m.chat.threadId } : {}) };
        if (await askModel(ctx, to, origin.sessionKey, origin.scope, text)) return null;
      }
      return text;
    }
    case "grants":
    case "revoke":
      return grantsCommand(ctx, origin, cmd);
    case "grant":
      return grantCommand(ctx, origin, cmd.args);
    case "undo":
      return undo(ctx, origin);
    case "voice":
      return voice(ctx, origin, cmd.args);
    case "private":
      return privateCommand(ctx, origin);
    case "approve": {
      if (!origin.isOwner || origin.scope !== "main") return "Only the owner can approve pairing codes, in a private chat.";
      if (!cmd.args) return "Usage: /approve CODE";
      ctx.pairing.reload(ctx.log);
      const approved = approvePairing(ctx, cmd.args);
      return approved
        ? `Approved ${approved.name} (${approved.channel}:${approved.userId}). They can talk to me now, in their own private conversation.`
        : `No pending pairing code "${cmd.args}". Codes expire after an hour; \`${hearthCmd("pairing list")}\` shows the pending ones.`;
    }
    default:
      return HELP;
  }
}

/**
 * `/private`: the owner re-checks a chat someone had joined (audience.ts). Private again only
 * when the members the platform reports with this very message are the owner alone.
 */
function privateCommand(ctx: CommandDeps, origin: CommandOrigin): string {
  if (!origin.isOwner) return "Only the owner can make a chat private.";
  const r = ctx.audiences.reopen(origin.message);
  switch (r.type) {
    case "reopened":
      return "This chat is private again: only you and I are in it, and I answer here with your memory.";
    case "private":
      return "This chat is private: only you and I are in it.";
    case "others":
      return `Not private: ${r.others.length > 0 ? `${peopleText(r.others)} can read this chat too` : "I cannot tell who else can read this chat"}. Once only you and I are in it, send /private again.`;
    case "group":
      return "This is a group chat: only a chat with just you and me can be private.";
    default:
      return r satisfies never;
  }
}

/** `/voice`: whether this chat's answers are spoken — on, off, or as voice.reply says (owner only). */
function voice(ctx: CommandDeps, origin: CommandOrigin, arg: string): string {
  const setting = ctx.sessions.get(origin.sessionKey)?.voice;
  const current = setting === "on" ? "on (every answer is spoken)" : setting === "off" ? "off (text only)" : `${ctx.config.voice.reply} (the default)`;
  const choice = arg.toLowerCase();
  if (!origin.isOwner) return choice ? "Only the owner can change spoken answers." : `Spoken answers here: ${current}.`;
  if (!choice) return `Spoken answers here: ${current}.${ctx.config.voice.tts ? "" : " No speech service is set up (voice.tts in config.json)."}\nChoose with /voice on|off|auto.`;
  if (choice !== "on" && choice !== "off" && choice !== "auto") return `Unknown choice "${arg}". Accepted: on, off, auto.`;
  ctx.sessions.choose(origin.sessionKey, origin.scope, { voice: choice === "auto" ? undefined : choice });
  const note = ctx.config.voice.tts || choice === "off" ? "" : " (No speech service is set up yet: add voice.tts to config.json.)";
  return choice === "on" ? `Spoken answers here: on.${note}` : choice === "off" ? "Spoken answers here: off." : `Spoken answers here: ${ctx.config.voice.reply} (the default).${note}`;
}

/** `/model`: the session's model, or a switch to another one (owner only). The next run uses it. */
function model(ctx: CommandDeps, origin: CommandOrigin, name: string): string {
  const current = ctx.sessions.get(origin.sessionKey)?.model ?? ctx.config.model.name;
  if (!origin.isOwner) return name ? "Only the owner can change the model." : `Model: ${current}`;
  const choices = ctx.runtime.modelChoices();
  if (!name) return `Model: ${current}\nChoices: ${choices.join(", ")}\nSwitch with /model NAME (any provider/model name); /model default goes back to ${ctx.config.model.name}.`;
  if (name === "default") {
    ctx.sessions.choose(origin.sessionKey, origin.scope, { model: undefined });
    return `Model for this conversation: ${ctx.config.model.name} (the default).`;
  }
  let info;
  try {
    info = ctx.runtime.modelInfo(name);
  } catch (err) {
    if (err instanceof UnknownModelError) return `${err.message}\nChoices: ${choices.join(", ")}`;
    throw err;
  }
  ctx.sessions.choose(origin.sessionKey, origin.scope, { model: info.name === ctx.config.model.name ? undefined : info.name });
  return `Model for this conversation: ${info.name}.${info.tools ? "" : " It cannot call tools, so it answers without them."}`;
}

/**
 * `/undo`: Hearth's newest memory change goes back (memory/history/history.ts). The owner's own
 * chat only: a shared chat never rewrites memory through the history, and its reply would name
 * the owner's files.
 */
async function undo(ctx: CommandDeps, origin: CommandOrigin): Promise<string> {
  if (!origin.isOwner || origin.scope !== "main") return "Only the owner can undo memory changes, in their own chat.";
  const memory = ctx.runtime.memory;
  if (!memory) return "No memory history is kept here, so there is nothing to undo.";
  const outcome = await ctx.lanes.exclusive(origin.sessionKey, () => memory.undoLast());
  if (outcome === "busy") return "I'm answering right now. Send /undo again when I'm done, or /stop first.";
  switch (outcome?.type) {
    case undefined:
      return "No memory history is kept here, so there is nothing to undo.";
    case "nothing":
      return "There is no change of mine to your memory files to undo.";
    case "undone":
      return `Undone: ${outcome.files.join(", ")} ${outcome.files.length === 1 ? "is" : "are"} back as ${outcome.files.length === 1 ? "it was" : "they were"} before my change ${outcome.commit.oid.slice(0, 7)}.`;
    case "failed":
      return `Not undone: ${outcome.reason}.`;
    case "changed-since":
      return `Not undone: ${outcome.files.join(", ")} changed after my change ${outcome.commit.oid.slice(0, 7)}, so I left everything as it is. \`${hearthCmd("memory log")}\` shows the history and \`${hearthCmd("memory restore FILE --at REV")}\` puts back any version.`;
  }
}

/** The line /status adds when the session's model runs without tools. */
function toolsLine(reason: string | undefined, scope: Scope): string {
  if (reason === "config" || reason === undefined) return "Tools: off — the model is configured without tools (tools: false)";
  return scope === "main" ? `Tools: off — the model cannot call tools (${reason})` : "Tools: off — the model cannot call tools";
}

async function compact(ctx: CommandDeps, origin: CommandOrigin, focus: string): Promise<string> {
  const sessionModel = ctx.sessions.get(origin.sessionKey)?.model;
  const outcome = await ctx.lanes.exclusive(origin.sessionKey, (signal) => ctx.runtime.compact(origin.sessionKey, origin.scope, focus || undefined, signal, sessionModel));
  if (outcome === "busy") return "I'm answering right now. Send /compact again when I'm done, or /stop first.";
  switch (outcome.type) {
    case "compacted": {
      const r = outcome.record;
      ctx.sessions.touch(origin.sessionKey, origin.scope, { contextTokens: r.tokensAfter });
      return `Compacted: about ${formatTokens(r.tokensBefore)} → ${formatTokens(r.tokensAfter)} tokens${r.summarized ? ", older turns summarised" : ""}. The full history stays on disk.`;
    }
    case "nothing":
      return "Nothing to compact yet: the conversation is still short.";
    case "failed":
      return `Compaction failed, the conversation is unchanged. ${modelErrorNotice(outcome.error, origin.scope)}`;
  }
}

/** `/grants` lists the grants in force, `/revoke N` removes one (the owner, in a private chat). */
function grantsCommand(ctx: CommandDeps, origin: CommandOrigin, cmd: Command): string {
  if (origin.scope !== "main") return "Only the owner can see or change grants, in a private chat.";
  const grants = ctx.approvals.grants;
  if (cmd.name === "revoke") {
    const n = Number(cmd.args);
    const gone = /^\d+$/.test(cmd.args) ? grants.revoke(n) : null;
    if (!gone) return `No grant ${cmd.args || "N"}: /grants lists them with their numbers; revoke one with /revoke N.`;
    ctx.log.info("approvals.revoked", { pattern: gone.pattern });
    return `Revoked: ${grantText(gone)}. It is asked about again.`;
  }
  const lines = grantLines(grants.active(), ctx.clock(), ctx.config.timezone);
  return lines.length === 0 ? `No grants: every risky command is asked about (approvals.exec: ${ctx.config.approvals.exec}).` : `Grants:\n${lines.join("\n")}\nRevoke one with /revoke N; allow a pattern of your own in a chat with /grant PATTERN.`;
}

/**
 * `/grant PATTERN`: the owner allows commands matching PATTERN (`*` within one command) in the
 * chat it is typed in, in the workspace, for approvals.grantMinutes. A button's grant covers
 * only the command it showed; this is the one way to a wider one.
 */
async function grantCommand(ctx: CommandDeps, origin: CommandOrigin, pattern: string): Promise<string> {
  if (!origin.isOwner) return "Only the owner can grant approvals.";
  const minutes = ctx.config.approvals.grantMinutes;
  if (!pattern) return `Usage: /grant PATTERN — commands matching it run without asking in this chat for ${minutes} min (\`*\` matches within one command, e.g. /grant make *).`;
  const m = origin.message;
  const made = await ctx.approvals.grantPattern({ pattern, folder: ctx.config.workspace, chat: chatKeyOf({ channel: m.channel, chatId: m.chat.id }, origin.sessionKey), by: m.sender.name, session: origin.sessionKey });
  if (made.type === "refused") return `Not granted: ${made.reason}.`;
  ctx.log.info("approvals.pattern_granted", { pattern: made.grant.pattern, chat: made.grant.chat });
  return `Granted for ${minutes} min: ${made.grant.pattern} ${placeText(made.grant.folder)}, in this chat. /grants lists it; /revoke N takes it back.`;
}

function budgetCommand(ctx: CommandDeps, origin: CommandOrigin, args: string): string {
  if (origin.scope !== "main") return "Only the owner can see or change the budget, in a private chat.";
  if (!args) return spendingLine(ctx.budget.status());
  const m = /^raise\s+\$?(\d+(?:\.\d{1,2})?)$/i.exec(args);
  const amount = m ? Number(m[1]) : NaN;
  if (ctx.config.budget.daily === undefined && ctx.config.budget.monthly === undefined) return "There is no budget to raise: no limit is set. Set budget.daily or budget.monthly in config.json to have one.";
  if (!(amount > 0)) return "Usage: /budget raise N — raises today's limit by N US dollars (e.g. /budget raise 5). For a lasting change, edit budget.daily or budget.monthly in config.json.";
  const s = ctx.budget.raise(amount);
  ctx.log.info("budget.raised", { usd: amount, day: s.day });
  return `Raised today's limit by ${usdText(amount)}, until midnight. ${spendingLine(s)}`;
}

function statusText(ctx: CommandDeps, origin: CommandOrigin): string {
  const status = gatewayStatus(ctx);
  const s = status.sessions.find((x) => x.key === origin.sessionKey);
  const info = sessionModelInfo(ctx, s?.model);
  const window = info.contextWindow;
  const lines = [`Model: ${info.name}`];
  if (!info.tools) lines.push(toolsLine(info.toolsOffReason, origin.scope));
  const pct = s?.contextPercent ?? 0;
  const warn = pct >= 80 ? " — near the limit" : pct >= 60 ? " — getting full" : "";
  lines.push(`Session: ${origin.sessionKey} (${origin.scope}) · context ${formatTokens(s?.contextTokens ?? 0)} of ${formatTokens(window)} (${pct}%)${warn}`);
  const waiting = ctx.approvals.waitingIn(origin.sessionKey);
  if (waiting) lines.push(`Waiting for the owner's approval: ${waiting}`);
  lines.push(s?.running ? `Answering for ${formatDuration(s.runningForMs ?? 0)}${s.queued ? ` · ${s.queued} queued` : ""}` : `Idle${s?.queued ? ` · ${s.queued} queued` : ""}`);
  const mode = ctx.sessions.get(origin.sessionKey)?.queueMode ?? ctx.config.agent.queueMode;
  lines.push(`Queue mode: ${mode}`);
  const reads = ctx.runtime.webReads(origin.sessionKey);
  if (reads.length > 0) lines.push(`Last run read web content: ${reads.join(", ")}`);
  if (origin.scope === "main") {
    const t = status.today;
    lines.push(
      `Today: ${t.runs} run${t.runs === 1 ? "" : "s"} · ${formatTokens(t.inputTokens + t.cacheReadTokens + t.cacheCreationTokens)} in (${formatTokens(t.cacheReadTokens)} cached) · ${formatTokens(t.outputTokens)} out · ≈ $${t.costUsd.toFixed(2)} (estimate)`,
    );
    lines.push(spendingLine(status.budget));
    lines.push(...mcpDownLines(status.mcp));
  }
  return lines.join("\n");
}


/**
 * `/tasks`: the background tasks; `/tasks cancel ID` stops one. The owner's main conversation
 * (every task), and a group the owner opened to tasks (only the tasks started there).
 */
function tasksCommand(ctx: CommandDeps, origin: CommandOrigin, args: string): string {
  if (origin.scope !== "main" && !opensTasks(origin.message, accessRules(ctx.config, origin.message.channel))) return "Background tasks are only available in the owner's private chat.";
  const viewer = { sessionKey: origin.sessionKey, scope: origin.scope };
  const cancel = /^cancel\s+(\S+)$/i.exec(args);
  // The terminal prints text as it is; the chats render markdown.
  const list = () => (origin.message.channel === "cli" ? taskListText : taskListBlock)(ctx.tasks.list(viewer));
  if (!cancel) return args ? `Usage: /tasks, or /tasks cancel ID.` : list();
  try {
    const v = ctx.tasks.cancel(cancel[1]!, viewer);
    return `Cancelling task ${v.id} ("${v.label}"); its result message will say when it has stopped.`;
  } catch (err) {
    if (err instanceof TaskInputError) return err.message;
    throw err;
  }
}
