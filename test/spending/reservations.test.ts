// The budget before every paid call (issue 38), on a real ledger and budget in a temp home:
// holds made in parallel share one headroom, a failed or aborted call releases its hold, a
// settled call counts at its real cost, a call that does not fit even alone marks its limit spent,
// a task's cap is a limit of its own, and the worst case of a model call as pricing.ts prices it.
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { emptyUsage } from "../../src/agent/messages.ts";
import { streamReserved, type ReserveCall } from "../../src/agent/paid-call.ts";
import type { ModelClient, ModelEvent, ModelResult } from "../../src/agent/providers/model.ts";
import type { Config } from "../../src/config/schema.ts";
import { silentLogger } from "../../src/process/log.ts";
import { Budget, RESTING_TEXT } from "../../src/spending/budget.ts";
import { UsageLedger } from "../../src/spending/ledger.ts";
import { worstCallUsd } from "../../src/spending/pricing.ts";
import { Reservations, type PaidCall, type ReserveDecision } from "../../src/spending/reservations.ts";

let home: string;
let ledger: UsageLedger;
let budget: Budget;
let reservations: Reservations;
const told: string[] = [];

function open(limits: Partial<Config["budget"]>): void {
  ledger = UsageLedger.open({ file: join(home, "usage.jsonl"), timezone: "UTC", pricing: { "test-model": { input: 1, output: 10 } }, log: silentLogger, clock: Date.now });
  budget = new Budget({ config: { hardStop: false, shared: {}, ...limits }, ledger, home, log: silentLogger, notifyOwner: async (t) => void told.push(t) });
  reservations = new Reservations({ budget, ledger });
}

beforeEach(() => {
  home = mkdtempSync(join(tmpdir(), "hearth-reserve-"));
  told.length = 0;
});
afterEach(() => rmSync(home, { recursive: true, force: true }));

const group = (worstUsd: number, sessionKey = "group:telegram:-1"): PaidCall => ({ kind: "model", sessionKey, scope: "shared", purpose: "chat", worstUsd });
/** Records a model call of `usd` (1,000,000 input tokens = $1 at the test's price). */
const spend = (sessionKey: string, scope: "main" | "shared", usd: number) => ledger.record({ session: sessionKey, scope, purpose: "chat" }, "test-model", { ...emptyUsage(), inputTokens: Math.round(usd * 1_000_000) });
const held = (d: ReserveDecision) => {
  if (d.type !== "reserved") throw new Error(`refused: ${d.reason}`);
  return d.hold;
};

describe("reservations", () => {
  it("calls in parallel share one headroom: the second does not fit while the first is held, and fits once it is released", () => {
    open({ daily: 1, shared: { daily: 0.2 } });
    const first = held(reservations.reserve(group(0.12)));
    // Another run of the same group, and a run of another group: both meet the shared limit.
    // Nothing is spent yet: the limit is not "spent", it is taken by the call in progress.
    expect(reservations.reserve(group(0.12))).toEqual({ type: "refused", limit: "shared", reason: "today's budget for this chat is taken by answers in progress", exhausted: false, tooSmall: false });
    expect(reservations.reserve(group(0.12, "group:telegram:-2"))).toMatchObject({ type: "refused", limit: "shared", exhausted: false });
    expect(reservations.heldUsd()).toEqual({ totalUsd: 0.12, sharedUsd: 0.12 });
    first.release();
    first.release(); // twice: nothing more
    expect(reservations.heldUsd()).toEqual({ totalUsd: 0, sharedUsd: 0 });
    expect(reservations.reserve(group(0.12)).type).toBe("reserved");
  });

  it("a settled call counts at its real cost: the rest of its worst case is free again", () => {
    open({ shared: { daily: 0.2 } });
    const hold = held(reservations.reserve(group(0.15)));
    spend("group:telegram:-1", "shared", 0.03);
    hold.release();
    expect(reservations.heldUsd().totalUsd).toBe(0);
    // $0.03 spent: a worst case of $0.17 fits exactly, one of $0.171 does not.
    held(reservations.reserve(group(0.17))).release();
    expect(reservations.reserve(group(0.171))).toMatchObject({ type: "refused", limit: "shared", exhausted: true });
  });

  it("a hold extended for a retry counts twice; an extension that does not fit is refused and the hold stays as it was", () => {
    open({ shared: { daily: 0.2 } });
    const hold = held(reservations.reserve(group(0.08)));
    expect(hold.extend(0.08)).toBeNull();
    expect(reservations.heldUsd().sharedUsd).toBeCloseTo(0.16, 12);
    expect(hold.extend(0.08)).toEqual({ type: "refused", limit: "shared", reason: "today's budget for this chat is taken by answers in progress", exhausted: false, tooSmall: false });
    expect(reservations.heldUsd().sharedUsd).toBeCloseTo(0.16, 12);
    hold.release();
    expect(hold.extend(0.08)).toBeNull(); // released: nothing left to extend
    expect(reservations.heldUsd().sharedUsd).toBe(0);
  });

  it("the owner's own chat is never refused without hardStop, and holds nothing against other calls; with hardStop it is held and refused, with the amounts", () => {
    open({ daily: 0.5 });
    const owner: PaidCall = { kind: "model", sessionKey: "main", scope: "main", purpose: "chat", worstUsd: 0.4 };
    const a = held(reservations.reserve(owner));
    const b = held(reservations.reserve(owner));
    // It may run past the limit anyway: its worst case (web tools and all) does not shut out background work while it runs.
    expect(reservations.heldUsd()).toEqual({ totalUsd: 0, sharedUsd: 0 });
    held(reservations.reserve({ ...owner, purpose: "cron", sessionKey: "cron:1" })).release();
    a.release();
    b.release();

    rmSync(join(home, "budget.json"), { force: true });
    open({ daily: 0.5, hardStop: true });
    spend("main", "main", 0.2);
    expect(reservations.reserve(owner)).toEqual({
      type: "refused",
      limit: "daily",
      reason: "the daily budget of $0.50 is spent: $0.20 so far, and the next step could cost up to $0.40",
      exhausted: true,
      tooSmall: false,
    });
    const small = held(reservations.reserve({ ...owner, worstUsd: 0.25 }));
    expect(reservations.reserve({ ...owner, worstUsd: 0.1 })).toMatchObject({ reason: "the daily budget of $0.50 is in use: $0.20 so far, $0.25 held for calls in progress, and the next step could cost up to $0.10" });
    small.release();
    // A limit smaller than the call with nothing spent is too small for one answer.
    expect(reservations.reserve({ ...owner, sessionKey: "cron:1", purpose: "cron", worstUsd: 0.6 })).toEqual({
      type: "refused",
      limit: "daily",
      reason: "the daily budget of $0.50 is too small for one answer, which could cost up to $0.60",
      exhausted: true,
      tooSmall: true,
    });
  });

  it("a background task's cap counts its own records and holds: a task with a $1.00 cap is refused the call that could pass it", () => {
    open({});
    const task: PaidCall = { kind: "model", sessionKey: "task:abc123", scope: "main", purpose: "task", worstUsd: 0.3, capUsd: 1 };
    spend("task:abc123", "main", 0.5);
    spend("main", "main", 5); // another session's spending is not the task's
    const hold = held(reservations.reserve(task));
    expect(reservations.reserve(task)).toEqual({
      type: "refused",
      limit: "cap",
      reason: "this task's cost cap of $1.00 (tasks.maxCostUsd) is reached: $0.50 so far, $0.30 held for calls in progress, and the next step could cost up to $0.30",
      exhausted: false,
      tooSmall: false,
    });
    hold.release();
    spend("task:abc123", "main", 0.25);
    expect(reservations.reserve(task)).toMatchObject({ type: "refused", limit: "cap", exhausted: true });
    expect(ledger.spentBy("task:abc123")).toBeLessThanOrEqual(1);
  });

  it("a limit marked spent refuses every call and the next run until /budget raise; the shared mark outlives a raise", () => {
    open({ daily: 1, shared: { daily: 0.2 } });
    spend("group:telegram:-1", "shared", 0.1);
    budget.markSpent("shared");
    expect(reservations.reserve(group(0.01))).toMatchObject({ type: "refused", limit: "shared", exhausted: true });
    expect(budget.check({ scope: "shared", purpose: "chat", sessionKey: "group:telegram:-1" })).toMatchObject({ type: "refuse", limit: "shared" });
    expect(budget.check({ scope: "main", purpose: "cron", sessionKey: "cron:1" })).toEqual({ type: "allow" });
    expect(told).toEqual([]); // the shared limit has no notice of its own

    budget.markSpent("daily");
    expect(budget.check({ scope: "main", purpose: "cron", sessionKey: "cron:1" })).toMatchObject({ type: "refuse", limit: "daily", reason: "the daily budget of $1.00 is spent ($0.10)" });
    expect(told).toEqual([
      "💰 Budget: today's $1.00 is spent ($0.10). Group chats, paired people, the heartbeat and scheduled jobs are paused until tomorrow. Your own messages still run, each reply marked \"(over budget)\". To raise today's limit send /budget raise 5 (dollars), or change budget.daily / budget.monthly in config.json.",
    ]);
    expect(JSON.parse(readFileSync(join(home, "budget.json"), "utf8")).spent).toEqual([`shared:${budget.status().day}`, `daily:${budget.status().day}`]);

    budget.raise(5);
    expect(budget.check({ scope: "main", purpose: "cron", sessionKey: "cron:1" })).toEqual({ type: "allow" });
    expect(budget.check({ scope: "shared", purpose: "chat", sessionKey: "group:telegram:-1" })).toMatchObject({ type: "refuse", limit: "shared" });
    expect(budget.firstRestingNotice("group:telegram:-1", "shared")).toBe(true);
    expect(RESTING_TEXT).toBe("I'm resting for today: my owner's budget for the day is spent. I'll be back tomorrow.");
  });
});

describe("a model call's worst case", () => {
  it("is its input at the dearest input rate it may be billed (a cache write of its TTL), its max_tokens of output and its searches, on the dearest model it may reach", () => {
    const table = { cheap: { input: 1, output: 5 }, dear: { input: 3, output: 15 } };
    const call = { inputTokens: 10_000, maxTokens: 2_000, cache: "5m" as const, webSearches: 0 };
    expect(worstCallUsd(["cheap"], call, table)).toBeCloseTo((10_000 * 1.25 + 2_000 * 5) / 1e6, 12);
    expect(worstCallUsd(["cheap", "dear"], call, table)).toBeCloseTo((10_000 * 3.75 + 2_000 * 15) / 1e6, 12);
    expect(worstCallUsd(["cheap"], { ...call, cache: "1h" }, table)).toBeCloseTo((10_000 * 2 + 2_000 * 5) / 1e6, 12);
    // Each search: its fee, and its results (20,000 tokens, an estimate) read again by every later step of the call.
    expect(worstCallUsd(["cheap"], { ...call, cache: false, webSearches: 1 }, table)).toBeCloseTo((10_000 * 1 + 20_000 * 1 + 2_000 * 5) / 1e6 + 0.01, 12);
    expect(worstCallUsd(["cheap"], { ...call, cache: false, webSearches: 2 }, table)).toBeCloseTo((10_000 * 1 + 20_000 * (2 + 1) + 2_000 * 5) / 1e6 + 0.02, 12);
  });

  it("counts the pages its fetches may bring, at max_content_tokens each, the largest first, each billed once per later step", () => {
    const table = { m: { input: 2, output: 10 } };
    const call = { inputTokens: 1_000, maxTokens: 1_000, cache: false as const, webSearches: 1, webFetches: 2, fetchTokens: 30_000 };
    // Three uses: the two 30,000-token pages read by 3 and 2 steps, the search's 20,000 tokens by 1.
    expect(worstCallUsd(["m"], call, table)).toBeCloseTo((1_000 * 2 + (30_000 * 3 + 30_000 * 2 + 20_000 * 1) * 2 + 1_000 * 10) / 1e6 + 0.01, 12);
  });
});

/** A model client scripted by a function of the call's options; it records usage itself, as the metered model does. */
function fakeClient(answer: (opts: { signal: AbortSignal; onEvent: (e: ModelEvent) => void }) => Promise<ModelResult>): ModelClient {
  return { model: "test-model", stream: (_req, opts) => answer(opts) };
}
const request = { system: [], tools: [], messages: [], maxTokens: 100 };
const ok: ModelResult = { type: "ok", message: { role: "assistant", content: [{ type: "text", text: "hi" }], stop: "end_turn", model: "test-model", usage: emptyUsage(), ts: 0 } };

describe("streamReserved", () => {
  const reserveWith = (worstUsd: number): ReserveCall => () => {
    const d = reservations.reserve(group(worstUsd));
    if (d.type === "refused") return { type: "refused", reason: d.reason };
    return { type: "reserved", hold: { extend: () => d.hold.extend(worstUsd)?.reason ?? null, settle: () => d.hold.release() } };
  };

  it("holds the call while it streams and releases the hold when it answers, fails or is aborted", async () => {
    open({ shared: { daily: 0.2 } });
    const signal = new AbortController().signal;
    let during = -1;
    expect(await streamReserved(fakeClient(async () => ((during = reservations.heldUsd().sharedUsd), ok)), request, { signal, onEvent: () => {} }, reserveWith(0.1))).toBe(ok);
    expect(during).toBe(0.1);
    expect(reservations.heldUsd().sharedUsd).toBe(0);

    const failed: ModelResult = { type: "error", error: { kind: "server", model: "test-model", message: "boom" }, partial: [] };
    expect(await streamReserved(fakeClient(async () => failed), request, { signal, onEvent: () => {} }, reserveWith(0.1))).toBe(failed);
    expect(reservations.heldUsd().sharedUsd).toBe(0);

    const stop = new AbortController();
    const aborted = streamReserved(
      fakeClient((o) => new Promise((resolve) => o.signal.addEventListener("abort", () => resolve({ type: "error", error: { kind: "aborted", model: "test-model", message: "The request was stopped." }, partial: [] })))),
      request,
      { signal: stop.signal, onEvent: () => {} },
      reserveWith(0.1),
    );
    expect(reservations.heldUsd().sharedUsd).toBe(0.1);
    stop.abort();
    expect(await aborted).toMatchObject({ type: "error", error: { kind: "aborted" } });
    expect(reservations.heldUsd().sharedUsd).toBe(0);

    // A client that throws (it must not) still leaves no hold behind.
    await expect(streamReserved(fakeClient(async () => Promise.reject(new Error("bug"))), request, { signal, onEvent: () => {} }, reserveWith(0.1))).rejects.toThrow("bug");
    expect(reservations.heldUsd().sharedUsd).toBe(0);
  });

  it("a call that does not fit is not made; a retry that does not fit stops the call as a budget error", async () => {
    open({ shared: { daily: 0.2 } });
    const signal = new AbortController().signal;
    let calls = 0;
    const refused = await streamReserved(fakeClient(async () => (calls++, ok)), request, { signal, onEvent: () => {} }, reserveWith(0.25));
    expect(refused).toEqual({ type: "error", error: { kind: "budget", model: "test-model", message: "today's budget for this chat is too small for one answer" }, partial: [] });
    expect(calls).toBe(0);

    const events: string[] = [];
    const retried = await streamReserved(
      fakeClient((o) => {
        // The first attempt failed mid-stream; the client says it will try again, then waits.
        o.onEvent({ type: "retry", attempt: 1, delayMs: 60_000, error: { kind: "overloaded", model: "test-model", message: "overloaded" } });
        return new Promise((resolve) => {
          if (o.signal.aborted) resolve({ type: "error", error: { kind: "aborted", model: "test-model", message: "The request was stopped." }, partial: [{ type: "text", text: "Half" }] });
        });
      }),
      request,
      { signal, onEvent: (e) => events.push(e.type) },
      reserveWith(0.12),
    );
    expect(retried).toEqual({ type: "error", error: { kind: "budget", model: "test-model", message: "today's budget for this chat is taken by answers in progress" }, partial: [{ type: "text", text: "Half" }] });
    expect(events).toEqual(["retry"]);
    expect(reservations.heldUsd().sharedUsd).toBe(0);
  });
});
