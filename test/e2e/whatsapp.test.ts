// WhatsApp end to end: the real daemon's WhatsApp channel over the fake at Hearth's socket
// interface (WhatsApp cannot be faked at the network edge). The device links on first start and
// its credentials land in the home's secrets file; the owner's voice note is transcribed and
// answered once; in a group, a member's numbered reply to an approval runs nothing and the
// owner's runs it once; kill -9 during an answer delivers it exactly once after the restart
// (without a new link); a dropped connection is reconnected and a message written meanwhile
// answered once; a logged-out device is reported with the exact sentence, in `hearth status` and
// in one message to the owner's other channel (Signal here).
import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { LOGGED_OUT } from "../../src/channels/whatsapp/channel.ts";
import { linkedAndConnected } from "../channels/conformance/whatsapp.ts";
import { cleanupDaemon, inboxSettled, makeHome, startDaemon, waitFor, type Daemon } from "../support/daemon.ts";
import { lastUserContent, startFakeModel, text, toolCall, type FakeModel } from "../support/fake-model.ts";
import { personJid, startFakeWhatsApp, WA_BOT, type FakeWhatsApp } from "../support/fake-whatsapp.ts";
import { startFakeSignalCli, streamOpened, type FakeSignalCli } from "../support/fake-signal-cli.ts";
import { startFakeTranscription, type FakeTranscription } from "../support/fake-transcription.ts";

const OWNER = { number: "4915111111111", name: "Ann" };
const MEMBER = { number: "4915222222222", name: "Bob" };
const FAMILY = "120363000000000009@g.us";

let model: FakeModel;
let wa: FakeWhatsApp;
let stt: FakeTranscription;
let signal: FakeSignalCli;
const OWNER_ON_SIGNAL = "+4915111111111";
let home: string;
let daemon: Daemon;
const daemons: Daemon[] = [];

async function start(): Promise<void> {
  const connects = wa.connectsOpened;
  const streams = signal.streamsOpened;
  daemon = await startDaemon(home, { ...wa.env(), ANTHROPIC_API_KEY: "test-key", ANTHROPIC_BASE_URL: model.url });
  daemons.push(daemon);
  await linkedAndConnected(wa, connects);
  await streamOpened(signal, streams);
}

beforeAll(async () => {
  model = await startFakeModel();
  wa = await startFakeWhatsApp();
  stt = await startFakeTranscription();
  signal = await startFakeSignalCli();
  home = makeHome({
    channels: {
      whatsapp: { pairingNumber: `+${WA_BOT}`, ownerIds: [`+${OWNER.number}`], groups: { policy: "allowlist", allow: [FAMILY] } },
      signal: { httpUrl: signal.url, account: signal.account, ownerIds: [OWNER_ON_SIGNAL] },
    },
    media: { transcription: { baseUrl: stt.baseUrl, apiKey: "stt-key", model: "whisper-1" } },
    tools: { shared: { allow: ["exec"] } },
    approvals: { exec: "always", timeoutSeconds: 300 },
    heartbeat: { every: "0" },
  });
  await start();
});
afterAll(async () => {
  const last = daemons.at(-1);
  if (last && last.proc.exitCode === null && last.proc.signalCode === null) await last.stop().catch(() => undefined);
  for (const d of daemons.slice(0, -1)) await cleanupDaemon(d, undefined);
  await cleanupDaemon(last, home);
  await stt.close();
  await signal.close();
  await wa.close();
  await model.close();
});

const owner = personJid(OWNER.number);
const texts = (jid: string) => wa.messages(jid).map((m) => m.text);
const settled = () => waitFor("every accepted message's outcome to be recorded", () => inboxSettled(home));

describe("WhatsApp (daemon e2e)", () => {
  it("links by a pairing code on first start and keeps the credentials in the home's secrets file", async () => {
    await waitFor("the channel to be connected", () => daemon.log().includes('"whatsapp.connected"'));
    expect(wa.pairingAsked).toEqual([WA_BOT]);
    expect(daemon.log()).toContain('"whatsapp.pairing_code"');
    expect(daemon.log()).toContain("ABCD1234");
    const stored = readFileSync(join(home, "secrets.whatsapp.json"), "utf8");
    expect(JSON.parse(stored)).toMatchObject({ creds: { me: WA_BOT, noiseKey: { private: { $bytes: "AQID" } } }, keys: { "pre-key": { "1": { private: { $bytes: "Bw==" } } } } });
  });

  it("the owner's voice note: transcribed, what was heard shown, answered once", async () => {
    const requests = model.requests.length;
    stt.enqueue({ text: "Remind me to water the plants." });
    model.enqueue(text("Noted: the plants."));
    const audio = new Uint8Array([0x4f, 0x67, 0x67, 0x53, 0, 2, 0, 0]);
    wa.receive({ from: OWNER, media: { kind: "audio", mime: "audio/ogg; codecs=opus", bytes: audio, voice: true } });
    await waitFor("the answer", () => texts(owner).includes("Noted: the plants."));
    await settled();
    expect(stt.requests).toHaveLength(1);
    expect(stt.requests[0]).toMatchObject({ fileName: "voice-note.ogg", model: "whisper-1" });
    expect(Buffer.from(stt.requests[0]!.file).equals(Buffer.from(audio))).toBe(true);
    expect(model.requests).toHaveLength(requests + 1);
    expect(String(lastUserContent(model.requests.at(-1)!)[0]!.text).split("\n").at(-1)).toBe("[voice note, transcribed] Remind me to water the plants.");
    expect(texts(owner)).toEqual(["🎤 heard: Remind me to water the plants.", "Noted: the plants."]);
  });

  it("in a group: a member's numbered reply to an approval runs nothing; the owner's runs the command once", async () => {
    const workspace = join(home, "workspace");
    model.enqueue(toolCall("exec", { command: "echo ran >> wa-group.txt" }), text("Done in the group."));
    const asking = wa.receive({ from: MEMBER, group: FAMILY, mentionsBot: true, text: "please run it" });
    const question = () => wa.messages(FAMILY).find((m) => m.text.startsWith("🔐 Approve this?"));
    await waitFor("the question in the group", () => question() !== undefined);
    const q = question()!.text;
    expect(q.endsWith("\n\n1. Allow once\n2. Allow for 30 min\n3. Always\n4. Deny\n\nReply to this message with a number (e.g. 1 to allow once).")).toBe(true);

    wa.receive({ from: MEMBER, group: FAMILY, text: "1" });
    await waitFor("the member's answer", () => texts(FAMILY).includes("Only the owner can approve."));
    expect(existsSync(join(workspace, "wa-group.txt"))).toBe(false);

    wa.receive({ from: OWNER, group: FAMILY, text: "1" });
    await waitFor("the answer in the group", () => texts(FAMILY).includes("Done in the group."));
    await settled();
    expect(readFileSync(join(workspace, "wa-group.txt"), "utf8")).toBe("ran\n");
    const asked = q.slice(0, q.indexOf("\n\n1. Allow once"));
    expect(texts(FAMILY).slice(1).sort()).toEqual(["Only the owner can approve.", "Allowed.", `${asked}\n\n✅ Allowed once by Ann.`, "Done in the group."].sort());
    // In a group, the answer quotes the message it answers.
    expect(wa.messages(FAMILY).find((m) => m.text === "Done in the group.")!.quote).toEqual({ id: asking, sender: MEMBER.number });
  });

  it("kill -9 while an answer is being written: after the restart (no new link) it is delivered exactly once", async () => {
    const answer = "Written slowly, delivered once on WhatsApp.";
    const before = texts(owner).length;
    model.setDefault(text(answer, { chunkSize: 6, chunkDelayMs: 80 }));
    try {
      const requests = model.requests.length;
      wa.receive({ from: OWNER, text: "answer me across a crash" });
      await model.waitForRequests(requests + 1);
      daemon.proc.kill("SIGKILL");
      await daemon.exited;
      expect(texts(owner).slice(before)).toEqual([]);
      await start();
      await waitFor("the answer after the restart", () => texts(owner).includes(answer));
      await settled();
      expect(texts(owner).slice(before)).toEqual([answer]);
      expect(wa.pairingAsked).toEqual([WA_BOT]);
    } finally {
      model.setDefault(null);
    }
  });

  it("a dropped connection is reconnected with backoff; a message written meanwhile is answered once", async () => {
    const requests = model.requests.length;
    const before = texts(owner).length;
    const connects = wa.connectsOpened;
    wa.drop();
    await waitFor("the channel to report the lost connection", () => daemon.log().includes("lost the connection to WhatsApp"));
    wa.receive({ from: OWNER, text: "are you back?" });
    model.enqueue(text("Back on WhatsApp."));
    wa.restore();
    await waitFor("a new connection", () => wa.connectsOpened > connects && wa.connected());
    await waitFor("the answer", () => texts(owner).includes("Back on WhatsApp."));
    await settled();
    expect(texts(owner).slice(before)).toEqual(["Back on WhatsApp."]);
    expect(model.requests).toHaveLength(requests + 1);
  });

  it("a logged-out device: hearth status says so in the exact sentence, the owner is told once on Signal, and the credentials are gone", async () => {
    expect(signal.messages(OWNER_ON_SIGNAL)).toEqual([]);
    wa.logout();
    await waitFor("the logged-out state", async () => (await daemon.hearth(["status"])).stdout.includes(LOGGED_OUT));
    const status = (await daemon.hearth(["status"])).stdout;
    expect(status.split("\n").find((l) => l.trim().startsWith("whatsapp"))).toBe(`  whatsapp   not running: ${LOGGED_OUT}`);
    expect(existsSync(join(home, "secrets.whatsapp.json"))).toBe(false);
    await waitFor("the notice on Signal", () => signal.messages(OWNER_ON_SIGNAL).length > 0);
    expect(signal.messages(OWNER_ON_SIGNAL).map((m) => m.text)).toEqual([LOGGED_OUT]);
  });
});
