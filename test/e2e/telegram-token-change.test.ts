// A new bot token (BotFather → /revoke, or another bot) behind the same home: the new bot's
// Bot API numbers its messages from 1 again, in the same private chat id (the user's own), so
// the owner's first messages to it carry the ids of messages the old bot had. They are answered;
// a message taken for one accepted before is never dropped without a log line.
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { cleanupDaemon, inboxSettled, makeHome, startDaemon, waitFor, type Daemon } from "../support/daemon.ts";
import { startFakeModel, text, type FakeModel } from "../support/fake-model.ts";
import { startTelegramEmulator, type TelegramEmulator } from "../support/telegram-emulator.ts";

const OWNER = 4242;
let fake: FakeModel | undefined;
let emus: TelegramEmulator[] = [];
let daemon: Daemon | undefined;
let home: string;

afterEach(async () => {
  await cleanupDaemon(daemon, home);
  for (const e of emus) await e.stop();
  emus = [];
  await fake?.close();
});

async function runOn(emu: TelegramEmulator): Promise<Daemon> {
  writeFileSync(join(home, "config.json"), JSON.stringify({ channels: { telegram: { apiRoot: emu.apiRoot, ownerIds: [String(OWNER)] } } }), { mode: 0o600 });
  const d = await startDaemon(home, { TELEGRAM_BOT_TOKEN: emu.token, ANTHROPIC_API_KEY: "k", ANTHROPIC_BASE_URL: fake!.url });
  await waitFor("telegram polling", () => d.log().includes("telegram.polling"));
  return d;
}

const answers = (emu: TelegramEmulator) => emu.botMessages(OWNER).filter((m) => m.parseMode === "HTML").map((m) => m.text);

describe("telegram: a token change", () => {
  it("the new bot's messages, numbered from 1 again in the same chat, are answered; a message dropped as seen before is logged", async () => {
    fake = await startFakeModel();
    home = makeHome();
    const oldBot = await startTelegramEmulator();
    emus.push(oldBot);
    daemon = await runOn(oldBot);
    fake.enqueue(text("Hello from the old bot."));
    const first = await oldBot.user({ userId: OWNER, firstName: "Ann" }).send("hello");
    await waitFor("the old bot's answer", () => answers(oldBot).length === 1);
    await waitFor("the inbox settled", () => inboxSettled(home));
    expect(await daemon.stop()).toBe(0);

    // Another token: another bot, whose chats count from 1 again.
    const newBot = await startTelegramEmulator({ token: "987654321:AAF_another-bot-token-for-the-test-0", botId: 987654321 });
    emus.push(newBot);
    daemon = await runOn(newBot);
    fake.enqueue(text("Hello from the new bot."));
    const again = await newBot.user({ userId: OWNER, firstName: "Ann" }).send("are you the new bot?");
    expect(again).toBe(first);
    await waitFor("the new bot's answer", () => answers(newBot).length === 1);
    expect(answers(newBot)).toEqual(["Hello from the new bot."]);
    expect(daemon.log()).not.toContain('"event":"inbound.duplicate"');
    expect(await daemon.stop()).toBe(0);

    // The old bot's Bot API started afresh (its numbering too): the same bot, chat and message
    // id as a message accepted before. Hearth cannot tell it from a re-delivery; it is dropped, and says so.
    const restarted = await startTelegramEmulator();
    emus.push(restarted);
    daemon = await runOn(restarted);
    const replayed = await restarted.user({ userId: OWNER, firstName: "Ann" }).send("hello again");
    expect(replayed).toBe(first);
    await waitFor("the drop in the log", () => daemon!.log().includes('"event":"inbound.duplicate"'));
    const line = daemon.log().split("\n").find((l) => l.includes('"event":"inbound.duplicate"'))!;
    expect(JSON.parse(line)).toMatchObject({ level: "info", event: "inbound.duplicate", channel: "telegram", chat: String(OWNER), msg: `666:${OWNER}:${first}`, action: "dropped: a message with this id was accepted before" });
    expect(fake.requests).toHaveLength(2);
  });
});
