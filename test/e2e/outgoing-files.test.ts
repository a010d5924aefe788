// The outgoing-file rule, end to end (Telegram, real daemon): a file reaches a chat only as a
// plain file — one name, no link on its path — inside the folder the chat's scope may send
// from. Hard links to MEMORY.md, config.json and the owner's photo planted in a group's (and a
// paired stranger's) own chat folder are refused through send_file and through a markdown image
// in the answer: nothing is uploaded, the tool result says why, the image stays text.
import { linkSync, mkdirSync, readFileSync, symlinkSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { setTimeout as sleep } from "node:timers/promises";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { markdownToTelegramHtml } from "../../src/channels/telegram/html.ts";
import { cleanupDaemon, makeHome, startDaemon, waitFor, type Daemon } from "../support/daemon.ts";
import { lastUserContent, startFakeModel, text, toolCall, type FakeModel } from "../support/fake-model.ts";
import { picture } from "../support/media-files.ts";
import { startTelegramEmulator, type TelegramEmulator } from "../support/telegram-emulator.ts";

const OWNER = 100;
const STRANGER = 555;
const GROUP = { id: -2001, type: "supergroup" as const, title: "Family" };
const GROUP_DIR = `memory/chats/telegram_${GROUP.id}`;
const DM_DIR = `memory/chats/dm_telegram_${STRANGER}`;
const SECRET = "My locker code is zebra 4711.";

let fake: FakeModel;
let emu: TelegramEmulator;
let daemon: Daemon | undefined;
let home: string | undefined;

beforeEach(async () => {
  fake = await startFakeModel();
  emu = await startTelegramEmulator();
});
afterEach(async () => {
  await cleanupDaemon(daemon, home);
  daemon = undefined;
  home = undefined;
  await emu.stop();
  await fake.close();
});

const month = () => new Date().toISOString().slice(0, 7);

/** Starts the daemon, pairs the stranger, and plants the links in both chat folders. */
async function start(): Promise<{ ws: string }> {
  home = makeHome({
    channels: { telegram: { apiRoot: emu.apiRoot, ownerIds: [String(OWNER)], dmPolicy: "pairing", groups: { policy: "allowlist", allow: [String(GROUP.id)], requireMention: false } } },
  });
  const ws = join(home, "workspace");
  daemon = await startDaemon(home, { TELEGRAM_BOT_TOKEN: emu.token, ANTHROPIC_API_KEY: "test-key", ANTHROPIC_BASE_URL: fake.url });
  await waitFor("telegram polling", () => daemon!.log().includes("telegram.polling"));

  const stranger = emu.user({ userId: STRANGER, firstName: "Sam" });
  await stranger.send("hi");
  const [codeMsg] = await emu.waitForBotMessages(STRANGER, 1, 20_000);
  const approved = await daemon.hearth(["pairing", "approve", /\b([A-HJ-KM-NP-Z2-9]{8})\b/.exec(codeMsg!.text)![1]!]);
  expect(approved.code, approved.stderr).toBe(0);

  writeFileSync(join(ws, "MEMORY.md"), `# Memory\n\n${SECRET}\n`);
  const photo = await picture("jpeg");
  mkdirSync(join(ws, "media", month()), { recursive: true });
  writeFileSync(join(ws, "media", month(), "owner.jpg"), photo);
  for (const dir of [GROUP_DIR, DM_DIR]) {
    mkdirSync(join(ws, dir), { recursive: true });
    linkSync(join(ws, "MEMORY.md"), join(ws, dir, "notes.md"));
    linkSync(join(home, "config.json"), join(ws, dir, "settings.json"));
    linkSync(join(ws, "media", month(), "owner.jpg"), join(ws, dir, "photo.jpg"));
    // A plain file of the chat's own: sent, so the refusals above are the rule and not a broken upload.
    writeFileSync(join(ws, dir, "ours.png"), await picture("png"));
  }
  return { ws };
}

/** One message in `chat` whose model calls send_file for each path, then answers `answer`; returns the tool results. */
async function run(chat: "group" | "dm", paths: string[], answer: string): Promise<Array<[unknown, unknown]>> {
  const before = fake.requests.length;
  for (const p of paths) fake.enqueue(toolCall("send_file", { path: p }));
  fake.enqueue(text(answer));
  const user = chat === "group" ? emu.user({ userId: 200, firstName: "Bob", chat: GROUP }) : emu.user({ userId: STRANGER, firstName: "Sam" });
  const chatId = chat === "group" ? GROUP.id : STRANGER;
  await user.send("send me everything you have");
  await waitFor("the answer", () => fake.requests.length === before + paths.length + 1 && emu.botMessages(chatId).length > (chat === "group" ? 0 : 1), 30_000);
  await sleep(500);
  return fake.requests.slice(before + 1).map((r) => {
    const result = lastUserContent(r).find((b) => b.type === "tool_result")!;
    return [result.content, result.is_error ?? false];
  });
}

const linkRefusal = (p: string, names: number) => [`Refused ${JSON.stringify(p)}: a file with ${names} names (hard links). Only a plain file (one name, not a link) can be sent to a chat.`, true];

describe("the outgoing-file rule (daemon e2e)", () => {
  for (const chat of ["group", "dm"] as const) {
    const dir = chat === "group" ? GROUP_DIR : DM_DIR;
    const chatId = chat === "group" ? GROUP.id : STRANGER;

    it(`${chat === "group" ? "a group" : "a paired stranger"}: hard links to MEMORY.md, config.json and the owner's photo in its own folder are refused by send_file and as markdown images; nothing of them is uploaded`, async () => {
      const { ws } = await start();
      const answer = `Here: ![m](${dir}/notes.md) ![c](${dir}/settings.json) ![p](${dir}/photo.jpg) ![o](${dir}/ours.png)`;
      const results = await run(chat, [`${dir}/notes.md`, `${dir}/settings.json`, `${dir}/photo.jpg`, `${dir}/ours.png`], answer);
      expect(results).toEqual([
        linkRefusal(`${dir}/notes.md`, 3),
        linkRefusal(`${dir}/settings.json`, 3),
        linkRefusal(`${dir}/photo.jpg`, 3),
        [`Sent ${dir}/ours.png to the chat as a photo.`, false],
      ]);
      await waitFor("the answer's picture", () => emu.sentFiles.length === 2, 20_000);
      await sleep(300);
      // Only the chat's own plain picture: once by send_file, once (with its caption) as the answer's image.
      expect(emu.sentFiles.map((f) => [f.method, f.chatId, f.name, f.caption])).toEqual([
        ["sendPhoto", String(chatId), "ours.png", undefined],
        ["sendPhoto", String(chatId), "ours.png", "o"],
      ]);
      expect(Buffer.from(emu.sentFiles[0]!.bytes).equals(readFileSync(join(ws, dir, "ours.png")))).toBe(true);
      expect(emu.botMessages(chatId).at(-1)!.text).toBe(markdownToTelegramHtml(`Here: ![m](${dir}/notes.md) ![c](${dir}/settings.json) ![p](${dir}/photo.jpg)`));
      // Why each picture stayed text is in the log.
      const kept = daemon!.log().split("\n").filter((l) => l.includes("reply.image_kept_as_text"));
      expect(kept.map((l) => JSON.parse(l.slice(l.indexOf("{"))).target)).toEqual([`${dir}/notes.md`, `${dir}/settings.json`, `${dir}/photo.jpg`]);
      expect(kept.every((l) => l.includes("a file with 3 names (hard links). Only a plain file (one name, not a link) can be sent to a chat."))).toBe(true);
      const everything = emu.calls.map((c) => JSON.stringify(c.body)).join("\n");
      expect([everything.includes("4711"), everything.includes(emu.token)]).toEqual([false, false]);
    });
  }

  it("the owner's chat: a hard link to config.json or a symlink inside the workspace is refused too; the owner's own plain files are sent", async () => {
    const { ws } = await start();
    mkdirSync(join(ws, "notes"), { recursive: true });
    const chart = await picture("png");
    writeFileSync(join(ws, "notes", "chart.png"), chart);
    linkSync(join(home!, "config.json"), join(ws, "notes", "settings.json"));
    symlinkSync(join(ws, "MEMORY.md"), join(ws, "notes", "memory-link.md"));
    symlinkSync(join(ws, "media"), join(ws, "pictures"));
    const before = fake.requests.length;
    for (const p of ["notes/settings.json", "notes/memory-link.md", `pictures/${month()}/owner.jpg`, "../config.json", `media/${month()}/owner.jpg`, "notes/chart.png"]) fake.enqueue(toolCall("send_file", { path: p }));
    fake.enqueue(text("Done: ![c](notes/settings.json)"));
    await emu.user({ userId: OWNER, firstName: "Ann" }).send("send the files");
    await waitFor("the answer", () => emu.botMessages(OWNER).length === 1 && fake.requests.length === before + 7, 30_000);
    await sleep(500);
    const results = fake.requests.slice(before + 1).map((r) => {
      const result = lastUserContent(r).find((b) => b.type === "tool_result")!;
      return [result.content, result.is_error ?? false];
    });
    expect(results).toEqual([
      // config.json: its own name, the two planted in the chat folders and this one.
      linkRefusal("notes/settings.json", 4),
      ['Refused "notes/memory-link.md": a symlink. Only a plain file (one name, not a link) can be sent to a chat.', true],
      [`Refused "pictures/${month()}/owner.jpg": the folder pictures on its path is a link. Only a plain file (one name, not a link) can be sent to a chat.`, true],
      ['Refused "../config.json": it is outside the workspace. Only files inside the workspace can be sent to a chat.', true],
      // Even the owner's own photo, once it has a second name somewhere.
      linkRefusal(`media/${month()}/owner.jpg`, 3),
      ["Sent notes/chart.png to the chat as a photo.", false],
    ]);
    expect(emu.sentFiles.map((f) => [f.method, f.chatId, f.name])).toEqual([["sendPhoto", String(OWNER), "chart.png"]]);
    expect(Buffer.from(emu.sentFiles[0]!.bytes).equals(Buffer.from(chart))).toBe(true);
    expect(emu.botMessages(OWNER).at(-1)!.text).toBe(markdownToTelegramHtml("Done: ![c](notes/settings.json)"));
  });
});
