// A model that stops responding (issue 12): the real daemon with `model.idleTimeoutMs: 2000`,
// a fake model that hangs, and the Telegram emulator. The user is told in words within about two
// idle timeouts, and the lane is free for the next message at once.
import { setTimeout as sleep } from "node:timers/promises";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { markdownToTelegramHtml } from "../../src/channels/telegram/html.ts";
import { cleanupDaemon, makeHome, startDaemon, waitFor, type Daemon } from "../support/daemon.ts";
import { startFakeModel, text, type FakeModel } from "../support/fake-model.ts";
import { startTelegramEmulator, type TelegramEmulator } from "../support/telegram-emulator.ts";

const OWNER = 100;
const FAMILY = { id: -1001, type: "supergroup" as const, title: "Family" };

let fake: FakeModel;
let emu: TelegramEmulator;
let daemon: Daemon | undefined;

beforeEach(async () => {
  fake = await startFakeModel();
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
    model: { idleTimeoutMs: 2000 },
    channels: { telegram: { apiRoot: emu.apiRoot, ownerIds: [String(OWNER)], groups: { policy: "allowlist", allow: [String(FAMILY.id)] } } },
  });
  daemon = await startDaemon(home, { TELEGRAM_BOT_TOKEN: emu.token, ANTHROPIC_API_KEY: "test-key", ANTHROPIC_BASE_URL: fake.url });
  await waitFor("telegram polling", () => daemon!.log().includes("telegram.polling"));
  return daemon;
}

const finalTexts = (chatId: number) => emu.botMessages(chatId).filter((m) => m.parseMode === "HTML").map((m) => m.text);

describe("model stalls (daemon e2e)", () => {
  it("a hanging model: the owner is told within 15 s that it stopped responding, and the next message is answered", async () => {
    await start();
    fake.enqueue({ type: "hang" }, { type: "hang" }, text("Back again."));
    const ann = emu.user({ userId: OWNER, firstName: "Ann" });
    await ann.send("are you there?");
    // Two silent attempts of 2 s and one backoff of about 2 s; 15 s is the promise to the user.
    await waitFor("the stall notice", () => finalTexts(OWNER).length === 1, 15_000);
    expect(finalTexts(OWNER)).toEqual([
      markdownToTelegramHtml("The model stopped responding: nothing arrived for 2 s, on 2 tries. Please try again in a moment."),
    ]);
    expect(fake.requests).toHaveLength(2);

    await ann.send("and now?");
    await waitFor("the next answer", () => finalTexts(OWNER).length === 2, 10_000);
    expect(finalTexts(OWNER)[1]).toBe("Back again.");
    await sleep(300);
    expect(emu.botMessages(OWNER)).toHaveLength(2);
    expect(fake.requests).toHaveLength(3);
  });

  it("a hanging model in a group: told without detail, and a message that waited meanwhile is answered next", async () => {
    await start();
    fake.enqueue({ type: "hang" }, { type: "hang" }, text("Here now."));
    const bob = emu.user({ userId: 200, firstName: "Bob", chat: FAMILY });
    await bob.send("@TestNameBot hello?");
    await fake.waitForRequests(1);
    await bob.send("@TestNameBot anyone?");
    await waitFor("the notice and the answer", () => finalTexts(FAMILY.id).length === 2, 20_000);
    expect(finalTexts(FAMILY.id)).toEqual([markdownToTelegramHtml("Sorry, the AI model stopped responding. Please try again in a moment."), "Here now."]);
    expect(fake.requests).toHaveLength(3);
    expect(fake.requests[2]!.rawBody).toContain("anyone?");
  });

  it("an empty model answer tells the user the model returned nothing", async () => {
    await start();
    fake.enqueue({ type: "message", blocks: [] });
    await emu.user({ userId: OWNER, firstName: "Ann" }).send("hi");
    await waitFor("the notice", () => finalTexts(OWNER).length === 1, 10_000);
    expect(finalTexts(OWNER)).toEqual([markdownToTelegramHtml("The model returned an empty answer. Please try again or rephrase your message.")]);
    await sleep(300);
    expect(emu.botMessages(OWNER)).toHaveLength(1);
  });
});
