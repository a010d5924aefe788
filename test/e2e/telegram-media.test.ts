// Photos, documents and voice notes over Telegram, end to end: the real daemon polling the Bot
// API emulator (with its getFile and file download route), answering through the fake model.
import { existsSync, mkdirSync, readdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { setTimeout as sleep } from "node:timers/promises";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { cleanupDaemon, makeHome, startDaemon, waitFor, type Daemon } from "../support/daemon.ts";
import { lastUserContent, startFakeModel, text, toolCall, type FakeModel } from "../support/fake-model.ts";
import { pdf, picture } from "../support/media-files.ts";
import { startFakeTranscription, type FakeTranscription } from "../support/fake-transcription.ts";
import { startTelegramEmulator, type TelegramEmulator } from "../support/telegram-emulator.ts";

const OWNER = 100;
const FAMILY = { id: -1001, type: "supergroup" as const, title: "Family" };

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

async function start(media: Record<string, unknown> = {}): Promise<Daemon> {
  home = makeHome({
    channels: { telegram: { apiRoot: emu.apiRoot, ownerIds: [String(OWNER)], dmPolicy: "allowlist", groups: { policy: "allowlist", allow: [String(FAMILY.id)], requireMention: false } } },
    media,
  });
  daemon = await startDaemon(home, { TELEGRAM_BOT_TOKEN: emu.token, ANTHROPIC_API_KEY: "test-key", ANTHROPIC_BASE_URL: fake.url });
  await waitFor("telegram polling", () => daemon!.log().includes("telegram.polling"));
  return daemon;
}

const owner = () => emu.user({ userId: OWNER, firstName: "Ann" });
const b64 = (b: Uint8Array) => Buffer.from(b).toString("base64");
const month = () => new Date().toISOString().slice(0, 7);

describe("telegram media (daemon e2e)", () => {
  it("a photo with a caption: the last user turn holds the caption and an image block with the photo's bytes; stored once under media/YYYY-MM", async () => {
    await start();
    fake.enqueue(text("A red square."));
    const photo = await picture("jpeg");
    const small = await picture("jpeg", 8, 6);
    const big = emu.addFile(photo);
    const thumb = emu.addFile(small);
    await owner().sendMedia({ photo: [{ ...thumb, width: 8, height: 6 }, { ...big, width: 64, height: 48 }], caption: "What is this?" });
    await fake.waitForRequests(1);
    const content = lastUserContent(fake.requests[0]!);
    const images = content.filter((b) => b.type === "image");
    expect(images).toHaveLength(1);
    expect(images[0]!.source).toEqual({ type: "base64", media_type: "image/jpeg", data: b64(photo) });
    const texts = content.filter((b) => b.type === "text").map((b) => b.text as string);
    expect(texts[0]!.split("\n").at(-1)).toBe("What is this?");
    const stored = readdirSync(join(home!, "workspace", "media", month()));
    expect(stored).toHaveLength(1);
    expect(readFileSync(join(home!, "workspace", "media", month(), stored[0]!)).equals(photo)).toBe(true);
    expect(texts[1]).toBe(`[picture photo.jpg, stored at media/${month()}/${stored[0]}]`);
    // The inbox record names the stored file: the transcript never holds base64.
    const transcripts = readdirSync(join(home!, "sessions")).filter((f) => f.endsWith(".jsonl"));
    const saved = transcripts.map((f) => readFileSync(join(home!, "sessions", f), "utf8")).join("");
    expect(saved).not.toContain(b64(photo).slice(0, 40));
    expect(saved).toContain(`media/${month()}/${stored[0]}`);
    expect(emu.fileDownloads).toHaveLength(1);
    // The answer's message is created with a placeholder, then shows the answer.
    await waitFor("the answer", () => emu.botMessages(OWNER)[0]?.text === "A red square.", 10_000);
    expect(emu.botMessages(OWNER).map((m) => m.text)).toEqual(["A red square."]);
  });

  it("a PDF becomes a document block, a text file its text", async () => {
    await start();
    fake.enqueue(text("One page."));
    fake.enqueue(text("A list."));
    const doc = pdf(1);
    await owner().sendMedia({ document: { ...emu.addFile(doc), file_name: "report.pdf", mime_type: "application/pdf" } });
    await fake.waitForRequests(1);
    const docs = lastUserContent(fake.requests[0]!).filter((b) => b.type === "document");
    expect(docs.map((d) => d.source)).toEqual([{ type: "base64", media_type: "application/pdf", data: b64(doc) }]);
    await emu.waitForBotMessages(OWNER, 1, 20_000);

    const notes = new TextEncoder().encode("milk\neggs\n");
    await owner().sendMedia({ document: { ...emu.addFile(notes), file_name: "list.txt", mime_type: "text/plain" }, caption: "Shopping" });
    await fake.waitForRequests(2);
    const last = lastUserContent(fake.requests[1]!);
    const file = last.find((b) => b.type === "text" && String(b.text).startsWith("[file list.txt"));
    expect(String(file!.text).split("\n").slice(1)).toEqual(["milk", "eggs", ""]);
    // The PDF is one user turn back, within media.keepTurns: still a document block.
    const first = (fake.requests[1]!.body as { messages: Array<{ content: Array<{ type: string }> }> }).messages[0]!;
    expect(first.content.map((b) => b.type)).toEqual(["text", "text", "document"]);
  });

  it("bad input gets one clear sentence each and no model call: corrupt picture, empty PDF, unsupported type, failed download, video, over-size", async () => {
    await start({ maxBytes: 10_000 });
    const cases: Array<[Record<string, unknown>, string]> = [
      [{ photo: [{ ...emu.addFile(new Uint8Array([0xff, 0xd8, 1, 2, 3])), width: 10, height: 10 }] }, "I couldn't open the picture photo.jpg: the file seems damaged."],
      [{ document: { ...emu.addFile(pdf(0)), file_name: "empty.pdf", mime_type: "application/pdf" } }, "The PDF empty.pdf has no pages."],
      [{ document: { ...emu.addFile(new Uint8Array([80, 75, 3, 4])), file_name: "a.zip", mime_type: "application/zip" } }, "I can't read .zip files yet; I understand pictures, PDFs and text files."],
      [{ document: { file_id: "gone", file_unique_id: "ugone", file_name: "lost.txt", mime_type: "text/plain" } }, "I couldn't download lost.txt; please send it again."],
      [{ video: { ...emu.addFile(new Uint8Array([1, 2])), width: 1, height: 1, duration: 1 } }, "I can't watch videos yet, sorry. Could you describe it in a message?"],
      [{ document: { ...emu.addFile(new Uint8Array(20_000)), file_name: "big.txt", mime_type: "text/plain" } }, "big.txt is too large for me (20 KB); the limit is 10 KB."],
    ];
    for (const [i, [fields, expected]] of cases.entries()) {
      await owner().sendMedia(fields);
      const replies = await emu.waitForBotMessages(OWNER, i + 1, 20_000);
      expect(replies[i]!.text).toBe(expected);
    }
    await sleep(300);
    expect(emu.botMessages(OWNER)).toHaveLength(cases.length);
    expect(fake.requests).toHaveLength(0);
    // Only the over-size file was never downloaded (getFile said how big it is).
    expect(emu.fileDownloads.map((d) => d.bytes)).toEqual([5, expect.any(Number), 4]);
  });

  it("an over-size file stated by the platform is refused without any download", async () => {
    await start();
    await owner().sendMedia({ document: { ...emu.addFile(new Uint8Array(100), { statedSize: 25 * 1024 * 1024 }), file_name: "huge.pdf", mime_type: "application/pdf" } });
    const [reply] = await emu.waitForBotMessages(OWNER, 1, 20_000);
    expect(reply!.text).toBe("huge.pdf is too large for me (25 MB); the limit is 20 MB.");
    expect(emu.callsTo("getFile")).toHaveLength(0);
    expect(emu.fileDownloads).toHaveLength(0);
    expect(fake.requests).toHaveLength(0);
  });

  it("a group member's photo is stored in that chat's folder, not in the owner's media", async () => {
    await start();
    fake.enqueue(text("Nice."));
    const member = emu.user({ userId: 200, firstName: "Bob", chat: FAMILY });
    const photo = await picture("png");
    await member.sendMedia({ photo: [{ ...emu.addFile(photo), width: 64, height: 48 }], caption: "@TestNameBot look" });
    await fake.waitForRequests(1);
    const dir = join(home!, "workspace", "memory", "chats", `telegram_${FAMILY.id}`, "media");
    const stored = readdirSync(dir);
    expect(stored).toHaveLength(1);
    expect(readFileSync(join(dir, stored[0]!)).equals(photo)).toBe(true);
    expect(existsSync(join(home!, "workspace", "media"))).toBe(false);
    const image = lastUserContent(fake.requests[0]!).find((b) => b.type === "image");
    expect(image!.source).toEqual({ type: "base64", media_type: "image/png", data: b64(photo) });
  });
});

describe("telegram voice notes (daemon e2e)", () => {
  let stt: FakeTranscription;
  beforeEach(async () => {
    stt = await startFakeTranscription();
  });
  afterEach(() => stt.close());

  it("a voice note: the transcription server gets the audio, the owner sees what was heard, the request holds the transcript marked as a voice note", async () => {
    await start({ transcription: { baseUrl: stt.baseUrl, apiKey: "stt-key", model: "whisper-1", language: "en" } });
    stt.enqueue({ text: "Remind me to buy milk." });
    fake.enqueue(text("Noted."));
    const audio = new Uint8Array([79, 103, 103, 83, 1, 2, 3, 4]);
    await owner().sendMedia({ voice: { ...emu.addFile(audio), duration: 2, mime_type: "audio/ogg" } });
    await fake.waitForRequests(1);
    expect(stt.requests).toHaveLength(1);
    expect(stt.requests[0]).toMatchObject({ path: "/v1/audio/transcriptions", authorization: "Bearer stt-key", model: "whisper-1", language: "en", fileName: "voice.ogg" });
    expect(Buffer.from(stt.requests[0]!.file).equals(Buffer.from(audio))).toBe(true);
    const last = lastUserContent(fake.requests[0]!);
    expect(String(last[0]!.text).split("\n").at(-1)).toBe("[voice note, transcribed] Remind me to buy milk.");
    await waitFor("the answer after the heard line", () => emu.botMessages(OWNER)[1]?.text === "Noted.", 20_000);
    const replies = emu.botMessages(OWNER);
    expect(replies.map((r) => r.text)).toEqual(["🎤 heard: Remind me to buy milk.", "Noted."]);
    const dir = join(home!, "workspace", "media", month());
    const txt = readdirSync(dir).find((f) => f.endsWith(".ogg.txt"))!;
    expect(readFileSync(join(dir, txt), "utf8")).toBe("Remind me to buy milk.\n");
  });

  it("without transcription configured: one clear reply for the owner, another for a group member, no model call", async () => {
    await start();
    await owner().sendMedia({ voice: { ...emu.addFile(new Uint8Array([1])), duration: 1 } });
    const member = emu.user({ userId: 200, firstName: "Bob", chat: FAMILY });
    await member.sendMedia({ voice: { ...emu.addFile(new Uint8Array([2])), duration: 1 }, reply_to_message: { message_id: 1, date: 1, chat: { id: FAMILY.id, type: "supergroup", title: "Family" }, from: { id: 666, is_bot: true, first_name: "T" } } });
    const [mine] = await emu.waitForBotMessages(OWNER, 1, 20_000);
    const [theirs] = await emu.waitForBotMessages(FAMILY.id, 1, 20_000);
    expect(mine!.text).toBe(
      "I can't listen to voice notes until a transcription service is set up: add media.transcription (baseUrl, model, and apiKey or HEARTH_TRANSCRIPTION_API_KEY) to config.json — docs/media.md shows OpenAI, Groq and a local whisper server.",
    );
    expect(theirs!.text).toBe("Voice notes aren't supported here, sorry. Could you type it instead?");
    await sleep(300);
    expect(fake.requests).toHaveLength(0);
    expect(emu.fileDownloads).toHaveLength(0);
  });

  it("transcription failing (HTTP 500) gives one sentence, keeps the audio, and makes no model call", async () => {
    await start({ transcription: { baseUrl: stt.baseUrl, model: "whisper-1" } });
    stt.enqueue({ status: 500 });
    await owner().sendMedia({ voice: { ...emu.addFile(new Uint8Array([9, 9])), duration: 1 } });
    const [reply] = await emu.waitForBotMessages(OWNER, 1, 20_000);
    const stored = readdirSync(join(home!, "workspace", "media", month()));
    expect(stored).toHaveLength(1);
    expect(reply!.text).toBe(`I couldn't transcribe your voice note (the service answered HTTP 500); it is saved as media/${month()}/${stored[0]}. Please try again or type it.`);
    await sleep(300);
    expect(fake.requests).toHaveLength(0);
  });
});

describe("send_file (daemon e2e)", () => {
  it("a PNG goes out with sendPhoto and a PDF with sendDocument, with the caption and the file's bytes", async () => {
    await start();
    const png = await picture("png");
    const doc = pdf(2);
    mkdirSync(join(home!, "workspace", "out"), { recursive: true });
    writeFileSync(join(home!, "workspace", "out", "chart.png"), png);
    writeFileSync(join(home!, "workspace", "out", "report.pdf"), doc);
    fake.enqueue(toolCall("send_file", { path: "out/chart.png", caption: "The chart" }));
    fake.enqueue(toolCall("send_file", { path: "out/report.pdf" }));
    fake.enqueue(text("Sent both."));
    await owner().send("send me the chart and the report");
    await emu.waitForBotMessages(OWNER, 1, 20_000);
    await waitFor("the final answer", () => emu.botMessages(OWNER).at(-1)?.text === "Sent both.", 20_000);
    expect(emu.sentFiles.map((f) => [f.method, f.chatId, f.name, f.caption])).toEqual([
      ["sendPhoto", String(OWNER), "chart.png", "The chart"],
      ["sendDocument", String(OWNER), "report.pdf", undefined],
    ]);
    expect(Buffer.from(emu.sentFiles[0]!.bytes).equals(Buffer.from(png))).toBe(true);
    expect(Buffer.from(emu.sentFiles[1]!.bytes).equals(Buffer.from(doc))).toBe(true);
  });

  it("exactly once across kill -9 and replay: the file sent before the crash is not sent again", async () => {
    const d = await start();
    writeFileSync(join(home!, "workspace", "chart.png"), await picture("png"));
    fake.enqueue(toolCall("send_file", { path: "chart.png" }, { id: "toolu_send_1" }));
    fake.enqueue({ type: "hang" });
    await owner().send("send me the chart");
    await waitFor("the photo was sent", () => emu.sentFiles.length === 1, 20_000);
    await fake.waitForRequests(2);
    d.proc.kill("SIGKILL");
    await new Promise((resolve) => d.proc.once("exit", resolve));
    // The replayed run asks the model again; it calls send_file again (a new call id).
    fake.enqueue(toolCall("send_file", { path: "chart.png" }, { id: "toolu_send_2" }));
    fake.enqueue(text("Here it is."));
    daemon = await startDaemon(home!, { TELEGRAM_BOT_TOKEN: emu.token, ANTHROPIC_API_KEY: "test-key", ANTHROPIC_BASE_URL: fake.url });
    await waitFor("the final answer", () => emu.botMessages(OWNER).at(-1)?.text === "Here it is.", 20_000);
    expect(emu.sentFiles).toHaveLength(1);
    expect(emu.callsTo("sendPhoto")).toHaveLength(1);
  });

  it("a group cannot send the owner's files: only its own chat folder", async () => {
    await start();
    writeFileSync(join(home!, "workspace", "MEMORY.md"), "secret\n");
    fake.enqueue(toolCall("send_file", { path: "MEMORY.md" }));
    fake.enqueue(text("I can't."));
    const member = emu.user({ userId: 200, firstName: "Bob", chat: FAMILY });
    await member.send("@TestNameBot send me MEMORY.md");
    await fake.waitForRequests(2);
    const result = lastUserContent(fake.requests[1]!).find((b) => b.type === "tool_result");
    expect([result!.content, result!.is_error]).toEqual([`Refused "MEMORY.md": this conversation can only send files from memory/chats/telegram_${FAMILY.id}/.`, true]);
    expect(emu.sentFiles).toHaveLength(0);
  });
});
