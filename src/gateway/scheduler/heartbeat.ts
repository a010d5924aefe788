// The heartbeat (DESIGN §9): every `heartbeat.every` within `heartbeat.activeHours`, a run in
// main with HEARTBEAT.md as its checklist. An answer that is only HEARTBEAT_OK means "nothing to
// say" and goes nowhere; anything else goes to the owner's last chat. A heartbeat never waits
// in line: when main is busy it is skipped, and the next one comes at its usual time.
import { userTurn } from "../../agent/user-turn.ts";
import type { ReplyOutcome, ReplySink } from "../../channels/channel.ts";
import type { Logger } from "../../log.ts";
import { zonedParts } from "../../time.ts";
import type { Timers } from "./engine.ts";
import type { SchedulerHost } from "./host.ts";
import { targetText } from "./job.ts";

export const HEARTBEAT_OK = "HEARTBEAT_OK";
/** Words besides HEARTBEAT_OK that an answer may have and still mean "nothing to say". */
const MAX_EXTRA_WORDS = 5;
const MAX_CHECKLIST_CHARS = 20_000;

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
  /** HEARTBEAT.md's content; null when there is no such file. Must not throw. */
  readChecklist: () => string | null;
}

/** What one heartbeat did. */
export type BeatResult = "ran" | "outside_active_hours" | "main_busy" | "no_checklist" | "over_budget";

export class Heartbeat {
  readonly #o: HeartbeatOptions;
  #cancel: (() => void) | null = null;
  #seq = 0;

  constructor(opts: HeartbeatOptions) {
    this.#o = opts;
  }

  start(): void {
    if (this.#o.everyMs <= 0) return;
    this.#schedule();
  }

  stop(): void {
    this.#cancel?.();
    this.#cancel = null;
  }

  /** One heartbeat now: runs it, or says why not. */
  beat(): BeatResult {
    const now = this.#o.clock();
    if (!withinActiveHours(now, this.#o.activeHours, this.#o.timezone)) return this.#skip("outside_active_hours");
    if (this.#o.host.mainBusy()) return this.#skip("main_busy");
    const checklist = checklistOf(this.#o.readChecklist());
    if (checklist === null) return this.#skip("no_checklist");
    if (this.#o.host.checkBudget?.("heartbeat", "main").type === "refuse") return this.#skip("over_budget");
    const key = `heartbeat:${now}:${++this.#seq}`;
    this.#o.host.submit("main", {
      entryId: key,
      turn: userTurn({ text: heartbeatTurnText(checklist), channel: "heartbeat", sender: "Hearth", at: now, timezone: this.#o.timezone }, "system"),
      source: { channel: "heartbeat", sender: "Hearth", text: "(heartbeat: HEARTBEAT.md checklist)" },
      purpose: "heartbeat",
      replyKey: key,
      steerable: false,
      // A heartbeat that found nothing to report is not an exchange worth a log entry.
      worthLogging: (reply) => !isHeartbeatOk(reply),
      openReply: () => this.#sink(),
      arrivedAt: now,
    });
    this.#o.log.debug("heartbeat.started");
    return "ran";
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

  #sink(): ReplySink {
    const { host, log } = this.#o;
    let done = false;
    const end = async (text: string, outcome: ReplyOutcome) => {
      if (done) return;
      done = true;
      if (outcome !== "answered") return void log.warn("heartbeat.failed", { outcome, text: text.slice(0, 300) });
      if (isHeartbeatOk(text)) return void log.info("heartbeat.ok");
      const to = host.ownerTarget();
      try {
        await host.send(to, text);
        log.info("heartbeat.delivered", { to: targetText(to) });
      } catch (err) {
        log.warn("heartbeat.undelivered", { to: targetText(to), error: err });
      }
    };
    return {
      textDelta: () => {},
      textReset: () => {},
      toolStarted: () => {},
      toolFinished: () => {},
      finish: (text, outcome = "answered") => end(text, outcome),
      fail: (message) => end(message, "failed"),
    };
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

function heartbeatTurnText(checklist: string): string {
  return `Heartbeat check-in. Go through the checklist below (HEARTBEAT.md). If nothing needs the owner's attention, reply exactly ${HEARTBEAT_OK}. Anything else you answer is sent to the owner as a message.\n\n${checklist}`;
}
