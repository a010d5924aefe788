// Budgets inside a real in-process gateway (fake model at the edge, a test channel for chats):
// the 80 % notice once, what stops at 100 % and what goes on, hardStop, /budget raise, and the
// shared scopes' sub-limit. Prices are overridden to $1 per million input tokens, so a call's
// cost is its input tokens / 1,000,000.
import { existsSync, mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { RESTING_TEXT } from "../../src/spending/budget.ts";
import { parseConfig } from "../../src/config/config.ts";
import { startGateway, type Gateway } from "../../src/gateway/gateway.ts";
import type { RunRecord } from "../../src/scheduler/run-log.ts";
import { gatewayOptions } from "../../src/gateway/setup.ts";
import { silentLogger } from "../../src/process/log.ts";
import { waitFor } from "../support/daemon.ts";
import { startFakeModel, text, type FakeModel } from "../support/fake-model.ts";
import { TestChannel } from "../support/test-channel.ts";
import { Heartbeat } from "../../src/scheduler/heartbeat.ts";
import type { BudgetDecision } from "../../src/spending/budget.ts";
import { FakeHost, FakeTime } from "../scheduler/fakes.ts";

let fake: FakeModel;
let home: string;
let gateway: Gateway | undefined;
beforeEach(async () => {
  fake = await startFakeModel();
  home = mkdtempSync(join(tmpdir(), "hearth-budget-"));
});
afterEach(async () => {
  await gateway?.stop();
  gateway = undefined;
  await fake.close();
  rmSync(home, { recursive: true, force: true });
});

const GROUP = "-100";

async function start(budget: Record<string, unknown>): Promise<TestChannel> {
  const channel = new TestChannel();
  const config = parseConfig(
    {
      timezone: "UTC",
      heartbeat: { every: "0" },
      budget,
      pricing: { "claude-sonnet-5-5": { input: 1, output: 0 } },
      channels: { telegram: { token: "t", ownerIds: ["1"], groups: { policy: "allowlist", allow: [GROUP], requireMention: false } } },
    },
    { home, env: { ANTHROPIC_API_KEY: "k", ANTHROPIC_BASE_URL: fake.url } },
  );
  gateway = await startGateway({ ...gatewayOptions(home, config, silentLogger, { daemon: false }), channels: [channel], schedule: true });
  return channel;
}

/** A reply that costs `usd` at the test's prices. */
const costing = (usd: number, reply = "ok") => text(reply, { usage: { input_tokens: Math.round(usd * 1_000_000), output_tokens: 0 } });

async function say(channel: TestChannel, from: "owner" | string, t: string): Promise<string> {
  const id = from === "owner" ? channel.say({ chat: "1", type: "dm", sender: "1", text: t }) : channel.say({ chat: GROUP, type: "group", sender: from, text: t, title: "Friends" });
  await waitFor(`the answer to ${t}`, () => channel.replies.has(id), 15_000);
  return channel.replies.get(id)![0]!;
}

const notices = (channel: TestChannel) => channel.replies.get("send:1") ?? [];
const settle = () => new Promise((r) => setTimeout(r, 300));
const RAISE_HINT = "To raise today's limit send /budget raise 5 (dollars), or change budget.daily / budget.monthly in config.json.";

describe("budgets", () => {
  it("tells the owner once, on their last chat, when 80 % of the day is spent", async () => {
    const channel = await start({ daily: 2 });
    fake.enqueue(costing(1.5), costing(0.2), costing(0.1));
    await say(channel, "owner", "first");
    await settle();
    expect(notices(channel)).toEqual([]);
    await say(channel, "owner", "second");
    await waitFor("the 80 % notice", () => notices(channel).length > 0);
    await say(channel, "owner", "third");
    await settle();
    expect(notices(channel)).toEqual(["💰 Budget: $1.70 of today's $2.00 is spent (85 %)."]);
  });

  it("at 100 %: a group gets one resting note and no model call, cron is skipped and recorded, the owner's DM runs marked over budget", async () => {
    const channel = await start({ daily: 1 });
    fake.enqueue(costing(1.0, "That was expensive."));
    // The run that crosses the limit finishes, unmarked: it was allowed when it started.
    expect(await say(channel, "owner", "big job")).toBe("That was expensive.");
    await waitFor("the 100 % notice", () => notices(channel).length > 0);
    const calls = fake.requests.length;

    expect(await say(channel, "7", "@bot hello?")).toBe(RESTING_TEXT);
    expect(await say(channel, "8", "@bot anyone there?")).toBe(""); // once per chat: then silence
    expect(fake.requests.length).toBe(calls);

    const job = gateway!.context.cron.add({ name: "Digest", at: new Date(Date.now() + 1_000).toISOString(), message: "Summarise the news", deliver: "owner" }, { createdBy: "cli" });
    const runsFile = join(home, "cron", "runs.jsonl");
    const runs = () => (existsSync(runsFile) ? readFileSync(runsFile, "utf8").trim().split("\n").map((l) => JSON.parse(l) as RunRecord) : []);
    await waitFor("the skipped run", () => runs().some((r) => r.status === "skipped"), 15_000);
    expect(runs()).toEqual([{ status: "skipped", runId: expect.stringMatching(new RegExp(`^${job.id}@`)), jobId: job.id, job: "Digest", scheduledAt: expect.any(String), reason: "budget", at: expect.any(String) }]);
    expect(gateway!.context.cron.get(job.id).lastStatus).toBe("skipped");
    expect(fake.requests.length).toBe(calls);

    fake.enqueue(costing(0.01, "Still here for you."));
    expect(await say(channel, "owner", "are you there?")).toBe("Still here for you.\n\n(over budget)");
    expect(fake.requests.length).toBe(calls + 1);
    await settle();
    expect(notices(channel)).toEqual([
      `💰 Budget: today's $1.00 is spent ($1.00). Group chats, paired people, the heartbeat and scheduled jobs are paused until tomorrow. Your own messages still run, each reply marked "(over budget)". ${RAISE_HINT}`,
    ]);
  });

  it("hardStop stops the owner too, with how to raise the limit; /budget raise 5 lets everyone run again today", async () => {
    const channel = await start({ daily: 1, hardStop: true });
    fake.enqueue(costing(1.0));
    await say(channel, "owner", "big job");
    const calls = fake.requests.length;
    expect(await say(channel, "owner", "one more?")).toBe(`I'm not answering: the daily budget of $1.00 is spent ($1.00). ${RAISE_HINT}`);
    expect(await say(channel, "7", "@bot hi")).toBe(RESTING_TEXT);
    expect(fake.requests.length).toBe(calls);

    expect(await say(channel, "7", "/budget raise 100")).toBe("Only the owner can see or change the budget, in a private chat.");
    expect(await say(channel, "owner", "/budget raise lots")).toMatch(/^Usage: \/budget raise N/);
    expect(await say(channel, "owner", "/budget raise 5")).toBe("Raised today's limit by $5.00, until midnight. Spent today: $1.00 of $6.00 (16 %) · this month: $1.00 (no limit) · raised today by $5.00");
    expect(JSON.parse(readFileSync(join(home, "budget.json"), "utf8"))).toMatchObject({ raisedUsd: 5 });

    fake.enqueue(costing(0.01, "Back at it."), costing(0.01, "Hi group."));
    expect(await say(channel, "owner", "one more?")).toBe("Back at it.");
    expect(await say(channel, "7", "@bot hi again")).toBe("Hi group.");
    const status = await say(channel, "owner", "/status");
    expect(status.split("\n").at(-1)).toBe("Spent today: $1.02 of $6.00 (17 %) · this month: $1.02 (no limit) · raised today by $5.00");
  });

  it("/budget raise without any limit says there is nothing to raise", async () => {
    const channel = await start({});
    expect(await say(channel, "owner", "/budget raise 5")).toBe("There is no budget to raise: no limit is set. Set budget.daily or budget.monthly in config.json to have one.");
    expect(await say(channel, "owner", "/budget")).toBe("Spent today: $0.00 (no limit) · this month: $0.00 (no limit)");
  });

  it("shared scopes stop at their own sub-limit (a fifth of the daily one); the owner goes on unmarked", async () => {
    const channel = await start({ daily: 10 });
    fake.enqueue(costing(2.0, "Group answer."), costing(0.5, "Owner answer."));
    expect(await say(channel, "7", "@bot expensive question")).toBe("Group answer.");
    expect(await say(channel, "7", "@bot another")).toBe(RESTING_TEXT);
    expect(await say(channel, "owner", "and me?")).toBe("Owner answer.");
    expect(fake.requests.length).toBe(2);
  });
});

describe("the heartbeat and the budget", () => {
  it("asks the budget before it queues: over budget it skips without a run; its runs carry purpose heartbeat", () => {
    const time = new FakeTime("2026-11-22T12:00:00Z");
    let decision: BudgetDecision = { type: "allow" };
    const asked: string[] = [];
    const host = Object.assign(new FakeHost(time), {
      checkBudget: (purpose: string, key: string) => (asked.push(`${purpose}:${key}`), decision),
    });
    const hb = new Heartbeat({ host, clock: time.clock, timers: time, log: silentLogger, everyMs: 30 * 60_000, activeHours: { start: "00:00", end: "00:00" }, timezone: "UTC", pauseAfterIdleMs: 0, readChecklist: () => "- anything due?" });
    expect(hb.beat()).toBe("ran");
    expect(host.submitted.map((s) => s.item.purpose)).toEqual(["heartbeat"]);
    decision = { type: "refuse", limit: "daily", reason: "the daily budget of $1.00 is spent ($1.00)" };
    expect(hb.beat()).toBe("budget");
    expect(host.submitted).toHaveLength(1);
    expect(asked).toEqual(["heartbeat:main", "heartbeat:main"]);
  });
});
