// Spending through the real daemon and CLI: `hearth status` shows today and this month against
// the limits, `hearth usage --json` sums usage.jsonl exactly, and `/budget` answers in chat.
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { cleanupDaemon, makeHome, startDaemon, type Daemon } from "../support/daemon.ts";
import { startFakeModel, text, type FakeModel } from "../support/fake-model.ts";

let fake: FakeModel;
let d: Daemon | undefined;
beforeEach(async () => {
  fake = await startFakeModel();
});
afterEach(async () => {
  await cleanupDaemon(d);
  d = undefined;
  await fake.close();
});

describe("hearth status and hearth usage", () => {
  it("show today and this month against the limits, and totals equal to the records", async () => {
    const home = makeHome({ budget: { daily: 2, monthly: 30 } });
    d = await startDaemon(home, { ANTHROPIC_API_KEY: "k", ANTHROPIC_BASE_URL: fake.url });
    // Sonnet list prices: 100,000 input tokens = $0.30; 10,000 cache-read tokens = $0.003.
    fake.enqueue(text("one", { usage: { input_tokens: 100_000, output_tokens: 0 } }), text("two", { usage: { input_tokens: 100_000, output_tokens: 0, cache_read_input_tokens: 10_000 } }));
    expect((await d.hearth(["chat", "-m", "hi"])).code).toBe(0);
    expect((await d.hearth(["chat", "-m", "again"])).code).toBe(0);

    const status = await d.hearth(["status"]);
    expect(status.code).toBe(0);
    expect(status.stdout.trimEnd().split("\n").at(-1)).toBe("Spent today: $0.60 of $2.00 (30 %) · this month: $0.60 of $30.00 (2 %)");
    const json = JSON.parse((await d.hearth(["status", "--json"])).stdout);
    expect(json.budget.today).toEqual({ spentUsd: expect.closeTo(0.603, 12), limitUsd: 2 });

    const records = readFileSync(join(home, "usage.jsonl"), "utf8").trim().split("\n").map((l) => JSON.parse(l));
    expect(records.map((r) => [r.session, r.purpose, r.channel, r.inputTokens, r.cacheReadTokens])).toEqual([
      ["main", "chat", "cli", 100_000, 0],
      ["main", "chat", "cli", 100_000, 10_000],
    ]);
    const usage = await d.hearth(["usage", "--json", "--by", "purpose"]);
    expect(usage.code).toBe(0);
    const report = JSON.parse(usage.stdout);
    expect(report.rows.map((r: { key: string; calls: number }) => [r.key, r.calls])).toEqual([["chat", 2]]);
    expect(report.total).toEqual({ calls: 2, inputTokens: 200_000, outputTokens: 0, cacheReadTokens: 10_000, cacheWrite5mTokens: 0, cacheWrite1hTokens: 0, webSearches: 0, webFetches: 0, audioSeconds: 0, costUsd: 0.603 });

    const budget = await d.hearth(["chat", "-m", "/budget"]);
    expect(budget.stdout.trim()).toBe("Spent today: $0.60 of $2.00 (30 %) · this month: $0.60 of $30.00 (2 %)");
    expect(fake.requests).toHaveLength(2);
  });
});
