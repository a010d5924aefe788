// Every paid call the daemon makes is reserved first (spending/reservations.ts holds them all).
// What the gateway adds: who pays — a background task's session has its cost cap — and what a
// refused model call means beyond its own run: a limit it did not fit even alone is marked spent
// (the next message is refused before any call), and a task it stopped ends over its cost cap or
// over the budget. The agent, the memory and the delivery code get these as functions.
import { emptyUsage, type Usage } from "../agent/messages.ts";
import type { Held, ReserveCall } from "../agent/paid-call.ts";
import type { ModelRequest } from "../agent/providers/model.ts";
import { boundOf, fitBound, leastBound, withBound, type CallPrice } from "../spending/call-fit.ts";
import { transcriptionPricePerMinute, worstCallUsd } from "../spending/pricing.ts";
import type { PaidCall, Refusal, ReserveDecision } from "../spending/reservations.ts";
import type { UsageTag } from "../spending/usage-record.ts";
import { isTaskSession } from "../tasks/requests.ts";
import type { Config } from "../config/schema.ts";
import type { Logger } from "../process/log.ts";
import type { Budget } from "../spending/budget.ts";
import type { UsageLedger } from "../spending/ledger.ts";
import type { Reservations } from "../spending/reservations.ts";
import type { TaskService } from "../tasks/service.ts";

/** What reserving a paid call uses of the gateway. */
export interface PaidCallDeps {
  budget: Budget;
  config: Config;
  log: Logger;
  reservations: Reservations;
  tasks: TaskService;
  usage: UsageLedger;
}

/** Reserves one paid call (Reservations.reserve, with the gateway's rules). Synchronous; never throws. */
export type ReservePaidCall = (call: PaidCall) => ReserveDecision;

export function reservePaidCall(ctx: PaidCallDeps, call: PaidCall): ReserveDecision {
  const capUsd = isTaskSession(call.sessionKey) ? ctx.config.tasks.maxCostUsd : undefined;
  const d = ctx.reservations.reserve(capUsd === undefined ? call : { ...call, capUsd });
  if (d.type === "refused") {
    afterRefusal(ctx, call, d);
    return d;
  }
  const extend = (usd: number): Refusal | null => {
    const more = d.hold.extend(usd);
    if (more) afterRefusal(ctx, call, more);
    return more;
  };
  return { type: "reserved", usd: d.usd, hold: { extend, release: () => d.hold.release() } };
}

function afterRefusal(ctx: PaidCallDeps, call: PaidCall, r: Refusal): void {
  ctx.log.info("budget.call_refused", { session: call.sessionKey, kind: call.kind, limit: r.limit, worstUsd: call.worstUsd, ...(call.leastUsd === undefined ? {} : { leastUsd: call.leastUsd }), ...(r.tooSmall ? { tooSmall: true } : {}) });
  // Only a model call ends its run; a refused search, transcription or spoken part leaves it going.
  if (call.kind !== "model") return;
  if (r.exhausted && r.limit !== "cap") ctx.budget.markSpent(r.limit, r.tooSmall ? (call.leastUsd ?? call.worstUsd) : undefined);
  if (isTaskSession(call.sessionKey)) ctx.tasks.noteStopped(call.sessionKey, r.limit === "cap" ? { end: "over-cost" } : { end: "over-budget", reason: r.reason });
}

/**
 * The loop's ReserveCall for one run: each request held at its worst case (pricing.ts
 * worstCallUsd on the model and its fallbacks, the input as the context budget estimates it, the
 * web tools' uses and pages as the request bounds them), each retry or fallback at the same again.
 * Where that does not fit what the limits leave, the request is sent asking for less
 * (spending/call-fit.ts: a lower max_tokens, fewer or shorter web tool uses), down to its input
 * and a short answer. `tag` (whose call it is) is read at each call: compaction and the flush
 * follow the run they serve, and are held under its purpose.
 */
export function reserveModelCalls(reserve: ReservePaidCall, tag: () => UsageTag, price: CallPrice, estimate: (req: ModelRequest) => number): ReserveCall {
  return (req) => {
    const full = boundOf(req, estimate(req));
    const worstUsd = worstCallUsd(price.models, full, price.pricing);
    const leastUsd = worstCallUsd(price.models, leastBound(full), price.pricing);
    const t = tag();
    const d = reserve({ sessionKey: t.session, scope: t.scope, purpose: t.purpose, kind: "model", worstUsd, leastUsd });
    if (d.type === "refused") return { type: "refused", reason: d.reason };
    // d.usd is at least leastUsd, so a bound fits it.
    const bound = fitBound(full, d.usd, price) ?? leastBound(full);
    const usd = worstCallUsd(price.models, bound, price.pricing);
    return { type: "reserved", request: withBound(req, bound), hold: { extend: () => d.hold.extend(usd)?.reason ?? null, settle: () => d.hold.release() } };
  };
}

/**
 * A paid call other than a model call, held at `call.worstUsd`: settled with what it used, it is
 * recorded by `record` (the ledger prices it) and the hold released; settled with null, only
 * released. A second settle does nothing.
 */
export function holdPaidCall<Used>(reserve: ReservePaidCall, call: PaidCall, record: (used: Used) => void): Held<Used> {
  const d = reserve(call);
  if (d.type === "refused") return { type: "refused", reason: d.reason };
  let settled = false;
  return {
    type: "reserved",
    settle: (used) => {
      if (settled) return;
      settled = true;
      try {
        if (used !== null) record(used);
      } finally {
        d.hold.release();
      }
    },
  };
}

/**
 * Hearth's own web tools, paid as they are used: a search is held at its price (pricing.ts
 * localSearchPricePerThousand: tools.web.search.pricing, Brave's list price, SearXNG free) and
 * recorded before it is sent, since the provider bills the request; a fetch costs nothing and is
 * only recorded (so is everything without `reserve`). Returns null, or why the search may not be sent.
 */
export function payWebUse(reserve: ReservePaidCall | undefined, record: (tag: UsageTag, usage: Usage) => void, searchUsd: number): (kind: "search" | "fetch", tag: UsageTag) => string | null {
  return (kind, tag) => {
    const usage: Usage = { ...emptyUsage(), ...(kind === "search" ? { localWebSearches: 1 } : { localWebFetches: 1 }) };
    if (kind === "fetch" || !reserve) {
      record(tag, usage);
      return null;
    }
    const held = holdPaidCall<true>(reserve, { sessionKey: tag.session, scope: tag.scope, purpose: tag.purpose, kind: "web", worstUsd: searchUsd }, () => record(tag, usage));
    if (held.type === "refused") return held.reason;
    held.settle(true);
    return null;
  };
}

/**
 * A voice note's transcription, held at the length the platform states (Telegram states one for
 * voice notes and audio files) at media.transcription's price (pricing.ts
 * transcriptionPricePerMinute). Without a stated length (a file attached in the terminal) its
 * price is unknown until the service answers: it is held at nothing — the limits must not be
 * reached yet — and recorded at the service's measure. A service that bills a longer measure
 * than the platform stated passes the hold by the difference.
 */
export function reserveTranscription(ctx: PaidCallDeps, tag: UsageTag, statedSeconds: number | null): Held<{ seconds: number | null }> {
  const t = ctx.config.media.transcription;
  const worstUsd = ((statedSeconds ?? 0) / 60) * transcriptionPricePerMinute(t);
  const call: PaidCall = { kind: "transcription", sessionKey: tag.session, scope: tag.scope, purpose: tag.purpose, worstUsd };
  return holdPaidCall<{ seconds: number | null }>((c) => reservePaidCall(ctx, c), call, (used) => ctx.usage.recordTranscription(tag, t?.model ?? "", used.seconds));
}
