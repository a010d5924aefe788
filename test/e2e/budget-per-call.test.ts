// The budget before every paid call, end to end (issue 38): the real daemon, the Bot API
// emulator and the fake model with its prompt cache, so that each request's usage follows its
// size. A group's run that would make 25 model calls against a $0.20 shared daily limit stops
// before the limit, says so once, and the group's next message gets the resting sentence without
// a model call; a background task with a $1.00 cost cap never records more than $1.00.
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { cleanupDaemon, inboxSettled, makeHome, startDaemon, waitFor, type Daemon } from "../support/daemon.ts";
import { startFakeModel, text, toolCall, type FakeModel, type RecordedRequest, type Scripted } from "../support/fake-model.ts";
import { firstUserText, parentScript, records, resultOf, spawnedId } from "../support/task-script.ts";
import { startTelegramEmulator, type TelegramEmulator } from "../support/telegram-emulator.ts";

const OWNER = 100;
const FAMILY = { id: -1001, type: "supergroup" as const, title: "Family" };
const STOPPED = "I stopped here: today's budget for this chat is spent.";
const RESTING = "I'm resting for today: my owner's budget for the day is spent. I'll be back tomorrow.";
const STEPS = 25;

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

async function start(config: Record<string, unknown>): Promise<Daemon> {
  home = makeHome({
    timezone: "UTC",
    agent: { maxTurns: 40 },
    channels: { telegram: { apiRoot: emu.apiRoot, ownerIds: [String(OWNER)], dmPolicy: "allowlist", groups: { policy: "allowlist", allow: [String(FAMILY.id)], requireMention: false } } },
    ...config,
  });
  daemon = await startDaemon(home, { TELEGRAM_BOT_TOKEN: emu.token, ANTHROPIC_API_KEY: "test-key", ANTHROPIC_BASE_URL: fake.url });
  await waitFor("telegram polling", () => daemon!.log().includes("telegram.polling"));
  return daemon;
}

const toolResults = (req: RecordedRequest): number => (JSON.stringify(req.body).match(/"type":"tool_result"/g) ?? []).length;
/** A model that works through 25 steps, one memory search per call, each answer `outputTokens` long (thinking it does not show). */
const stepper = (outputTokens: number) => (req: RecordedRequest): Scripted => {
  const done = toolResults(req);
  return done < STEPS - 1 ? toolCall("memory_search", { query: `step ${done + 1}` }, { usage: { output_tokens: outputTokens } }) : text(`All ${STEPS} steps are done.`);
};
type Line = { kind?: string; session: string; scope: string; costUsd: number };
const usageLines = (): Line[] => readFileSync(join(home!, "usage.jsonl"), "utf8").trim().split("\n").map((l) => JSON.parse(l) as Line);
const total = (lines: Line[]) => lines.reduce((sum, l) => sum + l.costUsd, 0);

describe("the budget before every call (daemon e2e)", () => {
  it("a group's run of 25 tool-calling steps against a $0.20 shared daily limit stops before it, says so once, and the next message rests", async () => {
    await start({ model: { maxTokens: 2_000 }, budget: { daily: 5, shared: { daily: 0.2 } } });
    fake.setDefault({ type: "respond", fn: stepper(1_500) });
    const member = emu.user({ userId: 200, firstName: "Bob", chat: FAMILY });
    await member.send("please do all 25 steps");
    await emu.waitForBotMessages(FAMILY.id, 1, 60_000);
    await waitFor("the run's end", () => inboxSettled(home!), 60_000);

    // Each call made cost about $0.03 (1,500 output tokens at $15 a million, and its input): all
    // 25 would have cost several times the limit. The run stopped while the next call's worst
    // case no longer fitted, and the ledger never passed the limit.
    const calls = fake.requests.length;
    expect(calls).toBeGreaterThanOrEqual(3);
    expect(calls).toBeLessThan(STEPS);
    const lines = usageLines();
    expect(lines.map((l) => [l.kind, l.session, l.scope])).toEqual(Array.from({ length: calls }, () => ["model", `group:telegram:${FAMILY.id}`, "shared"]));
    expect(total(lines)).toBeLessThanOrEqual(0.2);
    expect(total(lines)).toBeGreaterThan(0.05);
    expect(emu.botMessages(FAMILY.id).map((m) => m.text)).toEqual([STOPPED]);
    // What it did is kept: every step it took is in the group's transcript with its result.
    const transcript = readFileSync(join(home!, "sessions", `group:telegram:${FAMILY.id}.jsonl`), "utf8");
    expect((transcript.match(/"role":"tool_result"/g) ?? []).length).toBe(calls);
    expect(transcript).toContain('"status":"over_budget"');

    // The limit is spent for today: the next message gets the resting sentence, and no model call.
    await member.send("are you still there?");
    await emu.waitForBotMessages(FAMILY.id, 2, 30_000);
    await waitFor("the second message handled", () => inboxSettled(home!), 30_000);
    expect(emu.botMessages(FAMILY.id).map((m) => m.text)).toEqual([STOPPED, RESTING]);
    expect(fake.requests).toHaveLength(calls);
    const status = JSON.parse((await daemon!.hearth(["status", "--json"])).stdout);
    expect(status.budget.sharedToday.spentUsd).toBeLessThanOrEqual(0.2);
    expect(emu.botMessages(OWNER)).toEqual([]);
  }, 120_000);

  it("a background task with a $1.00 cost cap never records more than $1.00: it stops before the call that could pass it", async () => {
    await start({ tasks: { maxCostUsd: 1 } });
    // The child: 25 steps of 8,000 output tokens each (about $0.12 a call); the parent starts it.
    const child = stepper(8_000);
    fake.setDefault({ type: "respond", fn: (req) => (firstUserText(req).includes("Background task") ? child(req) : parentScript(req)) });
    await emu.user({ userId: OWNER, firstName: "Ann" }).send("please research: steps");
    await waitFor("the task", () => spawnedId(home!, "steps") !== undefined, 30_000);
    const id = spawnedId(home!, "steps")!;
    await waitFor("the task's result", () => resultOf(home!, id) !== undefined, 90_000);

    const spent = total(usageLines().filter((l) => l.session === `task:${id}`));
    expect(spent).toBeLessThanOrEqual(1);
    expect(spent).toBeGreaterThan(0.5);
    const childCalls = fake.requests.filter((r) => firstUserText(r).includes("Background task")).length;
    expect(childCalls).toBeLessThan(STEPS);
    const result = resultOf(home!, id)!;
    expect(result.end).toBe("over-cost");
    expect(result.costUsd).toBeCloseTo(spent, 9);
    expect(result.text).toMatch(new RegExp(`^⏹ Task ${id} "steps" was stopped: its next step could have gone over its cost cap of \\$1\\.00 \\(tasks\\.maxCostUsd\\) \\((?:\\d+m )?\\d+s, \\$0\\.\\d{4}\\)\\.$`));
    expect(records(home!).filter((r) => r.type === "progress" && r.id === id)).toHaveLength(childCalls);
  }, 150_000);
});
