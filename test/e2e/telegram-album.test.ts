// A Telegram album (media group) across a crash: its parts wait ~800 ms to be merged into one
// message, and Telegram must not be told to forget them until that message is accepted — a
// kill -9 inside the window (or while the album's files download) gets every part again at the
// next start, merged into one message, answered once.
import { setTimeout as sleep } from "node:timers/promises";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { cleanupDaemon, makeHome, startDaemon, waitFor, type Daemon } from "../support/daemon.ts";
import { lastUserContent, startFakeModel, text, type FakeModel } from "../support/fake-model.ts";
import { picture } from "../support/media-files.ts";
import { startTelegramEmulator, type TelegramEmulator } from "../support/telegram-emulator.ts";

const OWNER = 100;

let fake: FakeModel;
let emu: TelegramEmulator;
let daemon: Daemon | undefined;
let home: string | undefined;

beforeEach(async () => {
  fake = await startFakeModel();
  emu = await startTelegramEmulator();
  daemon = undefined;
  home = undefined;
});
afterEach(async () => {
  await cleanupDaemon(daemon, home);
  await emu.stop();
  await fake.close();
});

async function startHearth(): Promise<Daemon> {
  home ??= makeHome({ channels: { telegram: { apiRoot: emu.apiRoot, ownerIds: [String(OWNER)], dmPolicy: "allowlist" } } });
  daemon = await startDaemon(home, { TELEGRAM_BOT_TOKEN: emu.token, ANTHROPIC_API_KEY: "test-key", ANTHROPIC_BASE_URL: fake.url });
  await waitFor("telegram polling", () => daemon!.log().includes("telegram.polling"));
  return daemon;
}

async function kill9(d: Daemon): Promise<void> {
  d.proc.kill("SIGKILL");
  await d.exited;
}

const b64 = (b: Uint8Array) => Buffer.from(b).toString("base64");
const partsSeen = (d: Daemon) => d.log().split("telegram.album_part").length - 1;

/** Three distinct pictures sent as one album with a caption on the first. */
async function sendAlbum(): Promise<Uint8Array[]> {
  const pictures = [await picture("png", 10, 10), await picture("png", 20, 10), await picture("png", 30, 10)];
  const user = emu.user({ userId: OWNER, firstName: "Ann" });
  for (const [i, bytes] of pictures.entries()) {
    await user.sendMedia({ photo: [{ ...emu.addFile(bytes), width: 10, height: 10 }], media_group_id: "trip", ...(i === 0 ? { caption: "our trip" } : {}) });
  }
  return pictures;
}

/** After the restart: one model request whose last turn holds the caption and the three pictures, one answer. */
async function expectAlbumOnce(pictures: Uint8Array[]): Promise<void> {
  await fake.waitForRequests(1);
  const content = lastUserContent(fake.requests[0]!);
  expect(content.filter((b) => b.type === "image").map((b) => (b.source as { data: string }).data)).toEqual(pictures.map(b64));
  expect(String(content[0]!.text).split("\n").at(-1)).toBe("our trip");
  await emu.waitForBotMessages(OWNER, 1, 20_000);
  // Well past another merge window: nothing else comes.
  await sleep(1500);
  expect(fake.requests).toHaveLength(1);
  expect(emu.botMessages(OWNER).map((m) => m.text)).toEqual(["Three pictures."]);
}

describe("telegram albums across kill -9 (daemon e2e)", () => {
  it("killed inside the merge window: after the restart the album arrives once, as one message with every part", async () => {
    const first = await startHearth();
    const pictures = await sendAlbum();
    await waitFor("the three parts to reach the daemon", () => partsSeen(first) === 3, 20_000);
    await kill9(first);
    expect(fake.requests).toHaveLength(0);
    expect(first.log()).not.toContain("media.stored");

    fake.enqueue(text("Three pictures."));
    await startHearth();
    await expectAlbumOnce(pictures);
  });

  it("killed while the merged album's files download: after the restart it arrives once", async () => {
    const first = await startHearth();
    // getFile is taken in but never answered: the album is merged and stuck downloading.
    emu.inject({ method: "getFile", reply: "apply-then-hang", times: 1 });
    const pictures = await sendAlbum();
    await waitFor("the album's download to start", () => emu.callsTo("getFile").length === 1, 20_000);
    await sleep(300); // the poller keeps asking meanwhile; it must not confirm the parts
    await kill9(first);
    expect(fake.requests).toHaveLength(0);

    fake.enqueue(text("Three pictures."));
    await startHearth();
    await expectAlbumOnce(pictures);
  });
});
