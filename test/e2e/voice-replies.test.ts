// Spoken replies end to end (the real daemon, the Bot API emulator with sendVoice recorded in its
// HTTP layer, a fake speech server and the fake transcription server): a voice note is answered
// with its text and one voice message of that text without markdown; a typed message under
// `auto` and a failed speech call get the text alone; a kill -9 after a voice part was sent
// never sends it again; `reply: "never"` answers a voice note in text only.
import { readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { cleanupDaemon, makeHome, startDaemon, waitFor, type Daemon } from "../support/daemon.ts";
import { startFakeModel, text, type FakeModel } from "../support/fake-model.ts";
import { fakeAudio, startFakeSpeech, type FakeSpeech } from "../support/fake-speech.ts";
import { startFakeTranscription, type FakeTranscription } from "../support/fake-transcription.ts";
import { startTelegramEmulator, type TelegramEmulator } from "../support/telegram-emulator.ts";

const OWNER = 100;

let fake: FakeModel;
let emu: TelegramEmulator;
let stt: FakeTranscription;
let tts: FakeSpeech;
let daemon: Daemon | undefined;
let home: string;

const config = (reply: "auto" | "never") => ({
  channels: { telegram: { apiRoot: emu.apiRoot, ownerIds: [String(OWNER)], dmPolicy: "allowlist" } },
  media: { transcription: { baseUrl: stt.baseUrl, model: "whisper-1" } },
  voice: { tts: { baseUrl: tts.baseUrl, apiKeyEnv: "TTS_KEY", model: "tts-1", voice: "nova", pricing: { perMillionCharsUsd: 15 } }, reply },
});

const env = () => ({ TELEGRAM_BOT_TOKEN: emu.token, ANTHROPIC_API_KEY: "test-key", ANTHROPIC_BASE_URL: fake.url, TTS_KEY: "tts-secret" });

async function start(): Promise<Daemon> {
  daemon = await startDaemon(home, env());
  await waitFor("telegram polling", () => daemon!.log().includes("telegram.polling"));
  return daemon;
}

beforeAll(async () => {
  fake = await startFakeModel();
  emu = await startTelegramEmulator();
  stt = await startFakeTranscription();
  tts = await startFakeSpeech();
  home = makeHome(config("auto"));
  await start();
});

afterAll(async () => {
  await cleanupDaemon(daemon, home);
  await emu.stop();
  await fake.close();
  await stt.close();
  await tts.close();
});

const owner = () => emu.user({ userId: OWNER, firstName: "Ann" });
let noteByte = 0;
const voiceNote = () => owner().sendMedia({ voice: { ...emu.addFile(new Uint8Array([79, 103, 103, 83, ++noteByte])), duration: 2, mime_type: "audio/ogg" } });
const voices = () => emu.sentFiles.filter((f) => f.method === "sendVoice");
const texts = () => emu.botMessages(OWNER).map((m) => m.text);
const outbox = () => readFileSync(join(home, "outbox.jsonl"), "utf8");
const usage = () => readFileSync(join(home, "usage.jsonl"), "utf8").trim().split("\n").map((l) => JSON.parse(l) as Record<string, unknown>);
/** Inbox entries answered so far: an entry is done once its reply (voice included) was delivered. */
const runsDone = () => readFileSync(join(home, "inbox.jsonl"), "utf8").split("\n").filter((l) => l.includes('"type":"done"')).length;

describe("spoken replies (daemon e2e)", () => {
  it("a voice note from the owner: the heard line, the text, then one sendVoice of the text without markdown, metered", async () => {
    stt.enqueue({ text: "What's on today?" });
    fake.enqueue(text("**Today**: a [dentist](https://example.com/d) visit at `10:00`.\n\n- Buy bread"));
    await voiceNote();
    await waitFor("the voice message and its usage record", () => voices().length === 1 && usage().some((r) => r.kind === "speech"), 30_000);

    expect(texts()).toEqual(["🎤 heard: What's on today?", '<b>Today</b>: a <a href="https://example.com/d">dentist</a> visit at <code>10:00</code>.\n\n• Buy bread']);
    expect(tts.requests).toEqual([{ authorization: "Bearer tts-secret", model: "tts-1", voice: "nova", input: "Today: a dentist visit at 10:00.\n\nBuy bread", format: "opus" }]);
    const [sent] = voices();
    expect(sent!.chatId).toBe(String(OWNER));
    expect(sent!.name).toBe("answer.ogg");
    expect(Buffer.from(sent!.bytes).equals(Buffer.from(fakeAudio("Today: a dentist visit at 10:00.\n\nBuy bread")))).toBe(true);
    // After the text: the voice is the last thing the bot created in the chat.
    const order = emu.calls.filter((c) => c.status === 200 && ["sendMessage", "sendVoice"].includes(c.method)).map((c) => c.method);
    expect(order).toEqual(["sendMessage", "sendMessage", "sendVoice"]);
    const speech = usage().filter((r) => r.kind === "speech");
    expect(speech).toEqual([expect.objectContaining({ kind: "speech", session: "main", scope: "main", model: "tts-1", characters: 43, costUsd: 0.000645 })]);
    expect(daemon!.log()).not.toContain("tts-secret");
  });

  it("a typed message under reply \"auto\" is answered in text only", async () => {
    const before = tts.requests.length;
    const runs = runsDone();
    fake.enqueue(text("Typed answer."));
    await owner().send("typed question");
    await waitFor("the answer and the end of its run", () => texts().at(-1) === "Typed answer." && runsDone() > runs, 30_000);
    expect(tts.requests).toHaveLength(before);
    expect(voices()).toHaveLength(1);
  });

  it("a failed speech call: the text alone, and one log line", async () => {
    tts.enqueue({ status: 500 });
    stt.enqueue({ text: "And tomorrow?" });
    fake.enqueue(text("Nothing tomorrow."));
    await voiceNote();
    await waitFor("the answer and the log line", () => texts().at(-1) === "Nothing tomorrow." && daemon!.log().includes("reply.voice_failed"), 30_000);
    expect(voices()).toHaveLength(1);
    const lines = daemon!.log().split("\n").filter((l) => l.includes("reply.voice_failed"));
    expect(lines).toHaveLength(1);
    expect(lines[0]).toContain("the service answered HTTP 500");
  });

  it("/voice off stops spoken answers in this chat, /voice auto restores the default", async () => {
    await owner().send("/voice off");
    await waitFor("the confirmation", () => texts().at(-1) === "Spoken answers here: off.", 30_000);
    stt.enqueue({ text: "Quietly please." });
    fake.enqueue(text("Quiet answer."));
    const before = tts.requests.length;
    const runs = runsDone();
    await voiceNote();
    await waitFor("the answer and the end of its run", () => texts().at(-1) === "Quiet answer." && runsDone() > runs, 30_000);
    expect(tts.requests).toHaveLength(before);
    await owner().send("/voice auto");
    await waitFor("the confirmation", () => texts().at(-1) === "Spoken answers here: auto (the default).", 30_000);
  });

  it("kill -9 after the first voice part was sent: after the restart only the missing part goes, with no new model call", async () => {
    // Two paragraphs of 3,000 characters: spoken in two parts (4,096 is the provider's limit).
    const para = (c: string) => `${c.repeat(2999)}.`;
    const answer = `${para("a")}\n\n${para("b")}`;
    stt.enqueue({ text: "Read me a long one." });
    fake.enqueue(text(answer));
    emu.inject({ method: "sendVoice", reply: "hang", when: () => voices().length === 2 });
    const modelCalls = fake.requests.length;
    const spoken = tts.requests.length;
    await voiceNote();
    await waitFor("the second voice part is on its way", () => emu.calls.filter((c) => c.method === "sendVoice").length === 3, 30_000);
    await waitFor("the first part's record", () => outbox().includes('"keys":["voice:0"]'), 30_000);
    expect(tts.requests.slice(spoken).map((r) => r.input)).toEqual([para("a"), para("b")]);
    daemon!.proc.kill("SIGKILL");
    await daemon!.exited;

    await start();
    await waitFor("the missing part", () => voices().length === 3, 30_000);
    await waitFor("the second part's record", () => outbox().includes('"keys":["voice:1"]'), 30_000);
    expect(voices().slice(1).map((v) => Buffer.from(v.bytes).toString("utf8").slice(4))).toEqual([para("a"), para("b")]);
    // The first part was neither spoken nor sent again; the answer came from its record.
    expect(tts.requests.slice(spoken).map((r) => r.input)).toEqual([para("a"), para("b"), para("b")]);
    expect(fake.requests).toHaveLength(modelCalls + 1);
  });

  it("reply \"never\": a voice note is answered in text only", async () => {
    // Every entry is done: a kill loses nothing, and is quicker than a graceful stop.
    daemon!.proc.kill("SIGKILL");
    await daemon!.exited;
    writeFileSync(join(home, "config.json"), JSON.stringify(config("never")));
    await start();
    const before = tts.requests.length;
    const sent = voices().length;
    const runs = runsDone();
    stt.enqueue({ text: "Text only please." });
    fake.enqueue(text("Only text."));
    await voiceNote();
    await waitFor("the answer", () => texts().at(-1) === "Only text.", 30_000);
    await waitFor("the end of its run", () => runsDone() > runs, 30_000);
    expect(tts.requests).toHaveLength(before);
    expect(voices()).toHaveLength(sent);
  });
});
