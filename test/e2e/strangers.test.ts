// Strangers cost nothing (issue 13): the real daemon polling the Bot API emulator. A refused
// sender gets no reply of any kind, a stranger under pairing one message per hour, pending codes
// stay within their limit, and a shared chat's error text names no key, config or file.
import { setTimeout as sleep } from "node:timers/promises";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { markdownToTelegramHtml } from "../../src/channels/telegram/html.ts";
import { unsupportedReply } from "../../src/channels/telegram/inbound.ts";
import { MAX_PENDING } from "../../src/gateway/access/pairing.ts";
import { cleanupDaemon, makeHome, startDaemon, waitFor, type Daemon } from "../support/daemon.ts";
import { startFakeModel, type FakeModel } from "../support/fake-model.ts";
import { startTelegramEmulator, type TelegramEmulator } from "../support/telegram-emulator.ts";

const OWNER = 100;
const FAMILY = { id: -1001, type: "supergroup" as const, title: "Family" };
const PHOTO = { photo: [{ file_id: "p", file_unique_id: "u", width: 10, height: 10 }] };
const STICKER = { sticker: { file_id: "s", file_unique_id: "u", type: "regular", width: 1, height: 1, is_animated: false, is_video: false } };
const CODE = /\b([A-HJKMNP-Z2-9]{8})\b/;

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

async function start(dmPolicy: "pairing" | "allowlist", opts: { fromHome?: boolean } = {}): Promise<Daemon> {
  const home = makeHome({
    channels: { telegram: { apiRoot: emu.apiRoot, ownerIds: [String(OWNER)], dmPolicy, groups: { policy: "allowlist", allow: [String(FAMILY.id)] } } },
  });
  // fromHome: started from outside the project and not through npx, as a service manager would.
  const how: Record<string, string> = opts.fromHome ? { npm_lifecycle_event: "" } : {};
  daemon = await startDaemon(home, { TELEGRAM_BOT_TOKEN: emu.token, ANTHROPIC_API_KEY: "test-key", ANTHROPIC_BASE_URL: fake.url, ...how }, opts.fromHome ? { cwd: home } : {});
  await waitFor("telegram polling", () => daemon!.log().includes("telegram.polling"));
  return daemon;
}

const count = (d: Daemon, event: string) => d.log().split(`"${event}"`).length - 1;

describe("strangers (daemon e2e)", () => {
  it("allowlist: a stranger's photo, sticker, text and commands get no reply at all and the photo is never fetched; the owner's sticker gets the note", async () => {
    const d = await start("allowlist");
    const stranger = emu.user({ userId: 555, firstName: "Sam" });
    await stranger.sendMedia({ photo: [{ ...emu.addFile(new Uint8Array([0xff, 0xd8, 0xff])), width: 10, height: 10 }] });
    await stranger.sendMedia(STICKER);
    await stranger.send("hello?");
    await stranger.send("/start");
    await stranger.send("/status");
    await waitFor("five refusals in the log", () => count(d, "inbound.refused") === 5);

    await emu.user({ userId: OWNER, firstName: "Ann" }).sendMedia(STICKER);
    const [note] = await emu.waitForBotMessages(OWNER, 1);
    expect(note!.text).toBe(markdownToTelegramHtml(unsupportedReply("sticker")));
    expect(emu.callsTo("getFile")).toHaveLength(0);
    expect(emu.fileDownloads).toHaveLength(0);
    await sleep(300);
    expect(emu.botMessages(555)).toEqual([]);
    expect(emu.botMessages(OWNER)).toHaveLength(1);
    expect(fake.requests).toHaveLength(0);
  });

  it("pairing: 30 DMs of every kind from one stranger get exactly one reply, the pairing code", async () => {
    const d = await start("pairing");
    const stranger = emu.user({ userId: 555, firstName: "Sam" });
    for (let i = 0; i < 30; i++) {
      if (i % 3 === 1) await stranger.sendMedia(i % 2 ? PHOTO : STICKER);
      else await stranger.send(i % 3 === 2 ? "/start" : `message ${i}`);
    }
    await waitFor("29 silent pairing requests", () => count(d, "pairing.silent") === 29, 20_000);
    await sleep(300);
    const replies = emu.botMessages(555);
    expect(replies).toHaveLength(1);
    expect(replies[0]!.text).toMatch(CODE);
    expect(fake.requests).toHaveLength(0);
  });

  it("pairing: the stranger is told the command by name, never the owner's install path (daemon started outside the project)", async () => {
    await start("pairing", { fromHome: true });
    await emu.user({ userId: 555, firstName: "Sam" }).send("hello");
    const [reply] = await emu.waitForBotMessages(555, 1, 20_000);
    const code = CODE.exec(reply!.text)![1]!;
    expect(reply!.text).toBe(
      markdownToTelegramHtml(
        `Hi! I'm a personal assistant and only talk with people my owner has approved.\n\nYour pairing code: ${code}\n\nSend it to my owner; they can approve it with: hearth pairing approve ${code} (the code is valid for one hour).`,
      ),
    );
  });

  it("pairing: a stranger named with ANSI and OSC sequences is listed and logged with every escape replaced", async () => {
    const d = await start("pairing");
    await emu.user({ userId: 556, firstName: "Eve\x1b[8m", lastName: "\x1b]0;owner\x07(id 100)\x1b[0m" }).send("hello");
    const [reply] = await emu.waitForBotMessages(556, 1, 20_000);
    const code = CODE.exec(reply!.text)![1]!;
    const printed = "Eve\ufffd[8m \ufffd]0;owner\ufffd(id 100)\ufffd[0m";
    const list = await d.hearth(["pairing", "list"]);
    expect(list.code, list.stderr).toBe(0);
    const asked = /\(asked ([^)]+)\)/.exec(list.stdout)![1]!;
    expect(list.stdout).toBe(`Pending codes\n  ${code}  telegram:556  ${printed}  (asked ${asked})\nApproved senders: none\n`);
    const logged = d.log().split("\n").find((l) => l.includes('"event":"pairing.requested"'))!;
    expect(logged.endsWith(`"user":"556","name":"${printed}"}`)).toBe(true);
    expect(d.log()).not.toContain("\\u001b");
  });

  it("pairing: 3 accounts × 5 requests hold at most the pending limit; a fourth person is told once that requests are waiting", async () => {
    const d = await start("pairing");
    const accounts = [601, 602, 603].map((id) => emu.user({ userId: id, firstName: `Mallory${id}` }));
    for (let round = 0; round < 5; round++) for (const a of accounts) await a.send(`pair me ${round}`);
    await waitFor("12 silent pairing requests", () => count(d, "pairing.silent") === 12, 20_000);
    const late = emu.user({ userId: 700, firstName: "Alice" });
    await late.send("hi");
    await late.send("hi again");
    await waitFor("Alice's second request", () => count(d, "pairing.silent") === 13, 20_000);
    await emu.waitForBotMessages(700, 1);
    await sleep(300);

    for (const id of [601, 602, 603]) {
      const msgs = emu.botMessages(id);
      expect(msgs).toHaveLength(1);
      expect(msgs[0]!.text).toMatch(CODE);
    }
    expect(emu.botMessages(700).map((m) => m.text)).toEqual([
      markdownToTelegramHtml("Hi! I'm a personal assistant and only talk with people my owner has approved. Several requests are already waiting, so I can't give you a code now. Please try again in an hour."),
    ]);
    const list = await d.hearth(["pairing", "list"]);
    expect(list.code, list.stderr).toBe(0);
    const pending = list.stdout.split("\n").filter((l) => CODE.test(l));
    expect(pending).toHaveLength(MAX_PENDING);
    expect(pending.map((l) => /telegram:(\d+)/.exec(l)![1]).sort()).toEqual(["601", "602", "603"]);
  });

  it("a 401 from the model in a group: one reply, with no configuration, key, variable or file name", async () => {
    const d = await start("pairing");
    fake.setDefault({ type: "http_error", status: 401 });
    await emu.user({ userId: 200, firstName: "Bob", chat: FAMILY }).send("@TestNameBot what's up?");
    await waitFor("the group's reply", () => emu.botMessages(FAMILY.id)[0]?.parseMode === "HTML", 15_000);
    await sleep(300);
    const msgs = emu.botMessages(FAMILY.id);
    expect(msgs).toHaveLength(1);
    expect(msgs[0]!.text).toBe(markdownToTelegramHtml("Sorry, I can't answer right now because of a problem on my side. My owner can see what went wrong in Hearth's log."));
    expect(msgs[0]!.text).not.toMatch(/config|key|ANTHROPIC|\.json/i);
    // The owner finds the detail in the log.
    expect(d.log()).toContain("The model API rejected the API key (HTTP 401). Set a valid key in ANTHROPIC_API_KEY");
  });
});
