// WhatsApp answers that are ready while the device cannot send, end to end: the real daemon's
// WhatsApp channel over the fake at Hearth's socket interface, and Signal as the owner's other
// channel. An answer finished while the connection is lost goes out once it is back, in the same
// process; one finished after WhatsApp logged the device out survives the logout — the owner is
// told on Signal which answer waits — and goes out once after the restart and the new link, with
// no second model call.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { LOGGED_OUT } from "../../src/channels/whatsapp/channel.ts";
import { heldNotice } from "../../src/gateway/delivery/held-replies.ts";
import { linkedAndConnected } from "../channels/conformance/whatsapp.ts";
import { cleanupDaemon, inboxSettled, makeHome, startDaemon, waitFor, type Daemon } from "../support/daemon.ts";
import { startFakeModel, text, type FakeModel } from "../support/fake-model.ts";
import { startFakeSignalCli, streamOpened, type FakeSignalCli } from "../support/fake-signal-cli.ts";
import { personJid, startFakeWhatsApp, WA_BOT, type FakeWhatsApp } from "../support/fake-whatsapp.ts";

const OWNER = { number: "4915111111111", name: "Ann" };
const OWNER_ON_SIGNAL = "+4915111111111";

let model: FakeModel;
let wa: FakeWhatsApp;
let signal: FakeSignalCli;
let home: string;
const daemons: Daemon[] = [];
const daemon = () => daemons.at(-1)!;

async function start(): Promise<void> {
  const connects = wa.connectsOpened;
  const streams = signal.streamsOpened;
  daemons.push(await startDaemon(home, { ...wa.env(), ANTHROPIC_API_KEY: "test-key", ANTHROPIC_BASE_URL: model.url }));
  await linkedAndConnected(wa, connects);
  await streamOpened(signal, streams);
}

beforeAll(async () => {
  model = await startFakeModel();
  wa = await startFakeWhatsApp();
  signal = await startFakeSignalCli();
  home = makeHome({
    channels: {
      whatsapp: { pairingNumber: `+${WA_BOT}`, ownerIds: [`+${OWNER.number}`] },
      signal: { httpUrl: signal.url, account: signal.account, ownerIds: [OWNER_ON_SIGNAL] },
    },
    heartbeat: { every: "0" },
  });
  await start();
});
afterAll(async () => {
  const last = daemons.at(-1);
  if (last && last.proc.exitCode === null && last.proc.signalCode === null) await last.stop().catch(() => undefined);
  for (const d of daemons.slice(0, -1)) await cleanupDaemon(d, undefined);
  await cleanupDaemon(last, home);
  await signal.close();
  await wa.close();
  await model.close();
});

const owner = personJid(OWNER.number);
const texts = () => wa.messages(owner).map((m) => m.text);
const settled = () => waitFor("every accepted message's outcome to be recorded", () => inboxSettled(home));
const onSignal = () => signal.messages(OWNER_ON_SIGNAL).map((m) => m.text);

describe("WhatsApp answers that wait for the device (daemon e2e)", () => {
  it("an answer finished while the connection is lost goes out once it is back, in the same process", async () => {
    const before = texts().length;
    const requests = model.requests.length;
    model.enqueue(text("Sent once the connection was back.", { headDelayMs: 1_000 }));
    wa.receive({ from: OWNER, text: "answer me across an outage" });
    await model.waitForRequests(requests + 1);
    wa.drop();
    await waitFor("the answer's delivery to fail", () => daemon().log().includes('"reply.undelivered"'));
    expect(texts().slice(before)).toEqual([]);
    wa.restore();
    await waitFor("the answer", () => texts().includes("Sent once the connection was back."));
    await settled();
    expect(texts().slice(before)).toEqual(["Sent once the connection was back."]);
    expect(model.requests).toHaveLength(requests + 1);
    // A lost connection comes back by itself: the owner is not bothered on Signal.
    expect(onSignal()).toEqual([]);
  });

  it("an answer finished after the device was logged out: the owner is told on Signal which one waits, and after the restart and the new link it goes out once, with no second model call", async () => {
    const before = texts().length;
    const requests = model.requests.length;
    const answer = "Written while logged out, sent after the new link.";
    model.enqueue(text(answer, { headDelayMs: 1_000 }));
    wa.receive({ from: OWNER, text: "answer me across a logout" });
    await model.waitForRequests(requests + 1);
    wa.logout();
    const notice = heldNotice("whatsapp", { state: "failed", reason: LOGGED_OUT }, "answer me across a logout");
    await waitFor("both notices on Signal", () => onSignal().length >= 2);
    expect(onSignal()).toEqual([LOGGED_OUT, notice]);
    expect(notice).toBe(`Not sent yet on whatsapp: the answer to "answer me across a logout". whatsapp is not connected (${LOGGED_OUT.slice(0, -1)}); the answer goes out once it is connected again.`);
    await daemon().stop();
    expect(inboxSettled(home)).toBe(false);
    await start();
    await waitFor("the answer after the new link", () => texts().includes(answer));
    await settled();
    expect(texts().slice(before)).toEqual([answer]);
    expect(model.requests).toHaveLength(requests + 1);
    expect(wa.pairingAsked).toEqual([WA_BOT, WA_BOT]);
    expect(onSignal()).toEqual([LOGGED_OUT, notice]);
  });
});
