// A forum's topics are one group for the rate limits: mentions spread over topics count against
// the group's per-sender and per-chat windows, end to end (the real daemon, the Bot API emulator,
// the fake model counting the calls).
import { setTimeout as sleep } from "node:timers/promises";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { cleanupDaemon, makeHome, startDaemon, waitFor, type Daemon } from "../support/daemon.ts";
import { startFakeModel, text, type FakeModel } from "../support/fake-model.ts";
import { startTelegramEmulator, type TelegramEmulator } from "../support/telegram-emulator.ts";

const OWNER = 100;
const FORUM = { id: -1003, type: "supergroup" as const, title: "Club", isForum: true };
const TOPICS = [11, 12, 13, 14, 15];

const SENDER_REFUSAL = "You've sent me a lot of messages in a short time, so I'm taking a break from yours. I can answer you again in about 60 minutes.";
const CHAT_REFUSAL = "This chat has sent me a lot of messages in a short time, so I'm taking a break here. I can answer again in about 60 minutes.";

let fake: FakeModel;
let emu: TelegramEmulator;
let daemon: Daemon | undefined;

beforeEach(async () => {
  fake = await startFakeModel();
  fake.setDefault(text("ok"));
  emu = await startTelegramEmulator();
  daemon = undefined;
});
afterEach(async () => {
  await cleanupDaemon(daemon);
  await emu.stop();
  await fake.close();
});

async function start(): Promise<Daemon> {
  const home = makeHome({
    channels: {
      telegram: {
        apiRoot: emu.apiRoot,
        ownerIds: [String(OWNER)],
        // followup: each admitted message is its own run, so model calls count admitted messages.
        queueMode: "followup",
        groups: { policy: "allowlist", allow: [String(FORUM.id)], rateLimit: { perSender: 2, perChat: 4, window: "1h" } },
      },
    },
  });
  daemon = await startDaemon(home, { TELEGRAM_BOT_TOKEN: emu.token, ANTHROPIC_API_KEY: "test-key", ANTHROPIC_BASE_URL: fake.url });
  await waitFor("telegram polling", () => daemon!.log().includes("telegram.polling"));
  return daemon;
}

const rateLimited = () => daemon!.log().split("\n").filter((l) => l.includes("inbound.rate_limited")).length;

/**
 * Sends one mention (in `topic`, or in the group outside any topic) and waits until the daemon
 * has dealt with it: refused (logged), or answered by the model.
 */
async function mention(userId: number, topic: number | undefined, n: number): Promise<void> {
  const before = { calls: fake.requests.length, refused: rateLimited(), answers: emu.botMessages(FORUM.id).filter((m) => m.text === "ok").length };
  const member = emu.user({ userId, firstName: `Member${userId}`, chat: FORUM });
  await member.send(`@TestNameBot question ${n}`, topic === undefined ? {} : { message_thread_id: topic, is_topic_message: true });
  await waitFor(`mention ${n} handled`, () => fake.requests.length > before.calls || rateLimited() > before.refused, 20_000);
  if (fake.requests.length > before.calls) {
    await waitFor(`answer to mention ${n}`, () => emu.botMessages(FORUM.id).filter((m) => m.text === "ok").length > before.answers, 20_000);
  }
}

const seen = () => emu.botMessages(FORUM.id).map((m) => [m.threadId ?? null, m.text]);

describe("rate limits in a forum (daemon e2e)", () => {
  it("one member: 2 mentions in the group, then 2 in each of 5 topics — the topics share the member's window: 2 model calls, one refusal", async () => {
    await start();
    let n = 0;
    await mention(200, undefined, ++n);
    await mention(200, undefined, ++n);
    for (const topic of TOPICS) for (let i = 0; i < 2; i++) await mention(200, topic, ++n);
    await sleep(300);
    expect(fake.requests).toHaveLength(2);
    expect(seen()).toEqual([
      [null, "ok"],
      [null, "ok"],
      [TOPICS[0], SENDER_REFUSAL],
    ]);
  });

  it("5 topics × 2 mentions from different members: the group's window holds 4, so 4 model calls and one refusal", async () => {
    await start();
    let n = 0;
    for (const topic of TOPICS) for (let i = 0; i < 2; i++) await mention(300 + n, topic, ++n);
    await sleep(300);
    expect(fake.requests).toHaveLength(4);
    expect(seen()).toEqual([
      [TOPICS[0], "ok"],
      [TOPICS[0], "ok"],
      [TOPICS[1], "ok"],
      [TOPICS[1], "ok"],
      [TOPICS[2], CHAT_REFUSAL],
    ]);
  });
});
