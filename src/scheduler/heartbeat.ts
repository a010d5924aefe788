// The heartbeat (DESIGN §9, issue 14): every `heartbeat.every` within `heartbeat.activeHours`,
// one tick in its own light session (heartbeat-session.ts) on `heartbeat.model`, with
// HEARTBEAT.md as its checklist. An answer that is only HEARTBEAT_OK means "nothing to say" and
// leaves no trace in main; anything else goes to the owner's last chat and, once delivered, into
// main's transcript as an assistant message. A tick never waits in line: when main is busy it is
// skipped. It is also skipped without a model call when nothing can have changed
// (heartbeat-rules.ts), after `heartbeat.pauseAfterIdle` without a message from the owner, and
// when the budget says no.
import { userTurn } from "../agent/user-turn.ts";
import type { ReplyOutcome, ReplySink } from "../channels/channel.ts";
import type { Logger } from "../process/log.ts";
import { zonedParts } from "../process/time.ts";
import type { Timers } from "./engine.ts";
import { nothingCanHaveChanged } from "./heartbeat-rules.ts";
import type { SchedulerHost } from "./host.ts";
import { targetText } from "./job.ts";

export const HEARTBEAT_OK = "HEARTBEAT_OK";
/** Words besides HEARTBEAT_OK that an answer may have and still mean "nothing to say". */
const MAX_EXTRA_WORDS = 5;
const MAX_CHECKLIST_CHARS = 20_000;
/** The user turn of one tick: only the time and a nudge, so everything before it stays cached. */
export const TICK_TEXT = "Heartbeat check-in: go through the checklist now.";

export interface ActiveHours {
  /** "HH:MM", 24-hour clock, in the owner's time zone. */
  start: string;
  end: string;
}

export interface HeartbeatOptions {
  host: SchedulerHost;
  clock: () => number;
  timers: Timers;
  log: Logger;
  everyMs: number;
  activeHours: ActiveHours;
  timezone: string;
  /** No tick after this long without a message from the owner; 0: never pause. */
  pauseAfterIdleMs: number;
  /** HEARTBEAT.md's content; null when there is no such file. Must not throw. */
  readChecklist: () => string | null;
}

/** What one scheduled tick did: ran, or why not. */
export type BeatResult = "ran" | "outside_active_hours" | "paused" | "main_busy" | "no_checklist" | "unchanged" | "budget";

/** What `hearth heartbeat --now` reports. `scheduled` says why a scheduled tick would not run now (null: it would). */
export type TickReport =
  | { kind: "skipped"; reason: "no_checklist" | "budget"; detail: string }
  | { kind: "quiet"; text: string; scheduled: string | null }
  | { kind: "message"; text: string; to: string; scheduled: string | null }
  | { kind: "failed"; text: string; scheduled: string | null };

export class Heartbeat {
  readonly #o: HeartbeatOptions;
  readonly #startedAt: number;
  #cancel: (() => void) | null = null;
  #seq = 0;
  /** When the last tick that ended in HEARTBEAT_OK started; null after a tick that said something. */
  #lastOkAt: number | null = null;

  constructor(opts: HeartbeatOptions) {
    this.#o = opts;
    this.#startedAt = opts.clock();
  }

  start(): void {
    if (this.#o.everyMs <= 0) return;
    this.#schedule();
  }

  stop(): void {
    this.#cancel?.();
    this.#cancel = null;
  }

  /** One scheduled tick now: runs it, or says why not. */
  beat(): BeatResult {
    const now = this.#o.clock();
    const checklist = checklistOf(this.#o.readChecklist());
    const verdict = this.#verdict(now, checklist);
    if (verdict !== "ran") return this.#skip(verdict);
    if (this.#o.host.mainBusy()) return this.#skip("main_busy");
    this.#submit(now, this.#deliveringSink(now));
    this.#o.log.debug("heartbeat.started");
    return "ran";
  }

  /**
   * `hearth heartbeat --now`: one tick through main's lane (it waits behind a busy main), whatever
   * the hour, the pause or the skip rule, and reports what it would send instead of sending it.
   * Nothing reaches the owner, main's transcript or the daily log.
   */
  tryNow(): Promise<TickReport> {
    const now = this.#o.clock();
    const checklist = checklistOf(this.#o.readChecklist());
    if (checklist === null) return Promise.resolve({ kind: "skipped", reason: "no_checklist", detail: explain("no_checklist", this.#o) });
    if (!this.#budgetAllows()) return Promise.resolve({ kind: "skipped", reason: "budget", detail: explain("budget", this.#o) });
    const verdict = this.#verdict(now, checklist);
    const scheduled = verdict === "ran" ? null : explain(verdict, this.#o);
    return new Promise((resolve) => {
      let done = false;
      const end = async (text: string, outcome: ReplyOutcome) => {
        if (done) return;
        done = true;
        if (outcome !== "answered") resolve({ kind: "failed", text, scheduled });
        else if (isHeartbeatOk(text)) resolve({ kind: "quiet", text, scheduled });
        else resolve({ kind: "message", text, to: targetText(this.#o.host.ownerTarget()), scheduled });
      };
      this.#submit(now, sinkOf(end), true);
    });
  }

  /** Why a scheduled tick at `now` would not run ("ran" when it would), main's lane aside. */
  /** The one place the heartbeat asks the budget (budget.ts) whether it may spend now. */
  #budgetAllows(): boolean {
    return this.#o.host.checkBudget?.("heartbeat", "main", "main").type !== "refuse";
  }

  #verdict(now: number, checklist: string | null): BeatResult {
    const { host, activeHours, timezone, pauseAfterIdleMs } = this.#o;
    if (!withinActiveHours(now, activeHours, timezone)) return "outside_active_hours";
    const lastOwner = host.ownerMessageAt() ?? this.#startedAt;
    if (pauseAfterIdleMs > 0 && now - lastOwner >= pauseAfterIdleMs) return "paused";
    if (checklist === null) return "no_checklist";
    if (nothingCanHaveChanged({ checklist, lastOkAt: this.#lastOkAt, workspaceChangedAt: host.workspaceChangedAt() })) return "unchanged";
    if (!this.#budgetAllows()) return "budget";
    return "ran";
  }

  #submit(now: number, sink: ReplySink, dryRun = false): void {
    const key = `heartbeat:${now}:${++this.#seq}`;
    this.#o.host.submit("main", {
      entryId: key,
      turn: userTurn({ text: TICK_TEXT, channel: "heartbeat", sender: "Hearth", at: now, timezone: this.#o.timezone }, "system"),
      source: { channel: "heartbeat", sender: "Hearth", text: "(heartbeat: HEARTBEAT.md checklist)" },
      purpose: "heartbeat",
      replyKey: key,
      steerable: false,
      // A tick that found nothing to report, or a dry run, is not an exchange worth a log entry.
      worthLogging: (reply) => !dryRun && !isHeartbeatOk(reply),
      openReply: () => sink,
      arrivedAt: now,
    });
  }

  #schedule(): void {
    this.#cancel = this.#o.timers.set(this.#o.everyMs, () => {
      try {
        this.beat();
      } catch (err) {
        this.#o.log.error("heartbeat.failed", { error: err });
      }
      this.#schedule();
    });
  }

  #skip(result: Exclude<BeatResult, "ran">): BeatResult {
    this.#o.log.debug("heartbeat.skipped", { reason: result });
    return result;
  }

  /** The reply of a scheduled tick: HEARTBEAT_OK stays quiet; anything else goes to the owner, then into main. */
  #deliveringSink(startedAt: number): ReplySink {
    const { host, log } = this.#o;
    return sinkOf(async (text, outcome) => {
      if (outcome !== "answered") return void log.warn("heartbeat.failed", { outcome, text: text.slice(0, 300) });
      if (isHeartbeatOk(text)) {
        this.#lastOkAt = startedAt;
        return void log.info("heartbeat.ok");
      }
      this.#lastOkAt = null;
      const to = host.ownerTarget();
      try {
        const sent = await host.send(to, text, "heartbeat");
        log.info("heartbeat.delivered", { to: targetText(sent.to), ...(sent.type === "kept" ? { kept: "terminal mailbox" } : {}) });
      } catch (err) {
        return void log.warn("heartbeat.undelivered", { to: targetText(to), error: err });
      }
      // Still on main's lane (a reply finishes before its lane is released): no run interleaves.
      host.recordInMain(text);
    });
  }
}

/** A sink that ignores the stream and calls `end` once with the final text. */
function sinkOf(end: (text: string, outcome: ReplyOutcome) => Promise<void>): ReplySink {
  let done = false;
  const once = async (text: string, outcome: ReplyOutcome) => {
    if (done) return;
    done = true;
    await end(text, outcome);
  };
  return {
    textDelta: () => {},
    textReset: () => {},
    toolStarted: () => {},
    toolFinished: () => {},
    finish: (text, outcome = "answered") => once(text, outcome),
    fail: (message) => once(message, "failed"),
  };
}

/** A sentence for the owner saying why a tick did not (or a scheduled one would not) run. */
export function explain(reason: Exclude<BeatResult, "ran">, o: Pick<HeartbeatOptions, "activeHours" | "pauseAfterIdleMs">): string {
  switch (reason) {
    case "outside_active_hours":
      return `it is outside heartbeat.activeHours (${o.activeHours.start}–${o.activeHours.end})`;
    case "paused":
      return `the owner has not written for heartbeat.pauseAfterIdle (${Math.round(o.pauseAfterIdleMs / 3_600_000)} h); the next message resumes it`;
    case "main_busy":
      return "the main conversation is busy";
    case "no_checklist":
      return "HEARTBEAT.md has no checklist items (only headings or comments, or no file)";
    case "unchanged":
      return `nothing can have changed since the last HEARTBEAT_OK: no workspace file changed and HEARTBEAT.md has no time-dependent item`;
    case "budget":
      return "the spending budget does not allow background runs now";
    default:
      return reason satisfies never;
  }
}

/**
 * True when the answer means "nothing to report": HEARTBEAT_OK (in any markdown dress, any
 * case), with at most a few other words around it, or nothing at all.
 */
export function isHeartbeatOk(text: string): boolean {
  const marked = text.replace(/heartbeat[_\s-]?ok/gi, " \u0001 ");
  const words = marked
    .replace(/[^\p{L}\p{N}\u0001]+/gu, " ")
    .split(" ")
    .filter(Boolean);
  const oks = words.filter((w) => w === "\u0001").length;
  if (words.length === 0) return true;
  return oks >= 1 && words.length - oks <= MAX_EXTRA_WORDS;
}

/** Is `at` inside the active hours (in `timezone`)? start == end means all day; start > end spans midnight. */
export function withinActiveHours(at: number, hours: ActiveHours, timezone: string): boolean {
  const start = minutesOf(hours.start);
  const end = minutesOf(hours.end);
  if (start === end) return true;
  const p = zonedParts(at, timezone);
  const now = Number(p.hour) * 60 + Number(p.minute);
  return start < end ? now >= start && now < end : now >= start || now < end;
}

const minutesOf = (hhmm: string): number => {
  const [h, m] = hhmm.split(":").map(Number);
  return (h ?? 0) * 60 + (m ?? 0);
};

/** The checklist without comments; null when nothing is left to check (no file, only headings). */
export function checklistOf(content: string | null): string | null {
  if (content === null) return null;
  const text = content.replace(/<!--[\s\S]*?-->/g, "").trim();
  const meaningful = text.split("\n").some((l) => l.trim() && !/^#+\s/.test(l.trim()));
  if (!meaningful) return null;
  return text.length > MAX_CHECKLIST_CHARS ? `${text.slice(0, MAX_CHECKLIST_CHARS)}\n[… HEARTBEAT.md truncated]` : text;
}
