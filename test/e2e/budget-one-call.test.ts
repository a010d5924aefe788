// One model call cannot pass a limit, end to end: the real daemon, the Bot API emulator and the
// fake model, which bills a server-side web fetch as the API does (the page cut at the request's
// max_content_tokens, read again by every later step of the call). A fetch of a huge page under a
// $0.50 day with hardStop stays within the day; a group's first mention under a $0.10 shared limit
// is answered with a lower max_tokens instead of refused; a limit too small for even a short
// answer is refused in words that say so, never "spent".
import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { cleanupDaemon, inboxSettled, makeHome, startDaemon, waitFor, type Daemon } from "../support/daemon.ts";
import { startFakeModel, text, type FakeModel } from "../support/fake-model.ts";
import { EMULATED_BOT, startTelegramEmulator, type TelegramEmulator } from "../support/telegram-emulator.ts";

const OWNER = 100;
const FAMILY = { id: -1001, type: "supergroup" as const, title: "Family" };
/** 1,200,000 characters: 300,000 tokens, about $0.90 of input at Sonnet's price, were it read whole. */
const HUGE_PAGE = "All work and no play makes Jack a dull boy. ".repeat(1_200_000 / 44 + 1).slice(0, 1_200_000);

let fake: FakeModel;
let emu: TelegramEmulator;
let daemon: Daemon | undefined;
let home: string | undefined;

beforeEach(async () => {
  fake = await startFakeModel({ promptCache: { clock: Date.now } });
  emu = await startTelegramEmulator();
  daemon = undefined;
  home = undefined;
});
afterEach(async () => {
  await cleanupDaemon(daemon, home);
  await emu.stop();
  await fake.close();
});

async function start(budget: Record<string, unknown>): Promise<void> {
  home = makeHome({
    timezone: "UTC",
    budget,
    channels: { telegram: { apiRoot: emu.apiRoot, ownerIds: [String(OWNER)], dmPolicy: "allowlist", groups: { policy: "allowlist", allow: [String(FAMILY.id)], requireMention: true } } },
  });
  daemon = await startDaemon(home, { TELEGRAM_BOT_TOKEN: emu.token, ANTHROPIC_API_KEY: "test-key", ANTHROPIC_BASE_URL: fake.url });
  await waitFor("telegram polling", () => daemon!.log().includes("telegram.polling"));
}

type Line = { kind: string; session: string; inputTokens: number; outputTokens: number; webFetchRequests?: number; costUsd: number };
const usageLines = (): Line[] => (existsSync(join(home!, "usage.jsonl")) ? readFileSync(join(home!, "usage.jsonl"), "utf8").trim().split("\n").filter(Boolean).map((l) => JSON.parse(l) as Line) : []);
const spentToday = async (): Promise<{ spentUsd: number; limitUsd: number }> => JSON.parse((await daemon!.hearth(["status", "--json"])).stdout).budget.today;
const toolsOf = (i: number): Array<Record<string, unknown>> => fake.requests[i]!.body.tools ?? [];

describe("one model call within the limit (daemon e2e)", () => {
  it("a server-side fetch of a huge page under a $0.50 day with hardStop: the page is cut to what is left, and the day's spend stays within $0.50", async () => {
    await start({ daily: 0.5, hardStop: true });
    fake.enqueue({ type: "message", blocks: [{ fetch: { url: "https://example.com/huge", page: HUGE_PAGE } }, { text: "It is one sentence, many times over." }] });
    await emu.user({ userId: OWNER, firstName: "Ann" }).send("what does https://example.com/huge say?");
    await waitFor("the answer", () => emu.botMessages(OWNER).some((m) => m.text === "It is one sentence, many times over."), 60_000);
    await waitFor("the run's end", () => inboxSettled(home!), 30_000);

    // The day's spend — what the fake billed, as the ledger recorded it — stays within the limit.
    const lines = usageLines();
    expect(lines).toHaveLength(1);
    expect(lines[0]!.costUsd).toBeLessThanOrEqual(0.5);
    const today = await spentToday();
    expect(today.limitUsd).toBe(0.5);
    expect(today.spentUsd).toBeCloseTo(lines[0]!.costUsd, 9);
    expect(today.spentUsd).toBeLessThanOrEqual(0.5);
    // Because the request bounded the fetch: its uses and its page sized from what the day had
    // left, and the page cut at 25,000 tokens, not 300,000.
    const fetchTool = toolsOf(0).find((t) => t.name === "web_fetch")!;
    expect(fetchTool).toMatchObject({ type: "web_fetch_20260318", max_uses: 1, max_content_tokens: 25_000 });
    expect(fake.requests[0]!.body.max_tokens).toBe(8_192);
    expect(lines[0]).toMatchObject({ kind: "model", session: "main", inputTokens: fake.requests[0]!.usage!.input_tokens, webFetchRequests: 1 });
    expect(lines[0]!.inputTokens).toBeGreaterThanOrEqual(25_000);
    expect(lines[0]!.inputTokens).toBeLessThan(30_000);
  }, 90_000);

  it("a $0.10 shared limit answers a group's first mention of the day with a lower max_tokens, within the limit", async () => {
    await start({ daily: 0.5, shared: { daily: 0.1 } });
    fake.enqueue(text("Hello, family!"));
    await emu.user({ userId: 200, firstName: "Bob", chat: FAMILY }).send(`@${EMULATED_BOT.username} hello!`);
    await emu.waitForBotMessages(FAMILY.id, 1, 60_000);
    await waitFor("the run's end", () => inboxSettled(home!), 30_000);

    expect(emu.botMessages(FAMILY.id).map((m) => m.text)).toEqual(["Hello, family!"]);
    // 8,192 tokens of Sonnet's output alone ($0.12) would not fit $0.10: the call asked for less.
    const maxTokens: number = fake.requests[0]!.body.max_tokens;
    expect(maxTokens).toBeLessThan(8_192);
    expect(maxTokens).toBeGreaterThan(1_024);
    const lines = usageLines();
    expect(lines.map((l) => [l.kind, l.session])).toEqual([["model", `group:telegram:${FAMILY.id}`]]);
    expect(lines[0]!.costUsd).toBeLessThanOrEqual(0.1);
    expect(emu.botMessages(OWNER)).toEqual([]);
  }, 90_000);

  it("a shared limit too small for even a short answer is refused as too small — nothing spent, never \"spent\" — and the next mention hears why once", async () => {
    await start({ daily: 0.5, shared: { daily: 0.01 } });
    fake.setDefault(text("never sent"));
    const bob = emu.user({ userId: 200, firstName: "Bob", chat: FAMILY });
    await bob.send(`@${EMULATED_BOT.username} hello!`);
    await emu.waitForBotMessages(FAMILY.id, 1, 60_000);
    await waitFor("the run's end", () => inboxSettled(home!), 30_000);
    expect(emu.botMessages(FAMILY.id).map((m) => m.text)).toEqual(["I stopped here: today's budget for this chat is too small for one answer."]);

    await bob.send(`@${EMULATED_BOT.username} are you there?`);
    await emu.waitForBotMessages(FAMILY.id, 2, 30_000);
    await waitFor("the second mention handled", () => inboxSettled(home!), 30_000);
    expect(emu.botMessages(FAMILY.id).map((m) => m.text)).toEqual([
      "I stopped here: today's budget for this chat is too small for one answer.",
      "I'm resting: my owner's budget for this chat is too small for one answer.",
    ]);
    expect(fake.requests).toHaveLength(0);
    expect(usageLines()).toEqual([]);
    expect(emu.botMessages(OWNER)).toEqual([]);
  }, 90_000);
});
