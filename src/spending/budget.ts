// Budgets (issue 14): `budget.daily` and `budget.monthly` in USD, and the shared scopes' daily
// sub-limit. The gateway asks `check` before a run starts; inside it every paid call is reserved
// first (reservations.ts), and a limit the next model call did not fit is marked spent here for
// the rest of its period, so the next message is refused before any call. The ledger's records
// drive the 80 % and 100 % notices. What must outlive a restart (notices sent, chats told they
// are resting, limits marked spent, today's raise) is in <home>/budget.json, replaced atomically.
import { readFileSync } from "node:fs";
import path from "node:path";
import type { Scope } from "../agent/messages.ts";
import type { Logger } from "../process/log.ts";
import { writeFileAtomic } from "../state/storage.ts";
import type { Config } from "../config/schema.ts";
import type { Spent, UsageLedger } from "./ledger.ts";
import type { RunPurpose } from "./usage-record.ts";
import type { BudgetStatus, Limit } from "./budget-status.ts";
import { spendingLine, usdText } from "./spending-text.ts";

export { spendingLine, usdText };
export type { BudgetStatus, Limit };

export interface BudgetCheck {
  scope: Scope;
  purpose: RunPurpose;
  sessionKey: string;
}

export type LimitName = "daily" | "monthly" | "shared";

export type BudgetDecision =
  | { type: "allow" }
  /** The owner's own message past the limit: it runs, and its reply is marked. */
  | { type: "allow-over-budget"; limit: LimitName }
  /** `tooSmall`: the limit was marked too small for one answer (markSpent), not spent. */
  | { type: "refuse"; limit: LimitName; reason: string; tooSmall?: true };

interface StateFile {
  version: 1;
  /** The day `raisedUsd` applies to. */
  day: string;
  raisedUsd: number;
  /** Notices sent: "80:day:2026-11-23", "100:month:2026-11"… */
  notices: string[];
  /** Chats already told "I'm resting": "<period>:<sessionKey>". */
  resting: string[];
  /**
   * Limits a model call did not fit, even with no other call in progress: "daily:2026-11-23",
   * "shared:2026-11-23", "monthly:2026-11". Absent in a file written before reservations.
   */
  spent?: string[];
  /** Of those, the limits that were too small for one call even with nothing spent (same keys). */
  tooSmall?: string[];
}

export interface BudgetOptions {
  config: Config["budget"];
  ledger: UsageLedger;
  home: string;
  log: Logger;
  /** Tells the owner, on the channel they used last. Must not throw. */
  notifyOwner: (text: string) => Promise<void>;
}

export const RESTING_TEXT = "I'm resting for today: my owner's budget for the day is spent. I'll be back tomorrow.";
/** The resting note of a shared chat whose limit is too small for one answer: nothing was spent. */
export const TOO_SMALL_TEXT = "I'm resting: my owner's budget for this chat is too small for one answer.";
export const OVER_BUDGET_MARK = "(over budget)";

export const budgetFile = (home: string): string => path.join(home, "budget.json");

export class Budget {
  readonly #o: BudgetOptions;
  readonly #file: string;
  #state: StateFile;

  constructor(opts: BudgetOptions) {
    this.#o = opts;
    this.#file = budgetFile(opts.home);
    this.#state = this.#load();
    opts.ledger.onRecord(() => this.#afterRecord());
  }

  /** Whether a run may spend. Background work and shared scopes stop at a limit; the owner is marked (or stopped by hardStop). */
  check(req: BudgetCheck): BudgetDecision {
    // Part of a run that was allowed; its calls are reserved one by one (reservations.ts).
    if (req.purpose === "compaction" || req.purpose === "flush") return { type: "allow" };
    const s = this.status();
    const over = this.#overLimit(s);
    // A shared scope's work (its chat runs, and the background tasks a group started) also stops at the shared limit.
    if (req.scope === "shared") {
      const limit = over ?? (reached(s.sharedToday) || this.#isSpent("shared", s) ? "shared" : null);
      return limit ? this.#refuse(limit, s) : { type: "allow" };
    }
    if (req.purpose === "heartbeat" || req.purpose === "cron" || req.purpose === "task") {
      return over ? this.#refuse(over, s) : { type: "allow" };
    }
    if (!over) return { type: "allow" };
    return this.#o.config.hardStop ? this.#refuse(over, s) : { type: "allow-over-budget", limit: over };
  }

  #refuse(limit: LimitName, s: BudgetStatus): BudgetDecision {
    const tooSmall = this.#isTooSmall(limit, s);
    return { type: "refuse", limit, reason: reasonText(limit, s, tooSmall), ...(tooSmall ? { tooSmall } : {}) };
  }

  /**
   * A model call did not fit `limit` even alone: the limit counts as spent until its period ends
   * (or `/budget raise`), so the next run is refused before it calls the model. With
   * `tooSmallForUsd` (what the least such call could cost) it did not fit even with nothing
   * spent, and is remembered as too small rather than spent. The owner hears the 100 % notice for
   * the day or month once, as if the ledger had reached it, or the too-small one.
   */
  markSpent(limit: LimitName, tooSmallForUsd?: number): void {
    const s = this.status();
    if (this.#isSpent(limit, s)) return;
    (this.#state.spent ??= []).push(spentKey(limit, s));
    if (tooSmallForUsd !== undefined) (this.#state.tooSmall ??= []).push(spentKey(limit, s));
    this.#save();
    if (limit === "shared") return;
    const [period, l, id] = limit === "daily" ? (["today", s.today, s.day] as const) : (["this month", s.thisMonth, s.month] as const);
    this.#notify(period, l, "100", limit === "daily" ? "day" : "month", id, tooSmallForUsd);
  }

  /** True the first time in the current period that this shared chat is refused: it gets the resting note. */
  firstRestingNotice(sessionKey: string, limit: LimitName): boolean {
    const s = this.status();
    const key = `${limit === "monthly" ? s.month : s.day}:${sessionKey}`;
    if (this.#state.resting.includes(key)) return false;
    this.#state.resting.push(key);
    this.#save();
    return true;
  }

  /** `/budget raise N`: today's daily and monthly limits go up by N dollars, until midnight. */
  raise(usd: number): BudgetStatus {
    this.#rollover();
    this.#state.raisedUsd += usd;
    // New headroom: a later crossing is news again.
    this.#state.notices = this.#state.notices.filter((n) => !n.startsWith("100:"));
    this.#state.resting = [];
    // The shared sub-limit is not raised: a group whose call did not fit it still does not.
    this.#state.spent = (this.#state.spent ?? []).filter((k) => k.startsWith("shared:"));
    this.#state.tooSmall = (this.#state.tooSmall ?? []).filter((k) => k.startsWith("shared:"));
    this.#save();
    return this.status();
  }

  status(): BudgetStatus {
    this.#rollover();
    const spent: Spent = this.#o.ledger.spent();
    const c = this.#o.config;
    const raised = this.#state.raisedUsd;
    const plus = (v: number | undefined) => (v === undefined ? null : v + raised);
    const sharedDaily = c.shared.daily ?? (c.daily !== undefined ? c.daily / 5 : undefined);
    return {
      day: spent.day,
      month: spent.month,
      today: { spentUsd: spent.todayUsd, limitUsd: plus(c.daily) },
      thisMonth: { spentUsd: spent.monthUsd, limitUsd: plus(c.monthly) },
      sharedToday: { spentUsd: spent.sharedTodayUsd, limitUsd: sharedDaily ?? null },
      raisedTodayUsd: raised,
      hardStop: c.hardStop,
    };
  }

  /** After each model call: the 80 % notice once per period, the 100 % notice once per period. */
  #afterRecord(): void {
    const s = this.status();
    for (const [period, limit, id] of [["today", s.today, s.day], ["this month", s.thisMonth, s.month]] as const) {
      if (limit.limitUsd === null) continue;
      const kind = period === "today" ? "day" : "month";
      const ratio = limit.spentUsd / limit.limitUsd;
      const at = ratio >= 1 ? "100" : ratio >= 0.8 ? "80" : null;
      if (at) this.#notify(period, limit, at, kind, id);
    }
  }

  #notify(period: "today" | "this month", limit: Limit, at: "80" | "100", kind: "day" | "month", id: string, tooSmallForUsd?: number): void {
    if (this.#state.notices.includes(`${at}:${kind}:${id}`)) return;
    // A run that jumps past 100 % gets only the 100 % notice; both count as sent.
    this.#state.notices.push(`${at}:${kind}:${id}`);
    if (at === "100") this.#state.notices.push(`80:${kind}:${id}`);
    this.#save();
    void this.#o.notifyOwner(at === "80" ? eightyText(period, limit) : fullText(period, limit, this.#o.config.hardStop, tooSmallForUsd));
  }

  /** Whether `limit` was marked spent in its current period (markSpent). */
  isSpent(limit: LimitName): boolean {
    return this.#isSpent(limit, this.status());
  }

  /** Whether `limit` was marked too small for one call in its current period (markSpent). */
  isTooSmall(limit: LimitName): boolean {
    return this.#isTooSmall(limit, this.status());
  }

  #isSpent(limit: LimitName, s: BudgetStatus): boolean {
    return this.#state.spent?.includes(spentKey(limit, s)) ?? false;
  }

  #isTooSmall(limit: LimitName, s: BudgetStatus): boolean {
    return this.#state.tooSmall?.includes(spentKey(limit, s)) ?? false;
  }

  #overLimit(s: BudgetStatus): "daily" | "monthly" | null {
    if (reached(s.today) || this.#isSpent("daily", s)) return "daily";
    if (reached(s.thisMonth) || this.#isSpent("monthly", s)) return "monthly";
    return null;
  }

  /** A new day drops yesterday's raise and the day's notices; a new month the month's. */
  #rollover(): void {
    const { day, month } = this.#o.ledger.spent();
    if (this.#state.day === day) return;
    this.#state = {
      version: 1,
      day,
      raisedUsd: 0,
      notices: this.#state.notices.filter((n) => n.endsWith(`:${month}`)),
      resting: this.#state.resting.filter((r) => r.startsWith(`${month}:`)),
      spent: (this.#state.spent ?? []).filter((k) => k === `monthly:${month}`),
      tooSmall: (this.#state.tooSmall ?? []).filter((k) => k === `monthly:${month}`),
    };
    this.#save();
  }

  #load(): StateFile {
    const fresh: StateFile = { version: 1, day: this.#o.ledger.spent().day, raisedUsd: 0, notices: [], resting: [] };
    try {
      const parsed = JSON.parse(readFileSync(this.#file, "utf8")) as Partial<StateFile>;
      if (parsed.version === 1 && typeof parsed.day === "string" && typeof parsed.raisedUsd === "number" && Array.isArray(parsed.notices) && Array.isArray(parsed.resting) && (parsed.spent === undefined || Array.isArray(parsed.spent)) && (parsed.tooSmall === undefined || Array.isArray(parsed.tooSmall))) {
        return parsed as StateFile;
      }
      this.#o.log.warn("budget.state_invalid", { file: this.#file, action: "starting fresh" });
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== "ENOENT") this.#o.log.warn("budget.state_unreadable", { file: this.#file, error: err, action: "starting fresh" });
    }
    return fresh;
  }

  #save(): void {
    try {
      writeFileAtomic(this.#file, `${JSON.stringify(this.#state)}\n`);
    } catch (err) {
      this.#o.log.error("budget.save_failed", { file: this.#file, error: err });
    }
  }
}

const reached = (l: Limit) => l.limitUsd !== null && l.spentUsd >= l.limitUsd;

const spentKey = (limit: LimitName, s: BudgetStatus): string => `${limit}:${limit === "monthly" ? s.month : s.day}`;


function reasonText(limit: LimitName, s: BudgetStatus, tooSmall: boolean): string {
  const l = limit === "daily" ? s.today : limit === "monthly" ? s.thisMonth : s.sharedToday;
  const what = limit === "daily" ? "daily budget" : limit === "monthly" ? "monthly budget" : "daily budget for shared chats";
  return `the ${what} of ${usdText(l.limitUsd ?? 0)} is ${tooSmall ? "too small for one answer" : `spent (${usdText(l.spentUsd)})`}`;
}

const RAISE_HINT = "To raise today's limit send /budget raise 5 (dollars), or change budget.daily / budget.monthly in config.json.";

function eightyText(period: "today" | "this month", l: Limit): string {
  return `💰 Budget: ${usdText(l.spentUsd)} of ${period === "today" ? "today's" : "this month's"} ${usdText(l.limitUsd ?? 0)} is spent (${Math.floor((l.spentUsd / (l.limitUsd ?? 1)) * 100)} %).`;
}

/** The 100 % notice; with `tooSmallForUsd` the limit was too small for one answer that could cost that. */
function fullText(period: "today" | "this month", l: Limit, hardStop: boolean, tooSmallForUsd?: number): string {
  const until = period === "today" ? "until tomorrow" : "until next month";
  const owner = hardStop ? "Your own messages are stopped too (budget.hardStop)." : `Your own messages still run, each reply marked "${OVER_BUDGET_MARK}".`;
  const state = tooSmallForUsd === undefined ? `is spent (${usdText(l.spentUsd)})` : `is too small for one answer, which could cost up to ${usdText(tooSmallForUsd)}`;
  return `💰 Budget: ${period === "today" ? "today's" : "this month's"} ${usdText(l.limitUsd ?? 0)} ${state}. Group chats, paired people, the heartbeat and scheduled jobs are paused ${until}. ${owner} ${RAISE_HINT}`;
}

/** The reply to the owner's message when hardStop stops it. */
export function hardStopText(reason: string): string {
  return `I'm not answering: ${reason}. ${RAISE_HINT}`;
}

/** "Spent today: $1.20 of $5.00 (24 %) · this month: $8.10 (no limit)" */
