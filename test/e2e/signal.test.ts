// Signal end to end: the real daemon's Signal channel against the fake signal-cli daemon (its
// event stream and JSON-RPC). The owner's voice note is transcribed and answered once; in a
// group, a member's reaction to an approval runs nothing and the owner's runs it once;
// kill -9 during an answer (its preview shown) delivers it exactly once after the restart, in
// the same message; a stopped signal-cli is
// waited for and a message written meanwhile is answered once it is back.
import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { cleanupDaemon, inboxSettled, makeHome, startDaemon, waitFor, type Daemon } from "../support/daemon.ts";
import { lastUserContent, startFakeModel, text, toolCall, type FakeModel } from "../support/fake-model.ts";
import { startFakeSignalCli, streamOpened, type FakeSignalCli } from "../support/fake-signal-cli.ts";
import { startFakeTranscription, type FakeTranscription } from "../support/fake-transcription.ts";

const OWNER = { number: "+4915111111111", name: "Ann" };
const MEMBER = { number: "+4915222222222", name: "Bob" };
const FAMILY = Buffer.alloc(32, 9).toString("base64");

let model: FakeModel;
let signal: FakeSignalCli;
let stt: FakeTranscription;
let home: string;
let daemon: Daemon;
const daemons: Daemon[] = [];

async function start(): Promise<void> {
  const streams = signal.streamsOpened;
  daemon = await startDaemon(home, { ANTHROPIC_API_KEY: "test-key", ANTHROPIC_BASE_URL: model.url });
  daemons.push(daemon);
  await streamOpened(signal, streams);
}

beforeAll(async () => {
  model = await startFakeModel();
  signal = await startFakeSignalCli();
  stt = await startFakeTranscription();
  home = makeHome({
    channels: { signal: { httpUrl: signal.url, account: signal.account, ownerIds: [OWNER.number], groups: { policy: "allowlist", allow: [FAMILY] } } },
    media: { transcription: { baseUrl: stt.baseUrl, apiKey: "stt-key", model: "whisper-1" } },
    tools: { shared: { allow: ["exec"] } },
    approvals: { exec: "always", timeoutSeconds: 300 },
    heartbeat: { every: "0" },
  });
  await start();
});
afterAll(async () => {
  // Every daemon shares the home: the last one stops as it would for its owner before it is removed.
  const last = daemons.at(-1);
  if (last && last.proc.exitCode === null && last.proc.signalCode === null) await last.stop().catch(() => undefined);
  for (const d of daemons.slice(0, -1)) await cleanupDaemon(d, undefined);
  await cleanupDaemon(daemons.at(-1), home);
  await stt.close();
  await signal.close();
  await model.close();
});

const texts = (chatId: string) => signal.messages(chatId).map((m) => m.text);
const settled = () => waitFor("every accepted message's outcome to be recorded", () => inboxSettled(home));

describe("Signal (daemon e2e)", () => {
  it("the owner's voice note: the recording reaches the transcription server, the owner sees what was heard and one answer", async () => {
    const requests = model.requests.length;
    stt.enqueue({ text: "Remind me to buy milk." });
    model.enqueue(text("Noted: milk."));
    const audio = new Uint8Array([0xff, 0xf1, 0x50, 0x80, 1, 2, 3, 4]);
    signal.receive({ from: OWNER, attachments: [{ contentType: "audio/aac", bytes: audio, voiceNote: true }] });
    await waitFor("the answer", () => texts(OWNER.number).includes("Noted: milk."));
    await settled();
    expect(stt.requests).toHaveLength(1);
    expect(stt.requests[0]).toMatchObject({ path: "/v1/audio/transcriptions", authorization: "Bearer stt-key", model: "whisper-1", fileName: "voice-note.aac" });
    expect(Buffer.from(stt.requests[0]!.file).equals(Buffer.from(audio))).toBe(true);
    expect(model.requests).toHaveLength(requests + 1);
    expect(String(lastUserContent(model.requests.at(-1)!)[0]!.text).split("\n").at(-1)).toBe("[voice note, transcribed] Remind me to buy milk.");
    expect(texts(OWNER.number)).toEqual(["🎤 heard: Remind me to buy milk.", "Noted: milk."]);
    expect(signal.messages(OWNER.number).map((m) => m.quote)).toEqual([undefined, undefined]);
    expect(signal.callsTo("getAttachment").map((c) => c.params)).toEqual([{ id: expect.stringMatching(/^att\d+\.aac$/), recipient: OWNER.number }]);
  });

  it("in a group: a member's reaction (or numbered reply) to an approval is told only the owner can approve and runs nothing; the owner's reaction runs the command once", async () => {
    const workspace = join(home, "workspace");
    model.enqueue(toolCall("exec", { command: "echo ran >> group.txt" }), text("Done in the group."));
    const asking = signal.receive({ from: MEMBER, groupId: FAMILY, mentionsBot: true, text: "please run it" });
    const question = () => signal.messages(FAMILY).find((m) => m.text.startsWith("🔐 Approve this?"));
    await waitFor("the question in the group", () => question() !== undefined);
    const q = question()!.text;
    const asked = q.slice(0, q.indexOf("\n\n1. ✅ Allow once"));
    expect(asked).toContain("exec: echo ran >> group.txt");
    expect(q).toBe(`${asked}\n\n1. ✅ Allow once\n2. ⏳ Allow for 30 min\n3. ♾️ Always\n4. ❌ Deny\n\nReact with your choice, or reply to this message with its number.`);
    const react = (from: typeof OWNER, emoji: string) => signal.receive({ from, groupId: FAMILY, reaction: { emoji, targetAuthor: signal.account, targetTimestamp: question()!.timestamp } });

    react(MEMBER, "✅");
    await waitFor("the member's answer", () => texts(FAMILY).includes("Only the owner can approve."));
    expect(signal.messages(FAMILY).find((m) => m.text === "Only the owner can approve.")!.quote).toEqual({ timestamp: question()!.timestamp, author: signal.account });
    signal.receive({ from: MEMBER, groupId: FAMILY, text: "1" });
    await waitFor("the member's second answer", () => texts(FAMILY).filter((t) => t === "Only the owner can approve.").length === 2);
    expect(existsSync(join(workspace, "group.txt"))).toBe(false);
    expect(question()!.text).toBe(q);

    react(OWNER, "✅");
    await waitFor("the answer in the group", () => texts(FAMILY).includes("Done in the group."));
    await settled();
    expect(readFileSync(join(workspace, "group.txt"), "utf8")).toBe("ran\n");
    // The question is edited to its outcome; the owner is told nothing else.
    expect(question()!.versions).toEqual([q, `${asked}\n\n✅ Allowed once by Ann.`]);
    // The answer's message (its preview shown while the command waited) and the question race each other.
    expect([...texts(FAMILY)].sort()).toEqual([`${asked}\n\n✅ Allowed once by Ann.`, "Only the owner can approve.", "Only the owner can approve.", "Done in the group."].sort());
    // In a group, the answer quotes the message it answers.
    expect(signal.messages(FAMILY).find((m) => m.text === "Done in the group.")!.quote).toEqual({ timestamp: asking, author: MEMBER.number });
  });

  it("kill -9 while an answer is being written: after the restart it is delivered exactly once", async () => {
    const answer = "Written slowly, delivered once, whatever the crash.";
    const before = texts(OWNER.number).length;
    model.setDefault(text(answer, { chunkSize: 6, chunkDelayMs: 80 }));
    try {
      const requests = model.requests.length;
      signal.receive({ from: OWNER, text: "answer me across a crash" });
      await model.waitForRequests(requests + 1);
      await waitFor("a preview of the answer", () => texts(OWNER.number).length > before);
      // Killed once the reply's journal has the preview (before that, signal-cli has sent it but
      // Hearth has not heard its timestamp yet, and a restart could only leave it as it is).
      const preview = signal.messages(OWNER.number)[before]!.timestamp;
      await waitFor("the preview in the reply's journal", () => existsSync(join(home, "outbox.jsonl")) && readFileSync(join(home, "outbox.jsonl"), "utf8").includes(`"${preview}"`));
      daemon.proc.kill("SIGKILL");
      await daemon.exited;
      // The preview (edited in place, never a second message) shows part of it at most.
      expect(texts(OWNER.number).slice(before)).toHaveLength(1);
      expect(texts(OWNER.number).slice(before)).not.toEqual([answer]);
      await start();
      await waitFor("the answer after the restart", () => texts(OWNER.number).includes(answer));
      await settled();
      expect(texts(OWNER.number).slice(before)).toEqual([answer]);
    } finally {
      model.setDefault(null);
    }
  });

  it("signal-cli stopped: the channel waits for it, and a message written meanwhile is answered once after it is back", async () => {
    const requests = model.requests.length;
    const before = texts(OWNER.number).length;
    await signal.stop();
    await waitFor("the channel to report the lost stream", () => daemon.log().includes('"state":"reconnecting"'));
    signal.receive({ from: OWNER, text: "are you there after the outage?" });
    model.enqueue(text("Back again."));
    const streams = signal.streamsOpened;
    await signal.restart();
    await streamOpened(signal, streams);
    await waitFor("the answer", () => texts(OWNER.number).includes("Back again."));
    await settled();
    expect(texts(OWNER.number).slice(before)).toEqual(["Back again."]);
    expect(model.requests).toHaveLength(requests + 1);
    expect(String(lastUserContent(model.requests.at(-1)!).at(-1)!.text).split("\n").at(-1)).toBe("are you there after the outage?");
    expect(signal.pending()).toBe(0);
  });
});
