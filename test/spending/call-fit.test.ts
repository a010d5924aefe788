// The size of one model call: the request is sent with its web tools bounded, and where its
// worst case does not fit what is left it asks for less — fewer and shorter web tool uses, a
// lower max_tokens — down to its input and a short answer; a limit smaller than that is "too
// small for one answer", marked so, and never called spent.
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import type { ModelRequest } from "../../src/agent/providers/model.ts";
import { silentLogger } from "../../src/process/log.ts";
import { Budget, TOO_SMALL_TEXT } from "../../src/spending/budget.ts";
import { boundOf, fitBound, leastBound, withBound } from "../../src/spending/call-fit.ts";
import { UsageLedger } from "../../src/spending/ledger.ts";
import { worstCallUsd } from "../../src/spending/pricing.ts";
import { Reservations, type PaidCall } from "../../src/spending/reservations.ts";

const price = { models: ["sonnet"], pricing: { sonnet: { input: 3, output: 15 } } };
const cost = (b: Parameters<typeof worstCallUsd>[1]) => worstCallUsd(price.models, b, price.pricing);
const search = { type: "web_search_20260318", name: "web_search", max_uses: 5, user_location: { type: "approximate", timezone: "UTC" } };
const fetchTool = { type: "web_fetch_20260318", name: "web_fetch", max_uses: 10, max_content_tokens: 25_000 };
const request: ModelRequest = { system: [{ text: "You are Hearth.", cacheBreakpoint: true }], tools: [], messages: [], maxTokens: 8_192, serverTools: [search, fetchTool] };

describe("a model call's bounds", () => {
  it("are read from the request, a fetch without max_content_tokens counted (and sent) at 25,000 tokens", () => {
    expect(boundOf(request, 5_000)).toEqual({ inputTokens: 5_000, maxTokens: 8_192, cache: "5m", webSearches: 5, webFetches: 10, fetchTokens: 25_000 });
    const bare = { ...request, cache: false as const, serverTools: [{ type: "web_fetch_20260318", name: "web_fetch" }] };
    expect(boundOf(bare, 10)).toEqual({ inputTokens: 10, maxTokens: 8_192, cache: false, webSearches: 0, webFetches: 50, fetchTokens: 25_000 });
    expect(withBound(bare, boundOf(bare, 10)).serverTools).toEqual([{ type: "web_fetch_20260318", name: "web_fetch", max_uses: 50, max_content_tokens: 25_000 }]);
  });

  it("fit whole when they can: the request goes out as asked", () => {
    const full = boundOf(request, 5_000);
    expect(fitBound(full, cost(full), price)).toBe(full);
    expect(withBound(request, full)).toEqual(request);
  });

  it("ask for less where they do not fit: web tools within half of what is left after a short answer, the longest answer beside them", () => {
    const full = boundOf(request, 5_000);
    expect(cost(full)).toBeGreaterThan(5); // 15 uses, each result read again by every later step
    const fitted = fitBound(full, 0.5, price)!;
    expect(fitted).toEqual({ inputTokens: 5_000, maxTokens: 8_192, cache: "5m", webSearches: 1, webFetches: 1, fetchTokens: 25_000 });
    expect(cost(fitted)).toBeLessThanOrEqual(0.5);

    // Less room: no search, shorter pages (a power of two), and a lower max_tokens.
    const tight = fitBound(full, 0.1, price)!;
    expect(tight).toEqual({ inputTokens: 5_000, maxTokens: expect.any(Number), cache: "5m", webSearches: 0, webFetches: 1, fetchTokens: 8_192 });
    expect(tight.maxTokens).toBeLessThan(8_192);
    expect(cost(tight)).toBeLessThanOrEqual(0.1);
    expect(cost({ ...tight, maxTokens: tight.maxTokens + 1 })).toBeGreaterThan(0.1);
    expect(withBound(request, tight)).toEqual({ ...request, maxTokens: tight.maxTokens, serverTools: [{ ...fetchTool, max_uses: 1, max_content_tokens: 8_192 }] });

    // Room for a short answer only: no web tools at all.
    const least = leastBound(full);
    expect(least).toEqual({ inputTokens: 5_000, maxTokens: 1_024, cache: "5m", webSearches: 0 });
    const short = fitBound(full, cost(least) + 0.001, price)!;
    expect(short).toMatchObject({ webSearches: 0, webFetches: 0 });
    expect(withBound(request, short).serverTools).toBeUndefined();
    expect(fitBound(full, cost(least) - 0.0001, price)).toBeNull();
  });
});

describe("a call that can ask for less, held", () => {
  let home: string;
  let ledger: UsageLedger;
  let budget: Budget;
  let reservations: Reservations;
  const told: string[] = [];
  beforeEach(() => {
    home = mkdtempSync(join(tmpdir(), "hearth-fit-"));
    told.length = 0;
  });
  afterEach(() => rmSync(home, { recursive: true, force: true }));
  const open = (daily: number, shared: number) => {
    ledger = UsageLedger.open({ file: join(home, "usage.jsonl"), timezone: "UTC", pricing: {}, log: silentLogger, clock: Date.now });
    budget = new Budget({ config: { daily, hardStop: false, shared: { daily: shared } }, ledger, home, log: silentLogger, notifyOwner: async (t) => void told.push(t) });
    reservations = new Reservations({ budget, ledger });
  };
  const group: PaidCall = { kind: "model", sessionKey: "group:telegram:-1", scope: "shared", purpose: "chat", worstUsd: 0.15, leastUsd: 0.03 };

  it("is held at what is left, down to its least; then refused as taken, not spent", () => {
    open(0.5, 0.1);
    const first = reservations.reserve(group);
    expect(first).toMatchObject({ type: "reserved", usd: 0.1 });
    expect(reservations.reserve(group)).toEqual({ type: "refused", limit: "shared", reason: "today's budget for this chat is taken by answers in progress", exhausted: false, tooSmall: false });
    if (first.type === "reserved") first.hold.release();
    expect(reservations.reserve({ ...group, worstUsd: 0.05 })).toMatchObject({ type: "reserved", usd: 0.05 });
  });

  it("a limit smaller than its least is too small for one answer: marked so, with a resting note that says so", () => {
    open(0.5, 0.02);
    expect(reservations.reserve(group)).toEqual({ type: "refused", limit: "shared", reason: "today's budget for this chat is too small for one answer", exhausted: true, tooSmall: true });
    budget.markSpent("shared", 0.03);
    expect(budget.check({ scope: "shared", purpose: "chat", sessionKey: group.sessionKey })).toEqual({ type: "refuse", limit: "shared", reason: "the daily budget for shared chats of $0.02 is too small for one answer", tooSmall: true });
    expect(TOO_SMALL_TEXT).toBe("I'm resting: my owner's budget for this chat is too small for one answer.");
    expect(reservations.reserve({ ...group, worstUsd: 0.01, leastUsd: 0.01 })).toMatchObject({ reason: "today's budget for this chat is too small for one answer" });

    // The day's limit too small for the heartbeat: the owner hears why, not that it is spent.
    budget.markSpent("daily", 0.6);
    expect(told).toEqual([
      "💰 Budget: today's $0.50 is too small for one answer, which could cost up to $0.60. Group chats, paired people, the heartbeat and scheduled jobs are paused until tomorrow. Your own messages still run, each reply marked \"(over budget)\". To raise today's limit send /budget raise 5 (dollars), or change budget.daily / budget.monthly in config.json.",
    ]);
    expect(budget.check({ scope: "main", purpose: "heartbeat", sessionKey: "heartbeat" })).toMatchObject({ reason: "the daily budget of $0.50 is too small for one answer", tooSmall: true });
    budget.raise(5);
    expect(budget.check({ scope: "main", purpose: "heartbeat", sessionKey: "heartbeat" })).toEqual({ type: "allow" });
    expect(budget.isTooSmall("shared")).toBe(true); // the shared limit is not raised
  });
});
