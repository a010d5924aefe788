// Discord attachments end to end: the real daemon with the Discord channel against the fake
// Discord, which serves each attachment at the URL its message payload names.
import { existsSync, readdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { setTimeout as sleep } from "node:timers/promises";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { cleanupDaemon, makeHome, startDaemon, waitFor, type Daemon } from "../support/daemon.ts";
import { startFakeDiscord, type FakeDiscord, type FakeUser } from "../support/fake-discord.ts";
import { lastUserContent, startFakeModel, text, toolCall, type FakeModel } from "../support/fake-model.ts";
import { startFakeTranscription, type FakeTranscription } from "../support/fake-transcription.ts";
import { pdf, picture } from "../support/media-files.ts";

let model: FakeModel;
let discord: FakeDiscord;
let daemon: Daemon | undefined;
let home: string | undefined;
let owner: FakeUser;

beforeEach(async () => {
  model = await startFakeModel();
  discord = await startFakeDiscord();
  owner = discord.addUser("owner");
  daemon = undefined;
  home = undefined;
});
afterEach(async () => {
  await cleanupDaemon(daemon, home);
  await discord.close();
  await model.close();
});

async function start(config: { media?: Record<string, unknown>; guild?: string } = {}): Promise<Daemon> {
  const guilds = config.guild ? { guilds: { policy: "allowlist", allow: [config.guild], requireMention: true } } : {};
  home = makeHome({ channels: { discord: { apiBase: discord.apiBase, ownerIds: [owner.id], ...guilds } }, ...(config.media ? { media: config.media } : {}) });
  return restart();
}

async function restart(): Promise<Daemon> {
  daemon = await startDaemon(home!, { DISCORD_BOT_TOKEN: discord.token, ANTHROPIC_API_KEY: "test-key", ANTHROPIC_BASE_URL: model.url });
  await waitFor("discord connected", () => discord.connected(), 15_000);
  return daemon;
}

const b64 = (b: Uint8Array) => Buffer.from(b).toString("base64");
const month = () => new Date().toISOString().slice(0, 7);
/** Bot messages that carry files. */
const uploads = (channelId: string) => discord.botMessages(channelId).filter((m) => m.attachments?.length);
/** Every bot message's text in a channel, in order. */
const botTexts = (channelId: string) => discord.botMessages(channelId).map((m) => m.content);

describe("Discord attachments (daemon e2e)", () => {
  it("a picture in the owner's DM is fetched from its attachment URL and reaches the model as an image block with equal bytes", async () => {
    await start();
    model.enqueue(text("A square."));
    const png = await picture("png");
    discord.sendMessage({ channelId: discord.dmChannel(owner), author: owner, content: "what is this?", attachments: [{ name: "square.png", contentType: "image/png", bytes: png }] });
    await model.waitForRequests(1);
    const image = lastUserContent(model.requests[0]!).find((b) => b.type === "image");
    expect(image!.source).toEqual({ type: "base64", media_type: "image/png", data: Buffer.from(png).toString("base64") });
    expect(discord.attachmentDownloads).toHaveLength(1);
    const month = new Date().toISOString().slice(0, 7);
    expect(readdirSync(join(home!, "workspace", "media", month))).toHaveLength(1);
  });

  it("a video gets one clear sentence and no model call", async () => {
    await start();
    discord.sendMessage({ channelId: discord.dmChannel(owner), author: owner, content: "", attachments: [{ name: "clip.mp4", contentType: "video/mp4", bytes: new Uint8Array([1, 2, 3]) }] });
    const reply = await discord.waitFor("the reply", () => discord.botMessages().at(0), 15_000);
    expect(reply.content).toBe("I can't watch videos yet, sorry. Could you describe it in a message?");
    await sleep(300);
    expect(model.requests).toHaveLength(0);
    expect(discord.attachmentDownloads).toHaveLength(0);
  });

  it("send_file uploads the file to the DM as an attachment of one bot message", async () => {
    await start();
    const png = await picture("png");
    writeFileSync(join(home!, "workspace", "chart.png"), png);
    model.enqueue(toolCall("send_file", { path: "chart.png", caption: "The chart" }));
    model.enqueue(text("Sent."));
    const dm = discord.dmChannel(owner);
    discord.sendMessage({ channelId: dm, author: owner, content: "send me the chart" });
    await discord.waitFor("the final answer", () => discord.botMessages(dm).find((m) => m.content === "Sent."), 20_000);
    const withFile = discord.botMessages(dm).filter((m) => m.attachments?.length);
    expect(withFile.map((m) => [m.content, m.attachments!.map((a) => a.name)])).toEqual([["The chart", ["chart.png"]]]);
    expect(Buffer.from(withFile[0]!.attachments![0]!.bytes).equals(Buffer.from(png))).toBe(true);
  });

  it("a sticker alone gets one polite sentence and no model call", async () => {
    await start();
    const dm = discord.dmChannel(owner);
    discord.sendMessage({ channelId: dm, author: owner, content: "", sticker: true });
    await discord.waitFor("the reply", () => discord.botMessages(dm).length === 1, 20_000);
    await sleep(300);
    expect(botTexts(dm)).toEqual(["Nice sticker! I can only read text for now, though."]);
    expect(model.requests).toHaveLength(0);
  });

  it("a PDF becomes a document block, a text file its text (no attachment URL in the text)", async () => {
    await start();
    model.enqueue(text("One page."));
    model.enqueue(text("A list."));
    const dm = discord.dmChannel(owner);
    const doc = pdf(1);
    discord.sendMessage({ channelId: dm, author: owner, content: "", attachments: [{ name: "report.pdf", contentType: "application/pdf", bytes: doc }] });
    await model.waitForRequests(1);
    const first = lastUserContent(model.requests[0]!);
    expect(first.filter((b) => b.type === "document").map((b) => b.source)).toEqual([{ type: "base64", media_type: "application/pdf", data: b64(doc) }]);
    await discord.waitFor("the first answer", () => botTexts(dm).includes("One page."), 20_000);

    discord.sendMessage({ channelId: dm, author: owner, content: "Shopping", attachments: [{ name: "list.txt", contentType: "text/plain; charset=utf-8", bytes: new TextEncoder().encode("milk\neggs\n") }] });
    await model.waitForRequests(2);
    const texts = lastUserContent(model.requests[1]!).filter((b) => b.type === "text").map((b) => String(b.text));
    const file = texts.find((t) => t.startsWith("[file list.txt"));
    expect(file!.split("\n").slice(1)).toEqual(["milk", "eggs", ""]);
    expect(texts[0]!.split("\n").at(-1)).toBe("Shopping");
    expect(JSON.stringify(model.requests.map((r) => r.body))).not.toContain("/attachments/");
    await discord.waitFor("the second answer", () => botTexts(dm).includes("A list."), 20_000);
    expect(botTexts(dm)).toEqual(["One page.", "A list."]);
    expect(discord.attachmentDownloads).toHaveLength(2);
  });

  it("bad input gets one clear sentence each and no model call: a download failure, an unsupported type, a corrupt picture, an empty PDF, an over-size file Discord states (never fetched)", async () => {
    await start({ media: { maxBytes: 10_000 } });
    const dm = discord.dmChannel(owner);
    const cases: Array<[{ name: string; contentType: string; bytes: Uint8Array; statedSize?: number; gone?: boolean }, string]> = [
      [{ name: "lost.txt", contentType: "text/plain", bytes: new Uint8Array([1]), gone: true }, "I couldn't download lost.txt; please send it again."],
      [{ name: "a.zip", contentType: "application/zip", bytes: new Uint8Array([80, 75, 3, 4]) }, "I can't read .zip files yet; I understand pictures, PDFs and text files."],
      [{ name: "broken.jpg", contentType: "image/jpeg", bytes: new Uint8Array([0xff, 0xd8, 1, 2, 3]) }, "I couldn't open the picture broken.jpg: the file seems damaged."],
      [{ name: "empty.pdf", contentType: "application/pdf", bytes: pdf(0) }, "The PDF empty.pdf has no pages."],
      [{ name: "big.pdf", contentType: "application/pdf", bytes: new Uint8Array(100), statedSize: 25 * 1024 * 1024 }, "big.pdf is too large for me (25 MB); the limit is 10 KB."],
    ];
    for (const [i, [file, expected]] of cases.entries()) {
      discord.sendMessage({ channelId: dm, author: owner, content: "", attachments: [file] });
      await discord.waitFor(`reply ${i + 1}`, () => discord.botMessages(dm).length === i + 1, 20_000);
      expect(discord.botMessages(dm)[i]!.content).toBe(expected);
    }
    await sleep(300);
    expect(botTexts(dm)).toHaveLength(cases.length);
    expect(model.requests).toHaveLength(0);
    // The over-size file's URL was never requested: Discord stated its size.
    expect(discord.attachmentDownloads.map((p) => decodeURIComponent(p.split("/").at(-1)!))).toEqual(["lost.txt", "a.zip", "broken.jpg", "empty.pdf"]);
  });

  it("a guild member's picture in an allowed channel is stored under that chat's folder, not in the owner's media", async () => {
    const guild = discord.addGuild("Lab").id;
    const general = discord.addTextChannel(guild, "general").id;
    const member = discord.addUser("bob");
    await start({ guild });
    model.enqueue(text("Nice."));
    const png = await picture("png");
    discord.sendMessage({ channelId: general, author: member, content: "look", mentionsBot: true, attachments: [{ name: "cat.png", contentType: "image/png", bytes: png }] });
    await model.waitForRequests(1);
    const dir = join(home!, "workspace", "memory", "chats", `discord_${general}`, "media");
    const stored = readdirSync(dir);
    expect(stored).toHaveLength(1);
    expect(readFileSync(join(dir, stored[0]!)).equals(png)).toBe(true);
    expect(existsSync(join(home!, "workspace", "media"))).toBe(false);
    const image = lastUserContent(model.requests[0]!).find((b) => b.type === "image");
    expect(image!.source).toEqual({ type: "base64", media_type: "image/png", data: b64(png) });
    await discord.waitFor("the answer", () => botTexts(general).includes("Nice."), 20_000);
    expect(botTexts(general)).toEqual(["Nice."]);
  });

  it("send_file: a PNG and a PDF are each uploaded once, in one bot message each, with their bytes", async () => {
    await start();
    const png = await picture("png");
    const doc = pdf(2);
    writeFileSync(join(home!, "workspace", "chart.png"), png);
    writeFileSync(join(home!, "workspace", "report.pdf"), doc);
    model.enqueue(toolCall("send_file", { path: "chart.png", caption: "The chart" }));
    model.enqueue(toolCall("send_file", { path: "report.pdf" }));
    model.enqueue(text("Sent both."));
    const dm = discord.dmChannel(owner);
    discord.sendMessage({ channelId: dm, author: owner, content: "send me the chart and the report" });
    await discord.waitFor("the final answer", () => botTexts(dm).includes("Sent both."), 20_000);
    expect(uploads(dm).map((m) => [m.content, m.attachments!.map((a) => a.name)])).toEqual([
      ["The chart", ["chart.png"]],
      ["", ["report.pdf"]],
    ]);
    expect(Buffer.from(uploads(dm)[0]!.attachments![0]!.bytes).equals(Buffer.from(png))).toBe(true);
    expect(Buffer.from(uploads(dm)[1]!.attachments![0]!.bytes).equals(Buffer.from(doc))).toBe(true);
    // The reply's message showed the tool's progress first, then became the answer.
    expect(discord.botMessages(dm).map((m) => m.history)).toEqual([["⏳ send_file: chart.png", "Sent both."], ["The chart"], [""]]);
  });

  it("send_file: a lost response to the upload (Discord made the message, answered 500) does not post the file twice", async () => {
    await start();
    writeFileSync(join(home!, "workspace", "chart.png"), await picture("png"));
    model.enqueue(toolCall("send_file", { path: "chart.png" }));
    model.enqueue(text("Sent."));
    const dm = discord.dmChannel(owner);
    discord.injectFailure({ method: "POST", path: new RegExp(`^/channels/${dm}/messages$`), status: 500, afterEffect: true, withFiles: true });
    discord.sendMessage({ channelId: dm, author: owner, content: "send me the chart" });
    await discord.waitFor("the final answer", () => botTexts(dm).includes("Sent."), 20_000);
    expect(discord.callsTo("POST", new RegExp(`^/channels/${dm}/messages$`)).filter((c) => c.body?.__uploads?.length)).toHaveLength(2);
    expect(uploads(dm)).toHaveLength(1);
    expect(discord.botMessages(dm).map((m) => m.history)).toEqual([["⏳ send_file: chart.png", "Sent."], [""]]);
  });

  it("send_file: exactly once across kill -9 and replay — the file sent before the crash is not uploaded again", async () => {
    const d = await start();
    writeFileSync(join(home!, "workspace", "chart.png"), await picture("png"));
    model.enqueue(toolCall("send_file", { path: "chart.png" }, { id: "toolu_send_1" }));
    model.enqueue({ type: "hang" });
    const dm = discord.dmChannel(owner);
    discord.sendMessage({ channelId: dm, author: owner, content: "send me the chart" });
    await discord.waitFor("the upload", () => uploads(dm).length === 1, 20_000);
    await model.waitForRequests(2);
    d.proc.kill("SIGKILL");
    await d.exited;
    // The replayed run asks the model again; it calls send_file again (a new call id).
    model.enqueue(toolCall("send_file", { path: "chart.png" }, { id: "toolu_send_2" }));
    model.enqueue(text("Here it is."));
    await restart();
    await discord.waitFor("the final answer", () => botTexts(dm).includes("Here it is."), 30_000);
    await sleep(300);
    expect(uploads(dm)).toHaveLength(1);
    expect(discord.callsTo("POST", /\/messages$/).filter((c) => c.body?.__uploads?.length)).toHaveLength(1);
    expect(botTexts(dm)).toEqual(["Here it is.", ""]);
  });
});

describe("Discord voice messages (daemon e2e)", () => {
  let stt: FakeTranscription;
  beforeEach(async () => {
    stt = await startFakeTranscription();
  });
  afterEach(() => stt.close());

  const voiceMessage = (bytes: Uint8Array) =>
    discord.sendMessage({ channelId: discord.dmChannel(owner), author: owner, content: "", voice: true, attachments: [{ name: "voice-message.ogg", contentType: "audio/ogg", bytes }] });

  it("a voice message: the transcription server gets the recording, the owner sees what was heard, the request holds the transcript", async () => {
    await start({ media: { transcription: { baseUrl: stt.baseUrl, apiKey: "stt-key", model: "whisper-1" } } });
    stt.enqueue({ text: "Remind me to buy milk." });
    model.enqueue(text("Noted."));
    const audio = new Uint8Array([79, 103, 103, 83, 1, 2, 3, 4]);
    voiceMessage(audio);
    await model.waitForRequests(1);
    expect(stt.requests).toHaveLength(1);
    expect(stt.requests[0]).toMatchObject({ path: "/v1/audio/transcriptions", authorization: "Bearer stt-key", model: "whisper-1", fileName: "voice-message.ogg" });
    expect(Buffer.from(stt.requests[0]!.file).equals(Buffer.from(audio))).toBe(true);
    const last = lastUserContent(model.requests[0]!);
    expect(String(last[0]!.text).split("\n").at(-1)).toBe("[voice note, transcribed] Remind me to buy milk.");
    const dm = discord.dmChannel(owner);
    await discord.waitFor("the answer", () => botTexts(dm).includes("Noted."), 20_000);
    expect(botTexts(dm)).toEqual(["🎤 heard: Remind me to buy milk.", "Noted."]);
    const dir = join(home!, "workspace", "media", month());
    const txt = readdirSync(dir).find((f) => f.endsWith(".ogg.txt"))!;
    expect(readFileSync(join(dir, txt), "utf8")).toBe("Remind me to buy milk.\n");
  });

  it("without transcription configured: one clear reply, nothing downloaded, no model call", async () => {
    await start();
    voiceMessage(new Uint8Array([1, 2]));
    const dm = discord.dmChannel(owner);
    await discord.waitFor("the reply", () => discord.botMessages(dm).length === 1, 20_000);
    await sleep(300);
    expect(botTexts(dm)).toEqual([
      "I can't listen to voice notes until a transcription service is set up: add media.transcription (baseUrl, model, and apiKey or HEARTH_TRANSCRIPTION_API_KEY) to config.json — docs/media.md shows OpenAI, Groq and a local whisper server.",
    ]);
    expect(model.requests).toHaveLength(0);
    expect(discord.attachmentDownloads).toHaveLength(0);
    expect(stt.requests).toHaveLength(0);
  });

  it("without transcription configured: a guild member's voice message (a reply to the bot) gets the sentence for others, no model call", async () => {
    const guild = discord.addGuild("Lab").id;
    const general = discord.addTextChannel(guild, "general").id;
    const member = discord.addUser("bob");
    await start({ guild });
    model.enqueue(text("Hello Bob."));
    discord.sendMessage({ channelId: general, author: member, content: "hi", mentionsBot: true });
    const hello = await discord.waitFor("the greeting", () => discord.botMessages(general).find((m) => m.content === "Hello Bob."), 20_000);
    discord.sendMessage({ channelId: general, author: member, content: "", voice: true, replyTo: hello.id, attachments: [{ name: "voice-message.ogg", contentType: "audio/ogg", bytes: new Uint8Array([3]) }] });
    await discord.waitFor("the reply", () => discord.botMessages(general).length === 2, 20_000);
    await sleep(300);
    expect(botTexts(general)).toEqual(["Hello Bob.", "Voice notes aren't supported here, sorry. Could you type it instead?"]);
    expect(model.requests).toHaveLength(1);
    expect(discord.attachmentDownloads).toHaveLength(0);
  });
});
