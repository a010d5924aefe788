// The budget before every paid call (issue 38). A run is admitted by `Budget.check`, but what it
// spends is decided call by call: before a model call, a transcription, a spoken part, an
// embeddings batch or a web search, its worst case is reserved here, and the hold is released
// once the call's real cost is in the ledger (or the call failed or was aborted). A call is
// refused when the ledger's total plus every hold in progress plus its own worst case would pass
// a limit that applies to it, so the ledger's total can pass a limit only by what a call cost
// beyond its worst case. A call that can ask for less (a model call: a shorter answer, fewer web
// tool uses) says so with `leastUsd`: it is held at what is left, down to that, and refused only
// when not even that fits — with words that say whether the limit is spent, taken by calls in
// progress, or too small for one such call at all. A call no limit applies to (the owner's own
// chat without budget.hardStop, which may run past a limit) holds nothing against other calls:
// its worst case, web tools and all, would otherwise leave them no room while it runs.
//
// One instance per gateway holds every reservation: runs in parallel for the same chat, for
// other chats of the same day and for background work all see the same holds. Reserving is
// synchronous, so no two calls ever see the same headroom.
import type { Scope } from "../agent/messages.ts";
import type { Budget, BudgetStatus, Limit, LimitName } from "./budget.ts";
import type { UsageLedger } from "./ledger.ts";
import { usdText } from "./spending-text.ts";
import type { RunPurpose, UsageKind } from "./usage-record.ts";

/** One paid call about to be made. */
export interface PaidCall {
  /** What it is, as its usage record will say. */
  kind: UsageKind;
  /** The session it is made for (its usage records carry it). */
  sessionKey: string;
  scope: Scope;
  /** The purpose of the run it serves; a compaction or a flush inside a run is held like the run's own calls. */
  purpose: RunPurpose;
  /** The most it can cost, in USD; 0 for a call that is free or whose price is unknown before it is made. */
  worstUsd: number;
  /**
   * The least it can be made for, when it can ask for less (a model call's input and a short
   * answer): where `worstUsd` does not fit, it is held at what is left, down to this. Absent: worstUsd.
   */
  leastUsd?: number | undefined;
  /** A cap on the session's own spending, all records and holds together (a background task's tasks.maxCostUsd). */
  capUsd?: number | undefined;
}

/** What a call holds: released exactly once, after its real cost was recorded (or it cost nothing). */
export interface SpendHold {
  /**
   * Holds `usd` more for the same call (the model client tries again after an attempt that may
   * have been billed). Returns null when it fits (or the hold was released), else the refusal.
   */
  extend(usd: number): Refusal | null;
  /** Releases the hold. Safe to call again. */
  release(): void;
}

export interface Refusal {
  type: "refused";
  /** The limit it did not fit: a budget limit, or the session's own cap. */
  limit: LimitName | "cap";
  /** Why, for the chat that pays: a shared chat's text names no amount. "today's budget for this chat is spent". */
  reason: string;
  /** It would not fit even with no other call in progress: the limit is as good as spent. */
  exhausted: boolean;
  /** It would not fit even with nothing spent: the limit is too small for one such call. */
  tooSmall: boolean;
}

/** Reserved: `usd` is what is held, worstUsd when it fits, else what was left (at least leastUsd). */
export type ReserveDecision = { type: "reserved"; hold: SpendHold; usd: number } | Refusal;

interface Held {
  sessionKey: string;
  scope: Scope;
  usd: number;
  /** Some limit applies to the call: its hold counts against the other calls' limits. */
  bounded: boolean;
}

export class Reservations {
  readonly #budget: Budget;
  readonly #ledger: UsageLedger;
  readonly #held = new Set<Held>();

  constructor(opts: { budget: Budget; ledger: UsageLedger }) {
    this.#budget = opts.budget;
    this.#ledger = opts.ledger;
  }

  /**
   * Holds `call.worstUsd` when it fits every limit that applies to the call, else what is left
   * when that is at least `call.leastUsd`; never throws.
   */
  reserve(call: PaidCall): ReserveDecision {
    const least = Math.min(call.leastUsd ?? call.worstUsd, call.worstUsd);
    const refusal = this.#refusal(call, least);
    if (refusal) return refusal;
    const usd = Math.max(least, Math.min(call.worstUsd, this.#headroom(call)));
    const bounded = call.capUsd !== undefined || limitsFor(call, this.#budget.status(), { totalUsd: 0, sharedUsd: 0 }).length > 0;
    const held: Held = { sessionKey: call.sessionKey, scope: call.scope, usd, bounded };
    this.#held.add(held);
    return {
      type: "reserved",
      usd,
      hold: {
        extend: (usd) => {
          if (!this.#held.has(held)) return null;
          const more = this.#refusal(call, usd);
          if (more) return more;
          held.usd += usd;
          return null;
        },
        release: () => void this.#held.delete(held),
      },
    };
  }

  /** What the calls in progress that a limit applies to hold now, in USD: all of them, and those of shared scopes. */
  heldUsd(): { totalUsd: number; sharedUsd: number } {
    let totalUsd = 0;
    let sharedUsd = 0;
    for (const h of this.#held) {
      if (!h.bounded) continue;
      totalUsd += h.usd;
      if (h.scope === "shared") sharedUsd += h.usd;
    }
    return { totalUsd, sharedUsd };
  }

  /** What the call could hold now beside everything spent and held: the least any of its limits leaves (Infinity: none applies). */
  #headroom(call: PaidCall): number {
    let left = Infinity;
    if (call.capUsd !== undefined) left = call.capUsd - this.#ledger.spentBy(call.sessionKey) - this.#heldBy(call.sessionKey);
    for (const { limit, heldUsd } of limitsFor(call, this.#budget.status(), this.heldUsd())) {
      if (limit.limitUsd !== null) left = Math.min(left, limit.limitUsd - limit.spentUsd - heldUsd);
    }
    return left;
  }

  #heldBy(sessionKey: string): number {
    let held = 0;
    for (const h of this.#held) if (h.sessionKey === sessionKey) held += h.usd;
    return held;
  }

  #refusal(call: PaidCall, usd: number): Refusal | null {
    if (call.capUsd !== undefined) {
      const spent = this.#ledger.spentBy(call.sessionKey);
      const held = this.#heldBy(call.sessionKey);
      if (spent + held + usd > call.capUsd) {
        const tooSmall = usd > call.capUsd;
        return { type: "refused", limit: "cap", reason: capText(call.capUsd, spent, held, usd, tooSmall), exhausted: spent + usd > call.capUsd, tooSmall };
      }
    }
    const s = this.#budget.status();
    const held = this.heldUsd();
    for (const { name, limit, heldUsd } of limitsFor(call, s, held)) {
      if (limit.limitUsd === null) continue;
      // A limit a call already did not fit stays spent (Budget.markSpent), whatever a settled call left.
      const marked = this.#budget.isSpent(name);
      if (!marked && limit.spentUsd + heldUsd + usd <= limit.limitUsd) continue;
      const tooSmall = usd > limit.limitUsd || this.#budget.isTooSmall(name);
      const exhausted = marked || limit.spentUsd + usd > limit.limitUsd;
      const why = tooSmall ? "too-small" : exhausted ? "spent" : "in-use";
      return { type: "refused", limit: name, reason: reasonText(call.scope, name, limit, heldUsd, usd, why), exhausted, tooSmall };
    }
    return null;
  }
}

/**
 * The limits a call must fit, each with the holds that count against it: a shared scope's calls
 * meet the day's, the month's and the shared scopes' limit; background work (the heartbeat,
 * jobs, tasks) the day's and the month's; the owner's own chat only with budget.hardStop (without
 * it the owner's messages run past a limit, marked "(over budget)").
 */
function limitsFor(call: PaidCall, s: BudgetStatus, held: { totalUsd: number; sharedUsd: number }): Array<{ name: LimitName; limit: Limit; heldUsd: number }> {
  const all = [
    { name: "daily" as const, limit: s.today, heldUsd: held.totalUsd },
    { name: "monthly" as const, limit: s.thisMonth, heldUsd: held.totalUsd },
  ];
  if (call.scope === "shared") return [...all, { name: "shared", limit: s.sharedToday, heldUsd: held.sharedUsd }];
  switch (call.purpose) {
    case "heartbeat":
    case "cron":
    case "task":
      return all;
    case "chat":
    case "compaction":
    case "flush":
      return s.hardStop ? all : [];
    default:
      return call.purpose satisfies never;
  }
}

/**
 * Why a call does not fit: the limit is too small for one answer (it would not fit with nothing
 * spent), spent (it would not fit beside what is spent), or in use (calls in progress hold the rest).
 * A shared chat hears which period, never an amount; the owner hears the amounts.
 */
function reasonText(scope: Scope, name: LimitName, l: Limit, heldUsd: number, usd: number, why: "too-small" | "spent" | "in-use"): string {
  if (scope === "shared") {
    const period = name === "monthly" ? "this month's" : "today's";
    const state = why === "too-small" ? "too small for one answer" : why === "spent" ? "spent" : "taken by answers in progress";
    return `${period} budget for this chat is ${state}`;
  }
  const what = name === "daily" ? "daily budget" : name === "monthly" ? "monthly budget" : "daily budget for shared chats";
  if (why === "too-small") return `the ${what} of ${usdText(l.limitUsd ?? 0)} is too small for one answer, which could cost up to ${usdText(usd)}`;
  return `the ${what} of ${usdText(l.limitUsd ?? 0)} is ${why === "spent" ? "spent" : "in use"}: ${amounts(l.spentUsd, heldUsd, usd)}`;
}

function capText(capUsd: number, spent: number, held: number, usd: number, tooSmall: boolean): string {
  const cap = `this task's cost cap of ${usdText(capUsd)} (tasks.maxCostUsd)`;
  return tooSmall ? `${cap} is too small for one step, which could cost up to ${usdText(usd)}` : `${cap} is reached: ${amounts(spent, held, usd)}`;
}

const amounts = (spent: number, held: number, usd: number): string =>
  `${usdText(spent)} so far${held > 0 ? `, ${usdText(held)} held for calls in progress` : ""}, and the next step could cost up to ${usdText(usd)}`;
