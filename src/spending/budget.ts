// Budgets (issue 14): `budget.daily` and `budget.monthly` in USD, and the shared scopes' daily
// sub-limit. The gateway asks `check` before a run spends; the ledger's records drive the 80 %
// and 100 % notices. A run that crosses a limit finishes — only the next one is stopped.
// What must outlive a restart (notices sent, chats told they are resting, today's raise) is in
// <home>/budget.json, replaced atomically.
import { readFileSync } from "node:fs";
import path from "node:path";
import type { Scope } from "../agent/messages.ts";
import type { Logger } from "../log.ts";
import { writeFileAtomic } from "../storage.ts";
import type { Config } from "../config/schema.ts";
import type { Spent, UsageLedger } from "./ledger.ts";
import type { RunPurpose } from "./usage-record.ts";
import { spendingLine, usdText } from "./spending-text.ts";

export { spendingLine, usdText };

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
  | { type: "refuse"; limit: LimitName; reason: string };

export interface Limit {
  spentUsd: number;
  /** null: no limit set. Includes today's `/budget raise`. */
  limitUsd: number | null;
}

export interface BudgetStatus {
  day: string;
  month: string;
  today: Limit;
  thisMonth: Limit;
  sharedToday: Limit;
  raisedTodayUsd: number;
  hardStop: boolean;
}

interface StateFile {
  version: 1;
  /** The day `raisedUsd` applies to. */
  day: string;
  raisedUsd: number;
  /** Notices sent: "80:day:2026-11-23", "100:month:2026-11"… */
  notices: string[];
  /** Chats already told "I'm resting": "<period>:<sessionKey>". */
  resting: string[];
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
    // Part of a run that was allowed: a run that crosses the limit finishes.
    if (req.purpose === "compaction" || req.purpose === "flush") return { type: "allow" };
    const s = this.status();
    const over = overLimit(s);
    // A shared scope's work (its chat runs, and the background tasks a group started) also stops at the shared limit.
    if (req.scope === "shared") {
      const limit = over ?? (reached(s.sharedToday) ? "shared" : null);
      return limit ? { type: "refuse", limit, reason: reasonText(limit, s) } : { type: "allow" };
    }
    if (req.purpose === "heartbeat" || req.purpose === "cron" || req.purpose === "task") {
      return over ? { type: "refuse", limit: over, reason: reasonText(over, s) } : { type: "allow" };
    }
    if (!over) return { type: "allow" };
    return this.#o.config.hardStop ? { type: "refuse", limit: over, reason: reasonText(over, s) } : { type: "allow-over-budget", limit: over };
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
      if (!at || this.#state.notices.includes(`${at}:${kind}:${id}`)) continue;
      // A run that jumps past 100 % gets only the 100 % notice; both count as sent.
      this.#state.notices.push(`${at}:${kind}:${id}`);
      if (at === "100") this.#state.notices.push(`80:${kind}:${id}`);
      this.#save();
      void this.#o.notifyOwner(at === "80" ? eightyText(period, limit) : fullText(period, limit, this.#o.config.hardStop));
    }
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
    };
    this.#save();
  }

  #load(): StateFile {
    const fresh: StateFile = { version: 1, day: this.#o.ledger.spent().day, raisedUsd: 0, notices: [], resting: [] };
    try {
      const parsed = JSON.parse(readFileSync(this.#file, "utf8")) as Partial<StateFile>;
      if (parsed.version === 1 && typeof parsed.day === "string" && typeof parsed.raisedUsd === "number" && Array.isArray(parsed.notices) && Array.isArray(parsed.resting)) {
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

function overLimit(s: BudgetStatus): "daily" | "monthly" | null {
  if (reached(s.today)) return "daily";
  if (reached(s.thisMonth)) return "monthly";
  return null;
}


function reasonText(limit: LimitName, s: BudgetStatus): string {
  const l = limit === "daily" ? s.today : limit === "monthly" ? s.thisMonth : s.sharedToday;
  const what = limit === "daily" ? "daily budget" : limit === "monthly" ? "monthly budget" : "daily budget for shared chats";
  return `the ${what} of ${usdText(l.limitUsd ?? 0)} is spent (${usdText(l.spentUsd)})`;
}

const RAISE_HINT = "To raise today's limit send /budget raise 5 (dollars), or change budget.daily / budget.monthly in config.json.";

function eightyText(period: "today" | "this month", l: Limit): string {
  return `💰 Budget: ${usdText(l.spentUsd)} of ${period === "today" ? "today's" : "this month's"} ${usdText(l.limitUsd ?? 0)} is spent (${Math.floor((l.spentUsd / (l.limitUsd ?? 1)) * 100)} %).`;
}

function fullText(period: "today" | "this month", l: Limit, hardStop: boolean): string {
  const until = period === "today" ? "until tomorrow" : "until next month";
  const owner = hardStop ? "Your own messages are stopped too (budget.hardStop)." : `Your own messages still run, each reply marked "${OVER_BUDGET_MARK}".`;
  return `💰 Budget: ${period === "today" ? "today's" : "this month's"} ${usdText(l.limitUsd ?? 0)} is spent (${usdText(l.spentUsd)}). Group chats, paired people, the heartbeat and scheduled jobs are paused ${until}. ${owner} ${RAISE_HINT}`;
}

/** The reply to the owner's message when hardStop stops it. */
export function hardStopText(reason: string): string {
  return `I'm not answering: ${reason}. ${RAISE_HINT}`;
}

/** "Spent today: $1.20 of $5.00 (24 %) · this month: $8.10 (no limit)" */
