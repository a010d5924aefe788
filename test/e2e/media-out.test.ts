// Pictures out and progress, end to end over Telegram: markdown images in an answer become
// photos/documents exactly once (also across kill -9), the "🎤 heard" line is exactly once,
// and the chat shows Hearth busy while files come in or go out — without holding other chats.
import { mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { setTimeout as sleep } from "node:timers/promises";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { cleanupDaemon, makeHome, startDaemon, waitFor, type Daemon } from "../support/daemon.ts";
import { startFakeDiscord, type FakeDiscord, type FakeUser } from "../support/fake-discord.ts";
import { startFakeModel, text, toolCall, type FakeModel } from "../support/fake-model.ts";
import { startFakeTranscription, type FakeTranscription } from "../support/fake-transcription.ts";
import { pdf, picture } from "../support/media-files.ts";
import { startTelegramEmulator, type TelegramEmulator } from "../support/telegram-emulator.ts";

const OWNER = 100;
const FAMILY = { id: -1001, type: "supergroup" as const, title: "Family" };

let fake: FakeModel;
let emu: TelegramEmulator;
let stt: FakeTranscription;
let daemon: Daemon | undefined;
let home: string | undefined;

async function setUp(opts: { chatActions?: boolean } = {}): Promise<void> {
  fake = await startFakeModel();
  emu = await startTelegramEmulator(opts);
  stt = await startFakeTranscription();
}

afterEach(async () => {
  await cleanupDaemon(daemon, home);
  daemon = undefined;
  home = undefined;
  await emu.stop();
  await fake.close();
  await stt.close();
});

const env = () => ({ TELEGRAM_BOT_TOKEN: emu.token, ANTHROPIC_API_KEY: "test-key", ANTHROPIC_BASE_URL: fake.url });

async function start(): Promise<Daemon> {
  home = makeHome({
    channels: { telegram: { apiRoot: emu.apiRoot, ownerIds: [String(OWNER)], dmPolicy: "allowlist", groups: { policy: "allowlist", allow: [String(FAMILY.id)], requireMention: false } } },
    media: { transcription: { baseUrl: stt.baseUrl, model: "whisper-1" } },
  });
  daemon = await startDaemon(home, env());
  await waitFor("telegram polling", () => daemon!.log().includes("telegram.polling"));
  return daemon;
}

async function restart(): Promise<Daemon> {
  daemon = await startDaemon(home!, env());
  return daemon;
}

async function kill9(d: Daemon): Promise<void> {
  d.proc.kill("SIGKILL");
  await d.exited;
}

const owner = () => emu.user({ userId: OWNER, firstName: "Ann" });

/** Everything the bot put in a chat, in the order it was created: text messages and files. */
function chatLog(chatId: number): string[] {
  return emu.calls
    .filter((c) => String(c.body.chat_id) === String(chatId) && c.status === 200 && ["sendMessage", "sendPhoto", "sendDocument"].includes(c.method))
    .map((c) => (c.method === "sendMessage" ? "text" : `${c.method}:${(c.body.__files as Array<{ name: string }>)[0]!.name}:${c.body.caption ?? ""}`));
}

describe("markdown images in the final answer (daemon e2e)", () => {
  beforeEach(() => setUp());

  it("workspace pictures are sent after the text as photo/document with the alt text as caption; URLs, missing files and code stay as written", async () => {
    await start();
    const png = await picture("png");
    mkdirSync(join(home!, "workspace", "out"), { recursive: true });
    writeFileSync(join(home!, "workspace", "out", "chart.png"), png);
    writeFileSync(join(home!, "workspace", "out", "report.pdf"), pdf(1));
    const answer = [
      "Here is the chart:",
      "",
      "![Sales by month](out/chart.png)",
      "",
      "And the report ![](out/report.pdf) too, and the chart again ![Sales by month](out/chart.png).",
      "",
      "Remote: ![logo](https://example.com/logo.png) and ![gone](out/missing.png), code: `![c](out/chart.png)`",
    ].join("\n");
    // Streamed in small pieces, so previews show the text while a reference is half written.
    fake.enqueue(text(answer, { chunkSize: 7, chunkDelayMs: 15 }));
    await owner().send("show me");
    await waitFor("both files", () => emu.sentFiles.length === 2, 20_000);
    await sleep(500);

    const [message, ...others] = emu.botMessages(OWNER);
    expect(others).toHaveLength(0);
    expect(message!.text).toBe(
      'Here is the chart:\n\nAnd the report too, and the chart again.\n\nRemote: !<a href="https://example.com/logo.png">logo</a> and ![gone](out/missing.png), code: <code>![c](out/chart.png)</code>',
    );
    // No preview ever showed a reference that the final text does not show.
    for (const shown of message!.history) expect(shown.replace(/`[^`]*`|<code>.*?<\/code>/g, "")).not.toMatch(/out\/chart\.png|out\/report\.pdf|!\[Sales|!\[\]/);
    expect(emu.sentFiles.map((f) => [f.method, f.name, f.caption])).toEqual([
      ["sendPhoto", "chart.png", "Sales by month"],
      ["sendDocument", "report.pdf", undefined],
    ]);
    expect(Buffer.from(emu.sentFiles[0]!.bytes).equals(Buffer.from(png))).toBe(true);
    expect(chatLog(OWNER)).toEqual(["text", "sendPhoto:chart.png:Sales by month", "sendDocument:report.pdf:"]);
    expect(emu.fileDownloads).toHaveLength(0);
    expect(daemon!.log()).toContain("reply.image_kept_as_text");
  });

  it("an answer that is only a picture: the photo, and a text line naming it", async () => {
    await start();
    writeFileSync(join(home!, "workspace", "cat.png"), await picture("png"));
    fake.enqueue(text("![A cat](cat.png)"));
    await owner().send("a cat please");
    await waitFor("the photo", () => emu.sentFiles.length === 1, 20_000);
    await sleep(300);
    expect(emu.botMessages(OWNER).map((m) => m.text)).toEqual(["🖼 A cat"]);
    expect(chatLog(OWNER)).toEqual(["text", "sendPhoto:cat.png:A cat"]);
  });

  it("in a group, only the chat's own folder is sent; the owner's files stay text and are never uploaded", async () => {
    await start();
    const folder = join(home!, "workspace", "memory", "chats", `telegram_${FAMILY.id}`);
    mkdirSync(folder, { recursive: true });
    writeFileSync(join(folder, "ours.png"), await picture("png"));
    writeFileSync(join(home!, "workspace", "private.png"), await picture("png"));
    fake.enqueue(text(`Ours: ![ours](memory/chats/telegram_${FAMILY.id}/ours.png)\nTheirs: ![p](private.png) ![up](../outside.png)`));
    const member = emu.user({ userId: 200, firstName: "Bob", chat: FAMILY });
    await member.send("@TestNameBot pictures?");
    await waitFor("the answer", () => emu.botMessages(FAMILY.id).at(-1)?.text.startsWith("Ours:") === true && emu.sentFiles.length === 1, 20_000);
    await sleep(300);
    expect(emu.botMessages(FAMILY.id).map((m) => m.text)).toEqual(["Ours:\nTheirs: ![p](private.png) ![up](../outside.png)"]);
    expect(emu.sentFiles.map((f) => [f.method, f.chatId, f.name, f.caption])).toEqual([["sendPhoto", String(FAMILY.id), "ours.png", "ours"]]);
  });

  it("exactly once across kill -9: a delivery cut between two pictures sends only the missing one after the restart, with no new model call", async () => {
    const d = await start();
    writeFileSync(join(home!, "workspace", "a.png"), await picture("png"));
    writeFileSync(join(home!, "workspace", "b.pdf"), pdf(1));
    fake.enqueue(text("Two files:\n\n![first](a.png)\n![second](b.pdf)"));
    emu.inject({ method: "sendDocument", reply: "hang" });
    await owner().send("both please");
    await waitFor("the second upload is on its way", () => emu.calls.some((c) => c.method === "sendDocument"), 20_000);
    expect(emu.sentFiles.map((f) => f.name)).toEqual(["a.png"]);
    await kill9(d);

    await restart();
    await waitFor("the missing file", () => emu.sentFiles.length === 2, 20_000);
    await sleep(500);
    expect(emu.sentFiles.map((f) => [f.method, f.name, f.caption])).toEqual([
      ["sendPhoto", "a.png", "first"],
      ["sendDocument", "b.pdf", "second"],
    ]);
    expect(emu.botMessages(OWNER).map((m) => m.text)).toEqual(["Two files:"]);
    expect(fake.requests).toHaveLength(1);
  });
});

describe("the heard line is exactly once (daemon e2e)", () => {
  beforeEach(() => setUp());

  const voiceNote = () => owner().sendMedia({ voice: { ...emu.addFile(new Uint8Array([79, 103, 103, 83, 7])), duration: 2, mime_type: "audio/ogg" } });

  const heardOnItsWay = () => emu.calls.some((c) => c.method === "sendMessage" && String(c.body.text).startsWith("🎤"));

  it("kill -9 while the heard line is on its way and the run unfinished: after the restart the line, then the answer, once each", async () => {
    const d = await start();
    stt.enqueue({ text: "Call mum at six." });
    emu.inject({ method: "sendMessage", when: (b) => String(b.text).startsWith("🎤"), reply: "hang" });
    fake.enqueue({ type: "hang" });
    await voiceNote();
    await waitFor("the heard line is on its way", heardOnItsWay, 20_000);
    await fake.waitForRequests(1);
    await kill9(d);
    expect(emu.botMessages(OWNER)).toHaveLength(0);

    fake.enqueue(text("I'll remind you."));
    await restart();
    await waitFor("the answer", () => emu.botMessages(OWNER).at(-1)?.text === "I'll remind you.", 20_000);
    await sleep(500);
    expect(emu.botMessages(OWNER).map((m) => m.text)).toEqual(["🎤 heard: Call mum at six.", "I'll remind you."]);
    expect(stt.requests).toHaveLength(1);
    expect(fake.requests).toHaveLength(2);
  });

  it("kill -9 while the heard line is on its way and the answer recorded: after the restart the line, then the recorded answer, no new model call", async () => {
    const d = await start();
    stt.enqueue({ text: "Call mum at six." });
    emu.inject({ method: "sendMessage", when: (b) => String(b.text).startsWith("🎤"), reply: "hang" });
    fake.enqueue(text("I'll remind you."));
    await voiceNote();
    await waitFor("the heard line is on its way", heardOnItsWay, 20_000);
    // The answer is final (recorded in the outbox) but waits behind the heard line.
    await waitFor("the recorded answer", () => readFileSync(join(home!, "outbox.jsonl"), "utf8").includes('"type":"final"'), 20_000);
    await kill9(d);
    expect(emu.botMessages(OWNER)).toHaveLength(0);

    await restart();
    await waitFor("the answer", () => emu.botMessages(OWNER).at(-1)?.text === "I'll remind you.", 20_000);
    await sleep(500);
    expect(emu.botMessages(OWNER).map((m) => m.text)).toEqual(["🎤 heard: Call mum at six.", "I'll remind you."]);
    expect(stt.requests).toHaveLength(1);
    expect(fake.requests).toHaveLength(1);
  });

  it("kill -9 after the heard line was sent: after the restart it is not sent again, and the answer comes once", async () => {
    const d = await start();
    stt.enqueue({ text: "Buy bread." });
    fake.enqueue({ type: "hang" });
    await voiceNote();
    await fake.waitForRequests(1);
    // Sent and recorded: the platform's id is in the outbox (the run may reach the model before
    // that record is written, and a kill in between is the documented window of any send).
    await waitFor("the heard line's record", () => readFileSync(join(home!, "outbox.jsonl"), "utf8").includes('"keys":["heard"]'), 20_000);
    expect(emu.botMessages(OWNER).map((m) => m.text)).toEqual(["🎤 heard: Buy bread."]);
    await kill9(d);

    fake.enqueue(text("Bread is on the list."));
    await restart();
    await waitFor("the answer", () => emu.botMessages(OWNER).at(-1)?.text === "Bread is on the list.", 20_000);
    await sleep(500);
    expect(emu.botMessages(OWNER).map((m) => m.text)).toEqual(["🎤 heard: Buy bread.", "Bread is on the list."]);
    expect(stt.requests).toHaveLength(1);
  });
});

describe("progress while files come in and go out (daemon e2e)", () => {
  beforeEach(() => setUp({ chatActions: true }));

  it("a slow download shows 'typing', refreshed while it lasts; uploads show upload_photo / upload_document", async () => {
    await start();
    let release = () => {};
    const gate = new Promise<void>((resolve) => (release = resolve));
    fake.enqueue(toolCall("send_file", { path: "out/chart.png" }));
    fake.enqueue(toolCall("send_file", { path: "out/report.pdf" }));
    fake.enqueue(text("Here you go.\n\n![again](out/chart2.png)"));
    mkdirSync(join(home!, "workspace", "out"), { recursive: true });
    writeFileSync(join(home!, "workspace", "out", "chart.png"), await picture("png"));
    writeFileSync(join(home!, "workspace", "out", "chart2.png"), await picture("png", 32, 24));
    writeFileSync(join(home!, "workspace", "out", "report.pdf"), pdf(1));
    await owner().sendMedia({ photo: [{ ...emu.addFile(await picture("jpeg"), { gate }), width: 64, height: 48 }], caption: "and send me the files" });
    // The indicator lasts about 5 s on Telegram: it is sent again while the download is held.
    await waitFor("two typing actions during the download", () => emu.chatActions(OWNER).filter((a) => a.action === "typing").length >= 2, 20_000);
    expect(fake.requests).toHaveLength(0);
    release();
    await waitFor("the last picture", () => emu.sentFiles.length === 3, 20_000);
    expect(emu.chatActions(OWNER).map((a) => a.action).filter((a) => a !== "typing")).toEqual(["upload_photo", "upload_document", "upload_photo"]);
  });

  it("a slow download in one chat does not delay a text message in another; killed meanwhile, the held message comes again", async () => {
    const d = await start();
    let release = () => {};
    const gate = new Promise<void>((resolve) => (release = resolve));
    fake.enqueue(text("Hello Bob."));
    await owner().sendMedia({ photo: [{ ...emu.addFile(await picture("jpeg"), { gate }), width: 64, height: 48 }] });
    await waitFor("the download started", () => emu.callsTo("getFile").length === 1, 20_000);
    const member = emu.user({ userId: 200, firstName: "Bob", chat: FAMILY });
    await member.send("@TestNameBot hi");
    await waitFor("the other chat's answer while the download is held", () => emu.botMessages(FAMILY.id).at(-1)?.text === "Hello Bob.", 20_000);
    expect(emu.fileDownloads).toHaveLength(0);
    await waitFor("the other chat's message is done", () => readFileSync(join(home!, "inbox.jsonl"), "utf8").includes('"type":"done"'), 20_000);
    // The photo's update was never confirmed to Telegram: a restart gets it again.
    await kill9(d);
    release();
    fake.enqueue(text("A photo."));
    await restart();
    await waitFor("the photo's answer", () => emu.botMessages(OWNER).at(-1)?.text === "A photo.", 20_000);
    await sleep(500);
    expect(fake.requests).toHaveLength(2);
    expect(emu.botMessages(FAMILY.id).map((m) => m.text)).toEqual(["Hello Bob."]);
    expect(emu.botMessages(OWNER).map((m) => m.text)).toEqual(["A photo."]);
  });
});

describe("Discord: pictures out and typing (daemon e2e)", () => {
  let discord: FakeDiscord;
  beforeEach(async () => {
    await setUp();
    discord = await startFakeDiscord();
  });
  afterEach(() => discord.close());

  async function startDiscord(user: FakeUser): Promise<void> {
    home = makeHome({ channels: { discord: { apiBase: discord.apiBase, ownerIds: [user.id] } }, media: { transcription: { baseUrl: stt.baseUrl, model: "whisper-1" } } });
    daemon = await startDaemon(home, { DISCORD_BOT_TOKEN: discord.token, ANTHROPIC_API_KEY: "test-key", ANTHROPIC_BASE_URL: fake.url });
    await waitFor("discord connected", () => discord.connected(), 15_000);
  }

  it("a markdown image in the answer is uploaded after the text as an attachment with the alt text, and taken out of the text", async () => {
    const user = discord.addUser("owner");
    await startDiscord(user);
    const png = await picture("png");
    writeFileSync(join(home!, "workspace", "chart.png"), png);
    fake.enqueue(text("The chart:\n\n![Sales](chart.png)"));
    const dm = discord.dmChannel(user);
    discord.sendMessage({ channelId: dm, author: user, content: "chart?" });
    await discord.waitFor("the upload", () => discord.botMessages(dm).find((m) => m.attachments?.length), 20_000);
    await sleep(300);
    expect(discord.botMessages(dm).map((m) => [m.content, (m.attachments ?? []).map((a) => a.name)])).toEqual([
      ["The chart:", []],
      ["Sales", ["chart.png"]],
    ]);
    expect(Buffer.from(discord.botMessages(dm)[1]!.attachments![0]!.bytes).equals(Buffer.from(png))).toBe(true);
  });

  it("a voice note being transcribed shows the typing indicator, with no model call yet", async () => {
    const user = discord.addUser("owner");
    await startDiscord(user);
    stt.enqueue("hang");
    const dm = discord.dmChannel(user);
    discord.sendMessage({ channelId: dm, author: user, content: "", attachments: [{ name: "voice.ogg", contentType: "audio/ogg", bytes: new Uint8Array([79, 103, 103, 83]) }] });
    await waitFor("the transcription request", () => stt.requests.length === 1, 20_000);
    await discord.waitFor("typing in the DM", () => discord.callsTo("POST", new RegExp(`^/channels/${dm}/typing$`)).length >= 1 || undefined, 20_000);
    expect(fake.requests).toHaveLength(0);
    expect(discord.botMessages()).toHaveLength(0);
  });
});
