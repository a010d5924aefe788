// The approvals: a gate per run (agent/tool.ts ToolGate) that asks the owner before a risky or
// tainted tool call acts, waits for a press, a timeout or /stop, and records every decision.
//
// Only the owner's press counts: anyone else is told so and nothing changes. A question is
// settled exactly once (the first owner press, the timeout or the run's abort, whichever comes
// first); later presses are told it is no longer open. Questions waiting are on disk
// (pending.ts): after a restart their buttons are taken away and the retried run asks again, so
// a command runs at most once per press.
import { randomBytes } from "node:crypto";
import path from "node:path";
import type { Scope } from "../agent/messages.ts";
import type { ToolGate } from "../agent/tool.ts";
import type { ChoicePress, DeliveryTarget } from "../channels/channel.ts";
import type { Message } from "../agent/messages.ts";
import { linkSource, outsideContentIn, outsideContentOfTool } from "../agent/outside-content.ts";
import type { Logger } from "../process/log.ts";
import { AuditLog, type Decision } from "./audit.ts";
import { CONNECT, connectionFacts, connectionGrant, destinationText, wideReachText, type GrantReach } from "./connection-grants.ts";
import { chatKeyOf, GrantStore, grantText, placeText, type Grant } from "./grants.ts";
import type { ApprovalHost } from "./host.ts";
import { PendingQuestions } from "./pending.ts";
import { canonicalPattern, judge, outsideBeyondProxy, patternProblem, type ActionFacts, type ExecMode } from "./policy.ts";
import { factsOf } from "./tool-facts.ts";
import { shellReader } from "./shell.ts";

export interface ApprovalsConfig {
  exec: ExecMode;
  timeoutSeconds: number;
  grantMinutes: number;
  ask: readonly string[];
  allow: readonly string[];
  /** See PolicyConfig.networkWalled: the daemon sets it when commands run in the sandbox. */
  networkWalled?: boolean;
}

export interface ApprovalsOptions {
  config: ApprovalsConfig;
  home: string;
  host: ApprovalHost;
  log: Logger;
  /** Grants' expiry is judged by it (tests move it past a grant's end). */
  clock?: () => number;
  /** The audit log, when the daemon shares it with the egress policy; absent: `<home>/approvals.jsonl`. */
  audit?: AuditLog;
}

/** What a run is, for its gate. */
export interface RunFacts {
  sessionKey: string;
  scope: Scope;
  /** The chat the run answers; null for background work (asked in the owner's preferred chat). */
  chat: DeliveryTarget | null;
  /**
   * Set when the run started with outside content, as the clause the question gives as its
   * reason: "this run read a message from Bob", "this task was started by an answer that read a
   * web page". Null: the run's own input is the owner's or Hearth's.
   */
  taintedBy: string | null;
  /** A background task's run: the question names the task (its chat is the one that started it). */
  task?: { id: string; label: string };
  /**
   * The model's view of the session now (its transcript's messages). Called at each judged call:
   * outside content of earlier turns still in view taints the run (outside-content.ts), and a
   * URL read there may be fetched. Must not throw. Absent: only this run's own reads count.
   */
  view?: () => readonly Message[];
}

/**
 * The buttons. "Allow for N min" and "Always" grant exactly what the question showed; a
 * connection's question adds the wider reaches as choices of their own, worded as such, after
 * "Allow for N min" and never first (Telegram's two-a-row keyboard gives them a row of their own;
 * Discord's row takes five, so Deny goes to a second).
 */
const CHOICES = (minutes: number, tool: string) => [
  { id: "once", label: "Allow once" },
  { id: "for", label: `Allow for ${minutes} min` },
  ...(tool === CONNECT ? WIDE.map((w) => ({ id: w.id, label: w.label(minutes) })) : []),
  { id: "always", label: "Always" },
  { id: "deny", label: "Deny" },
];
/** A connection question's wider choices, each for approvals.grantMinutes. */
const WIDE = [
  { id: "dest", reach: "destination", label: (minutes: number) => `Any command, ${minutes} min` },
  { id: "host", reach: "host", label: (minutes: number) => `Whole host, ${minutes} min` },
] as const;
/** A call a host grant could never cover (it may reach a proxy or a second destination): nothing lasting to offer. */
const ONCE_CHOICES = [
  { id: "once", label: "Allow once" },
  { id: "deny", label: "Deny" },
];

/** What `/grant PATTERN` made, or why it refused. */
export type PatternGrant = { type: "granted"; grant: Grant } | { type: "refused"; reason: string };

export { CONNECT };

type Choice = "once" | "for" | "always" | "deny" | (typeof WIDE)[number]["id"];
type Outcome = { type: "press"; choice: Choice; by: string } | { type: "timeout" } | { type: "stopped" };

interface Waiter {
  session: string;
  summary: string;
  question: OpenQuestion;
  /** The choices its question offered: a press of any other (an old or forged button) changes nothing. */
  choices: readonly string[];
  resolve: (o: Outcome) => void;
}

/** A question waiting for the owner, as the dashboard lists it (its buttons press through `press`). */
export interface OpenQuestion {
  key: string;
  tool: string;
  command: string;
  /** Where it acts: a folder, or an SSH exec host (grants.ts placeText). */
  folder: string;
  hosts: string[];
  reason: string;
  session: string;
  at: number;
}

export class Approvals {
  readonly grants: GrantStore;
  readonly audit: AuditLog;
  readonly #pending: PendingQuestions;
  readonly #o: ApprovalsOptions;
  readonly #clock: () => number;
  readonly #waiting = new Map<string, Waiter>();

  constructor(opts: ApprovalsOptions) {
    this.#o = opts;
    this.#clock = opts.clock ?? Date.now;
    this.grants = new GrantStore(path.join(opts.home, "grants.json"), opts.log, this.#clock);
    this.audit = opts.audit ?? new AuditLog(path.join(opts.home, "approvals.jsonl"), opts.log);
    this.#pending = new PendingQuestions(path.join(opts.home, "approvals-pending.json"), opts.log, this.#clock());
    // The policy ignores an allow pattern with a wildcard on a target; the owner learns why here.
    const allow = opts.config.allow;
    if (allow.length > 0) {
      void shellReader().then((reader) => {
        for (const pattern of allow) {
          const reason = patternProblem(reader, pattern);
          if (reason) opts.log.warn("approvals.allow_ignored", { pattern, reason: `${reason}; this approvals.allow entry is ignored` });
        }
      });
    }
  }

  /**
   * The owner's `/grant PATTERN` in a chat: `pattern` (`*` within one command) is allowed in
   * `folder` for runs of `chat` (`chatKeyOf`) for approvals.grantMinutes. Refused with the reason
   * when it puts a wildcard where a program, code or the target of a delete, kill, write or
   * device goes (policy.ts patternProblem).
   */
  async grantPattern(p: { pattern: string; folder: string; chat: string; by: string; session: string }): Promise<PatternGrant> {
    const reader = await shellReader();
    const reason = patternProblem(reader, p.pattern);
    if (reason) return { type: "refused", reason };
    const at = this.#clock();
    const grant: Grant = { tool: "exec", kind: "pattern", pattern: canonicalPattern(reader, p.pattern), folder: p.folder, chat: p.chat, host: null, port: null, expiresAt: at + this.#o.config.grantMinutes * 60_000, by: p.by, at };
    this.grants.add(grant);
    this.audit.append({ at, decision: "allowed_for", tool: "exec", command: `/grant ${grant.pattern}`, folder: p.folder, host: null, session: p.session, by: p.by });
    return { type: "granted", grant };
  }

  /**
   * Takes the buttons off the questions a previous process left open (call once the channels
   * run). The runs that asked them are retried by the inbox's recovery, and ask again.
   */
  async retireLeftovers(): Promise<void> {
    // Taken at once (synchronously): questions asked from here on are never among them.
    for (const q of this.#pending.takeLeftovers()) {
      this.audit.append({ at: this.#clock(), decision: "expired", tool: q.tool, command: q.command, folder: q.folder, session: q.session });
      if (q.shown) await this.#o.host.settle(q.shown.to, q.shown.messageId, `${q.text}\n\n⏹ Hearth restarted before this was answered. If the task still needs it, you are asked again.`);
    }
  }

  /** The call the session waits on the owner for ("exec: rm -r build"), or null. */
  waitingIn(sessionKey: string): string | null {
    for (const w of this.#waiting.values()) if (w.session === sessionKey) return w.summary;
    return null;
  }

  /** The questions waiting for the owner now, oldest first. */
  open(): OpenQuestion[] {
    return [...this.#waiting.values()].map((w) => w.question);
  }

  /** A button press on any channel (or the dashboard); resolves with the answer only the presser sees. */
  async press(p: ChoicePress): Promise<string> {
    const waiter = this.#waiting.get(p.key);
    if (!waiter) return "This request is no longer open.";
    if (!p.by.isOwner) {
      this.#o.log.info("approvals.press_refused", { key: p.key, by: p.by.id, channel: p.channel });
      return "Only the owner can approve.";
    }
    if (!waiter.choices.includes(p.choiceId)) return "Unknown choice.";
    this.#waiting.delete(p.key);
    waiter.resolve({ type: "press", choice: p.choiceId as Choice, by: p.by.name });
    return p.choiceId === "deny" ? "Denied." : "Allowed.";
  }

  gateFor(run: RunFacts): ToolGate {
    let read: string | null = null;
    // The page's links this run followed unasked (a run that holds nothing private, below).
    const followed = new Set<string>();
    // The clause the question gives: what this run read itself, what it started with, or what
    // earlier turns still in the model's view hold.
    const taint = (): string | null => {
      if (read) return `this run read ${read}`;
      if (run.taintedBy) return run.taintedBy;
      const inView = run.view ? outsideContentIn(run.view()) : null;
      return inView ? `earlier in this conversation it read ${inView}, still in its context (/new clears it)` : null;
    };
    return {
      observe: (name) => {
        read ??= outsideContentOfTool(name);
      },
      observeOutside: (what) => {
        read ??= what;
      },
      taint,
      permitConnection: async (dest, request, mode, signal) => {
        const tainted = taint();
        if (mode === "tainted" && !tainted) return null;
        if (request.url && run.view && this.#followsLink(run, request.url, followed)) return null;
        // A grant names the tool and action that connect, from where, to this host and port, in this chat.
        const chat = chatKeyOf(run.chat, run.sessionKey);
        const facts = await connectionFacts(dest, request, chat);
        const grant = this.grants.covering(facts, chat);
        if (grant) {
          this.#record("granted", facts, run, { by: `grant: ${grant.pattern}` });
          return null;
        }
        return this.#ask(facts, mode === "always" ? "every new host is asked about (egress.ask: always)" : tainted!, run, signal);
      },
      admit: async (call, ctx) => {
        const facts = await factsOf(call, ctx.workspace);
        if (!facts) return null;
        const tainted = taint();
        const refusal = await this.#admit(facts, run, tainted, ctx.signal);
        // A command whose network the proxy does not see (on an SSH host, or unconfined) may
        // bring outside content in: its output taints the run, read as the line is, failing closed.
        if (refusal === null && facts.tool === "exec" && ctx.tookIn) {
          const beyond = await outsideBeyondProxy(facts, this.#o.config.networkWalled === true);
          if (beyond) ctx.tookIn(beyond);
        }
        return refusal;
      },
    };
  }

  /**
   * Whether a tainted run may fetch `url` unasked. What the person wrote they asked for. A link
   * from outside content was not built from workspace data, but which links a run follows is a
   * channel of its own (a page listing /k/0 … /k/f gets a secret back one digit per fetch): a run
   * that holds private data — the main scope, whose context holds the owner's memory and whose
   * tools reach the owner's files — asks before each one; a run that holds none follows at most
   * LINKS_PER_RUN of them, then asks.
   */
  #followsLink(run: RunFacts, url: string, followed: Set<string>): boolean {
    const source = linkSource(run.view!(), url);
    if (source === "person") return true;
    if (source !== "outside" || run.scope === "main") return false;
    if (followed.has(url)) return true;
    if (followed.size >= LINKS_PER_RUN) return false;
    followed.add(url);
    return true;
  }

  async #admit(facts: ActionFacts, run: RunFacts, tainted: string | null, signal: AbortSignal): Promise<string | null> {
    // A shared chat's run holds nothing of the owner's: it sends only files of its own folder
    // (the outgoing-file rule), its tasks run in its own scope and an MCP server the owner
    // opened to it sees only what its members could tell it. Nothing private leaves, so there
    // is nothing to ask. Its commands are judged like any.
    if (facts.tool !== "exec" && run.scope !== "main") return null;
    const verdict = await judge(facts, this.#o.config, tainted);
    if (verdict.type === "run") return null;
    const grant = this.grants.covering(facts, chatKeyOf(run.chat, run.sessionKey));
    if (grant) {
      this.#record("granted", facts, run, { by: `grant: ${grant.pattern}` });
      return null;
    }
    return this.#ask(facts, verdict.reason, run, signal);
  }

  async #ask(facts: ActionFacts, reason: string, run: RunFacts, signal: AbortSignal): Promise<string | null> {
    if (signal.aborted) return STOPPED;
    const { config, host, log } = this.#o;
    const key = randomBytes(6).toString("base64url");
    const lasting = !(facts.reroutes && facts.hosts.length > 0);
    const choices = lasting ? CHOICES(config.grantMinutes, facts.tool) : ONCE_CHOICES;
    // What each lasting choice covers, one line each, as the settled question repeats it.
    const scopeLines = lasting
      ? [
          `Allow for ${config.grantMinutes} min / Always cover: ${scopeText(facts, run, "command")}`,
          ...(facts.tool === CONNECT ? WIDE.map((w) => `${w.label(config.grantMinutes)} covers: ${scopeText(facts, run, w.reach)}`) : []),
        ]
      : ["Allow once only: it may reach a proxy or another destination, so no grant could cover it"];
    const text = questionText(facts, reason, run, scopeLines);
    const { promise: outcome, resolve } = Promise.withResolvers<Outcome>();
    const question: OpenQuestion = { key, tool: facts.tool, command: facts.command, folder: facts.folder, hosts: facts.hosts, reason, session: run.sessionKey, at: this.#clock() };
    this.#waiting.set(key, { session: run.sessionKey, summary: actionLine(facts, facts.command), question, choices: choices.map((c) => c.id), resolve });
    this.#record("asked", facts, run, { reason });
    // On disk before it is sent: a crash in between still finds it (if not its message).
    this.#pending.add({ key, text, session: run.sessionKey, tool: facts.tool, command: facts.command, folder: facts.folder, at: this.#clock() });
    const shown = await host.ask(run.chat, { key, kind: "approval", text, choices });
    if (!shown) {
      this.#waiting.delete(key);
      this.#pending.remove(key);
      this.#record("not_asked", facts, run, {});
      if (facts.tool === CONNECT) return `the connection to ${facts.hosts[0]} needs the owner's approval, and no chat that can show approval buttons is connected`;
      return `Not run: ${facts.tool} needs the owner's approval (${reason}), and no chat that can show approval buttons is connected. Tell the owner what you wanted to do.`;
    }
    this.#pending.shown(key, shown);
    log.info("approvals.asked", { key, tool: facts.tool, session: run.sessionKey, channel: shown.to.channel });
    const timer = setTimeout(() => resolve({ type: "timeout" }), config.timeoutSeconds * 1000);
    const onAbort = () => resolve({ type: "stopped" });
    signal.addEventListener("abort", onAbort, { once: true });
    // A /stop while the question was being sent: the listener came too late to hear it.
    if (signal.aborted) onAbort();
    const o = await outcome;
    clearTimeout(timer);
    signal.removeEventListener("abort", onAbort);
    this.#waiting.delete(key);
    this.#pending.remove(key);
    const settled = this.#decide(o, facts, run);
    await host.settle(shown.to, shown.messageId, `${text}\n\n${settled.line}`);
    return settled.answer;
  }

  /** Records the outcome (and the grant it makes); the line the question shows, and the model's answer (null: run it). */
  #decide(o: Outcome, facts: ActionFacts, run: RunFacts): { line: string; answer: string | null } {
    const { config } = this.#o;
    // A connection's answer is the refusal its program is told.
    const connection = facts.tool === CONNECT;
    const host = facts.hosts.length === 1 ? facts.hosts[0]! : null;
    if (o.type === "timeout") {
      this.#record("timed_out", facts, run, {});
      return {
        line: `⌛ Not answered within ${minutesText(config.timeoutSeconds)}: ${connection ? "not connected" : "not run"}.`,
        answer: connection
          ? `the owner did not allow ${host} within ${config.timeoutSeconds} s`
          : `Not run: the owner did not approve this ${facts.tool} call within ${config.timeoutSeconds} s (no answer counts as no). Tell the owner what you wanted to do; they can allow it when they are back.`,
      };
    }
    if (o.type === "stopped") {
      this.#record("stopped", facts, run, {});
      return { line: `⏹ Stopped before it was answered: ${connection ? "not connected" : "not run"}.`, answer: connection ? "the run was stopped" : STOPPED };
    }
    switch (o.choice) {
      case "deny":
        this.#record("denied", facts, run, { by: o.by });
        return {
          line: `❌ Denied by ${o.by}.`,
          answer: connection ? `the owner denied ${host}` : `Not run: the owner denied this ${facts.tool} call. Do not try to reach the same result another way; tell the owner what you wanted to do and why.`,
        };
      case "once":
        this.#record("allowed_once", facts, run, { by: o.by });
        return { line: `✅ Allowed once by ${o.by}.`, answer: null };
      case "for":
      case "always":
      case "dest":
      case "host": {
        // Only the choices the question offered reach here (press): a call no grant could cover had none of these.
        const expiresAt = o.choice === "always" ? null : this.#clock() + config.grantMinutes * 60_000;
        const reach: GrantReach = WIDE.find((w) => w.id === o.choice)?.reach ?? "command";
        const chat = chatKeyOf(run.chat, run.sessionKey);
        const made = { expiresAt, by: o.by, at: this.#clock() };
        const grant: Grant = connection ? connectionGrant(facts, reach, chat, made) : { tool: facts.tool, kind: "command", pattern: facts.canonical, folder: facts.folder, chat, host, port: null, ...made };
        this.grants.add(grant);
        this.#record(o.choice === "always" ? "always" : "allowed_for", facts, run, { by: o.by, covers: grantText(grant) });
        const scope = scopeText(facts, run, reach);
        return { line: o.choice === "always" ? `✅ Always allowed by ${o.by}: ${scope}` : `✅ Allowed for ${config.grantMinutes} min by ${o.by}: ${scope}`, answer: null };
      }
    }
  }

  #record(decision: Decision, facts: ActionFacts, run: RunFacts, extra: { by?: string; reason?: string; covers?: string }): void {
    this.audit.append({ at: this.#clock(), decision, tool: facts.tool, command: facts.command, folder: facts.folder, host: facts.hosts[0] ?? null, ...(facts.port ? { port: facts.port } : {}), session: run.sessionKey, ...extra });
  }
}

/** The links from outside content a run that holds nothing private follows unasked. */
export const LINKS_PER_RUN = 8;

const STOPPED = "Not run: the run was stopped while waiting for the owner's approval.";

const minutesText = (seconds: number) => (seconds % 60 === 0 ? `${seconds / 60} min` : `${seconds} s`);

/** The question the owner is shown, with the run's task when it is one, and what each lasting choice would cover. */
function questionText(facts: ActionFacts, reason: string, run: RunFacts, scopeLines: string[]): string {
  const task = run.task ? [`task: ${run.task.label} (${run.task.id})`] : [];
  if (facts.tool === CONNECT) {
    return [`🌐 Allow a connection?`, ...task, shownCommand(facts.command), `to: ${facts.hosts[0]}, port ${facts.port}`, `chat: ${chatKeyOf(run.chat, run.sessionKey)}`, `why: ${reason}`, ...scopeLines].join("\n");
  }
  return [`🔐 Approve this?`, ...task, actionLine(facts, shownCommand(facts.command)), ...(facts.notes ?? []), placeText(facts.folder), ...(facts.hosts.length ? [`host: ${facts.hosts.join(", ")}`] : []), `why: ${reason}`, ...scopeLines].join("\n");
}

/** The longest command a grant's scope shows in full; a longer one is "this exact command". */
const SCOPE_COMMAND_MAX = 200;

/**
 * What a press of `reach` covers, as the question shows it before the press and the settled
 * question after: "rm -r build in ~/site, in this chat" (a background run without a chat: "only
 * for cron:backup"), "… to status.example only" for a host grant; a connection's "exec: curl …
 * in ~/site → example.com:443, in this chat", or a wider reach's "any command or fetch →
 * example.com:443, …" / "… → example.com, any port, …".
 */
function scopeText(facts: ActionFacts, run: RunFacts, reach: GrantReach): string {
  const chat = run.chat ? "in this chat" : `only for ${run.sessionKey}`;
  const command = facts.canonical.length <= SCOPE_COMMAND_MAX && !facts.canonical.includes("\n") ? facts.canonical : "this exact command";
  if (facts.tool === CONNECT) {
    const host = facts.hosts[0]!;
    if (reach !== "command") return `${wideReachText(host, reach, facts.port ?? null)}, ${chat}`;
    const place = facts.folder === chatKeyOf(run.chat, run.sessionKey) ? "" : ` ${placeText(facts.folder)}`;
    return `${command}${place} → ${destinationText(host, facts.port ?? null)}, ${chat}`;
  }
  const host = facts.hosts.length === 1 ? `, to ${facts.hosts[0]} only` : "";
  return `${command} ${placeText(facts.folder)}, ${chat}${host}`;
}

/** "exec: rm -r build"; send_file's and web_fetch's commands name their tool already ("send_file MEMORY.md"). */
const actionLine = (facts: ActionFacts, command: string): string => (facts.tool === "exec" ? `exec: ${command}` : command);

/** A command's longest part a question shows whole; Discord takes 2,000 characters a message, Telegram 4,096. */
const SHOWN_MAX = 1_200;

/** The command as the question shows it: whole, or its start and end around a count of what is left out. */
export function shownCommand(command: string): string {
  if (command.length <= SHOWN_MAX) return command;
  const head = command.slice(0, 900);
  const tail = command.slice(-250);
  return `${head} [… ${command.length - head.length - tail.length} characters not shown …] ${tail}`;
}

