// `hearth setup` for the platforms linked as a device (Signal through signal-cli, WhatsApp through
// its socket interface): each link run against its fake with a scripted terminal, and what setup
// writes from the answers.
import { existsSync, mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import type { LinkUi } from "../../src/channels/descriptor.ts";
import { channelDescriptor } from "../../src/channels/registry.ts";
import { loadConfig } from "../../src/config/config.ts";
import { writeSetup } from "../../src/config/setup-config.ts";
import { silentLogger } from "../../src/process/log.ts";
import { waitFor } from "../support/daemon.ts";
import { startFakeSignalCli, type FakeSignalCli } from "../support/fake-signal-cli.ts";
import { startFakeWhatsApp, WA_BOT, type FakeWhatsApp } from "../support/fake-whatsapp.ts";

/** A terminal that answers from a script: `asks` in order, `choices` in order; everything shown is kept. */
function scripted(asks: string[], choices: string[]): LinkUi & { said: string[]; asked: string[] } {
  const said: string[] = [];
  const asked: string[] = [];
  return {
    said,
    asked,
    async ask(message, opts) {
      asked.push(message);
      const a = asks.shift();
      return a === "" ? (opts?.initialValue ?? "") : (a ?? "");
    },
    async choose(message, options) {
      asked.push(message);
      const c = choices.shift()!;
      if (!options.some((o) => o.value === c)) throw new Error(`"${c}" is not among ${JSON.stringify(options)}`);
      return c as never;
    },
    say: (text) => void said.push(text),
  };
}

let home: string;
let signal: FakeSignalCli | undefined;
let wa: FakeWhatsApp | undefined;
afterEach(async () => {
  await signal?.close();
  await wa?.close();
  signal = wa = undefined;
  rmSync(home, { recursive: true, force: true });
});
const newHome = () => (home = mkdtempSync(join(tmpdir(), "hearth-link-")));

describe("Signal's setup", () => {
  it("with a signal-cli serving no account yet: links a device by QR code, then asks the owner's number", async () => {
    newHome();
    signal = await startFakeSignalCli({ multiAccount: true });
    const ui = scripted([signal.url, "+4917698765432"], ["link"]);
    const run = channelDescriptor("signal")!.linkSetup!.run(ui, home, 60_000);
    await waitFor("the phone to be asked to scan", () => signal!.linkWaiting());
    expect(ui.said.at(-1)).toMatch(/^On the phone with Hearth's number: Signal → Settings → Linked devices → Link new device, and scan:\n/);
    signal.approveLink("+4915100000000");
    expect(await run).toEqual({ ok: true, section: { httpUrl: signal.url, account: "+4915100000000", ownerIds: ["+4917698765432"] }, linked: "Signal: Hearth is +4915100000000; its owner +4917698765432" });
    expect(signal.calls.map((c) => c.method)).toEqual(["version", "listAccounts", "startLink", "finishLink"]);
    expect(signal.callsTo("finishLink")[0]!.params).toEqual({ deviceLinkUri: "sgnl://linkdevice?uuid=fake-uuid&pub_key=fake-key", deviceName: "Hearth" });
  });

  it("with a signal-cli started as one number (-a): asks which, links nothing", async () => {
    newHome();
    signal = await startFakeSignalCli();
    const ui = scripted([signal.url, "+4915100000000", "+4917698765432"], []);
    const r = await channelDescriptor("signal")!.linkSetup!.run(ui, home, 60_000);
    expect(r).toMatchObject({ ok: true, section: { account: "+4915100000000", ownerIds: ["+4917698765432"] } });
    expect(ui.asked).toEqual(["signal-cli's HTTP address (signal-cli daemon --http …)", "The number signal-cli runs as (its -a)", "Your own Signal number (you talk to Hearth from it)"]);
  });

  it("no signal-cli at the address: says so and how to start it", async () => {
    newHome();
    signal = await startFakeSignalCli();
    await signal.stop();
    const r = await channelDescriptor("signal")!.linkSetup!.run(scripted([signal.url], []), home, 60_000);
    expect(r).toEqual({ ok: false, problem: `signal-cli cannot be reached at ${new URL(signal.url).host} (ECONNREFUSED); start signal-cli as docs/channels/signal.md shows, then try again` });
  });
});

describe("WhatsApp's setup", () => {
  it("links by a pairing code into the home's credential store, then asks the owner's number", async () => {
    newHome();
    wa = await startFakeWhatsApp();
    const saved = { ...process.env };
    Object.assign(process.env, wa.env());
    try {
      const ui = scripted([`+${WA_BOT}`, "+4917698765432"], ["code"]);
      const run = channelDescriptor("whatsapp")!.linkSetup!.run(ui, home, 60_000);
      await waitFor("the device to wait for the phone", () => wa!.waitingForLink());
      await waitFor("the pairing code shown", () => ui.said.some((l) => l.includes("ABCD1234")));
      wa.link();
      expect(await run).toEqual({ ok: true, section: { pairingNumber: `+${WA_BOT}`, ownerIds: ["+4917698765432"] }, linked: `WhatsApp: Hearth is +${WA_BOT}; its owner +4917698765432` });
      expect(wa.pairingAsked).toEqual([WA_BOT]);
      expect(JSON.parse(readFileSync(join(home, "secrets.whatsapp.json"), "utf8")).creds.me).toBe(WA_BOT);
      expect(ui.said[0]).toContain("may ban a number");
    } finally {
      process.env = saved;
    }
  });
});

it("setup writes a linked channel's keys into config.json, which then loads with them", () => {
  newHome();
  writeSetup(home, { model: { kind: "ollama", model: "llama3.2" }, channels: {}, linked: { signal: { httpUrl: "http://127.0.0.1:8080", account: "+4915100000000", ownerIds: ["+4917698765432"] }, whatsapp: { ownerIds: ["+4917698765432"] } } }, silentLogger);
  const config = loadConfig({ home, env: {} }) as unknown as { channels: Record<string, Record<string, unknown>> };
  expect(config.channels.signal).toMatchObject({ httpUrl: "http://127.0.0.1:8080", account: "+4915100000000", ownerIds: ["+4917698765432"] });
  expect(config.channels.whatsapp).toMatchObject({ ownerIds: ["+4917698765432"], pairingNumber: null });
  expect(existsSync(join(home, ".env"))).toBe(false);
});
