// Voice notes and the budget, end to end (the real daemon, the Bot API emulator, a fake
// transcription server): past the shared budget a group's voice note is neither downloaded nor
// transcribed, and within it a transcription is a priced usage record that `hearth usage` shows.
import { readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { setTimeout as sleep } from "node:timers/promises";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { cleanupDaemon, makeHome, startDaemon, waitFor, type Daemon } from "../support/daemon.ts";
import { startFakeModel, text, type FakeModel } from "../support/fake-model.ts";
import { startFakeTranscription, type FakeTranscription } from "../support/fake-transcription.ts";
import { startTelegramEmulator, type TelegramEmulator } from "../support/telegram-emulator.ts";

const OWNER = 100;
const FAMILY = { id: -1001, type: "supergroup" as const, title: "Family" };
const RESTING = "I'm resting for today: my owner's budget for the day is spent. I'll be back tomorrow.";

let fake: FakeModel;
let emu: TelegramEmulator;
let stt: FakeTranscription;
let daemon: Daemon | undefined;
let home: string | undefined;

beforeEach(async () => {
  fake = await startFakeModel();
  emu = await startTelegramEmulator();
  stt = await startFakeTranscription();
  daemon = undefined;
  home = undefined;
});
afterEach(async () => {
  await cleanupDaemon(daemon, home);
  await stt.close();
  await emu.stop();
  await fake.close();
});

const today = () => new Date().toISOString().slice(0, 10);

async function start(opts: { usage?: object[] } = {}): Promise<Daemon> {
  home = makeHome({
    timezone: "UTC",
    budget: { daily: 5, shared: { daily: 0.5 } },
    channels: { telegram: { apiRoot: emu.apiRoot, ownerIds: [String(OWNER)], dmPolicy: "allowlist", groups: { policy: "allowlist", allow: [String(FAMILY.id)], requireMention: false } } },
    // The fake server is on loopback, which is free by default: this test gives it OpenAI's price.
    media: { transcription: { baseUrl: stt.baseUrl, apiKey: "stt-key", model: "whisper-1", pricing: { perMinuteUsd: 0.006 } } },
  });
  if (opts.usage) writeFileSync(join(home, "usage.jsonl"), opts.usage.map((r) => `${JSON.stringify(r)}\n`).join(""));
  daemon = await startDaemon(home, { TELEGRAM_BOT_TOKEN: emu.token, ANTHROPIC_API_KEY: "test-key", ANTHROPIC_BASE_URL: fake.url });
  await waitFor("telegram polling", () => daemon!.log().includes("telegram.polling"));
  return daemon;
}

const member = () => emu.user({ userId: 200, firstName: "Bob", chat: FAMILY });
const voice = (seconds: number, byte: number) => ({ voice: { ...emu.addFile(new Uint8Array([79, 103, 103, 83, byte])), duration: seconds, mime_type: "audio/ogg" } });
const budgetRefusals = () => daemon!.log().split("\n").filter((l) => l.includes("budget.refused")).length;
const usageLines = () => readFileSync(join(home!, "usage.jsonl"), "utf8").trim().split("\n").map((l) => JSON.parse(l) as Record<string, unknown>);

describe("voice notes and the budget (daemon e2e)", () => {
  it("after the shared budget is spent, a member's voice notes get the resting sentence once and cost nothing: no download, no transcription, no model call", async () => {
    // An old-style line (no kind): a model call of a group today that spent the shared budget.
    const spent = { at: new Date().toISOString(), day: today(), session: `group:telegram:${FAMILY.id}`, scope: "shared", purpose: "chat", channel: "telegram", sender: "Bob", model: "claude-sonnet-5-5", inputTokens: 200_000, outputTokens: 0, cacheReadTokens: 0, cacheWrite5mTokens: 0, cacheWrite1hTokens: 0, costUsd: 0.6 };
    await start({ usage: [spent] });
    await member().sendMedia(voice(3, 1));
    const [first] = await emu.waitForBotMessages(FAMILY.id, 1, 20_000);
    expect(first!.text).toBe(RESTING);
    expect(stt.requests).toHaveLength(0);
    await member().sendMedia(voice(4, 2));
    await member().sendMedia(voice(5, 3));
    await waitFor("all three notes refused", () => budgetRefusals() >= 3, 20_000);
    await sleep(300);
    expect(stt.requests).toHaveLength(0);
    expect(emu.fileDownloads).toHaveLength(0);
    expect(fake.requests).toHaveLength(0);
    expect(emu.botMessages(FAMILY.id).map((m) => m.text)).toEqual([RESTING]);
    expect(usageLines()).toHaveLength(1);
  });

  it("within the budget, one voice note is one transcription record priced by the duration the API reports, and hearth usage shows it by kind", async () => {
    await start();
    stt.enqueue({ text: "Dinner at eight?", fields: { usage: { type: "duration", seconds: 42 } } });
    fake.enqueue(text("Sounds good.", { usage: { input_tokens: 1000, output_tokens: 100 } }));
    // Telegram states 30 s; the service measured 42 s, and the service's figure is the bill.
    await member().sendMedia(voice(30, 4));
    await waitFor("the answer", () => emu.botMessages(FAMILY.id).some((m) => m.text === "Sounds good."), 20_000);
    expect(stt.requests).toHaveLength(1);
    await waitFor("two usage records", () => usageLines().length === 2, 20_000);
    const [transcription, model] = usageLines();
    expect(transcription).toEqual({
      kind: "transcription",
      at: expect.any(String),
      day: today(),
      session: `group:telegram:${FAMILY.id}`,
      scope: "shared",
      purpose: "chat",
      channel: "telegram",
      sender: "Bob",
      model: "whisper-1",
      audioSeconds: 42,
      costUsd: 0.0042,
    });
    expect(model).toMatchObject({ kind: "model", model: "claude-sonnet-5-5", inputTokens: 1000, outputTokens: 100, costUsd: 0.0045 });

    const usage = await daemon!.hearth(["usage", "--by", "kind", "--since", today()]);
    expect(usage.code).toBe(0);
    expect(usage.stdout).toBe(
      [
        `Usage since ${today()} 00:00 UTC (${today()}), by kind:`,
        "KIND           CALLS  INPUT  CACHE WRITE  CACHE READ  OUTPUT  AUDIO     COST",
        "model              1  1,000            0           0     100      -  $0.0045",
        "transcription      1      0            0           0       0   0:42  $0.0042",
        "Total              2  1,000            0           0     100   0:42  $0.0087",
        "",
      ].join("\n"),
    );
    const status = await daemon!.hearth(["status", "--json"]);
    expect(JSON.parse(status.stdout).budget.sharedToday).toEqual({ spentUsd: expect.closeTo(0.0087, 10), limitUsd: 0.5 });
  });

  it("a service that does not say how long the audio was: the platform's stated duration is billed", async () => {
    await start();
    stt.enqueue({ text: "Call mum." });
    fake.enqueue(text("Will do.", { usage: { input_tokens: 10, output_tokens: 10 } }));
    await emu.user({ userId: OWNER, firstName: "Ann" }).sendMedia(voice(30, 5));
    await waitFor("the answer", () => emu.botMessages(OWNER).some((m) => m.text === "Will do."), 20_000);
    await waitFor("two usage records", () => usageLines().length === 2, 20_000);
    expect(usageLines()[0]).toMatchObject({ kind: "transcription", session: "main", scope: "main", model: "whisper-1", audioSeconds: 30, costUsd: 0.003 });
  });
});
