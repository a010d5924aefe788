// `hearth setup --non-interactive` for the platforms linked as a device: Signal against the fake
// signal-cli (a daemon serving no account yet: the link's QR code is printed with its text, and
// setup waits for the phone), WhatsApp against its fake at the socket interface (the pairing code
// printed), then the section written. A missing flag or a link the phone never approves
// is one sentence, and nothing is written.
import { existsSync, mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { parse as parseJsonc } from "jsonc-parser";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { isolatedEnv, runHearth } from "../support/cli-process.ts";
import { waitFor } from "../support/daemon.ts";
import { startFakeModel, type FakeModel } from "../support/fake-model.ts";
import { startFakeSignalCli } from "../support/fake-signal-cli.ts";
import { startFakeWhatsApp, WA_BOT } from "../support/fake-whatsapp.ts";

let model: FakeModel;
const homes: string[] = [];
const closers: Array<() => Promise<void>> = [];

beforeAll(async () => {
  model = await startFakeModel();
});
afterAll(async () => {
  for (const h of homes) rmSync(h, { recursive: true, force: true });
  for (const close of closers) await close();
  await model.close();
});

function newHome(): string {
  const home = join(mkdtempSync(join(tmpdir(), "hearth-setup-link-")), "home");
  homes.push(join(home, ".."));
  return home;
}

const env = (home: string, extra: Record<string, string> = {}) => isolatedEnv({ HEARTH_HOME: home, ANTHROPIC_API_KEY: "sk-ant-setup-test-key", ...extra });
const setup = (...flags: string[]) => ["setup", "--non-interactive", "--base-url", model.url, ...flags];
const config = (home: string) => parseJsonc(readFileSync(join(home, "config.json"), "utf8")) as { channels: Record<string, Record<string, unknown>> };

describe("hearth setup --non-interactive with Signal", () => {
  it("links a device by the QR code it prints (with the code's text), waits for the phone, and writes the section", async () => {
    const signal = await startFakeSignalCli({ multiAccount: true });
    closers.push(() => signal.close());
    const home = newHome();
    let stdout = "";
    const running = runHearth(setup("--signal", "--signal-url", signal.url, "--signal-owner", "+4917698765432"), env(home), {
      onSpawn: (child) => child.stdout!.on("data", (d: Buffer) => (stdout += d.toString())),
    });
    await waitFor("the code to be shown and the phone waited for", () => stdout.includes("(the code's text: sgnl://linkdevice?uuid=fake-uuid&pub_key=fake-key)") && signal.linkWaiting());
    expect(existsSync(join(home, "config.json"))).toBe(false);
    signal.approveLink("+4915100000000");
    const r = await running;
    expect(r.code, r.stdout + r.stderr).toBe(0);
    const lines = r.stdout.split("\n");
    expect(lines[2]).toMatch(/^✓ .*0\.13\.22/);
    expect(lines[3]).toBe("On the phone with Hearth's number: Signal → Settings → Linked devices → Link new device, and scan:");
    expect(lines).toContain("✓ linked as a device of +4915100000000");
    expect(lines).toContain("✓ Signal: Hearth is +4915100000000; its owner +4917698765432");
    expect(config(home).channels.signal).toMatchObject({ httpUrl: signal.url, account: "+4915100000000", ownerIds: ["+4917698765432"] });
    expect(signal.callsTo("finishLink")).toHaveLength(1);
  });

  it("a daemon serving one number (-a) without --signal-account: exit 2 naming the flag, nothing written", async () => {
    const signal = await startFakeSignalCli();
    closers.push(() => signal.close());
    const home = newHome();
    const r = await runHearth(setup("--signal", "--signal-url", signal.url, "--signal-owner", "+4917698765432"), env(home));
    expect(r.code).toBe(2);
    expect(r.stderr).toContain("--signal needs --signal-account (The number signal-cli runs as (its -a))");
    expect(existsSync(join(home, "config.json"))).toBe(false);
  });

  it("the phone never scans within --handshake-timeout: one sentence, nothing written", async () => {
    const signal = await startFakeSignalCli({ multiAccount: true });
    closers.push(() => signal.close());
    const home = newHome();
    const r = await runHearth(setup("--signal", "--signal-url", signal.url, "--signal-owner", "+4917698765432", "--handshake-timeout", "1s"), env(home));
    expect(r.code, r.stdout + r.stderr).toBe(1);
    expect(r.stdout.split("\n").slice(-3)).toEqual([expect.stringMatching(/^✗ signal: the link did not complete: .+/), "Nothing was written.", ""]);
    expect(existsSync(join(home, "config.json"))).toBe(false);
  });
});

describe("hearth setup --non-interactive with WhatsApp", () => {
  it("links by the pairing code it prints for Hearth's number, keeps the link's secrets in the home, and writes the section", async () => {
    const wa = await startFakeWhatsApp();
    closers.push(() => wa.close());
    const home = newHome();
    let stdout = "";
    const flags = ["--whatsapp", "--whatsapp-link", "code", "--whatsapp-number", `+${WA_BOT}`, "--whatsapp-owner", "+4917698765432"];
    const running = runHearth(setup(...flags), env(home, wa.env()), { onSpawn: (child) => child.stdout!.on("data", (d: Buffer) => (stdout += d.toString())) });
    await waitFor("the pairing code to be shown", () => stdout.includes("Link with phone number instead, and type ABCD1234") && wa.waitingForLink());
    wa.link();
    const r = await running;
    expect(r.code, r.stdout + r.stderr).toBe(0);
    const lines = r.stdout.split("\n");
    expect(lines).toContain(`✓ linked as a device of +${WA_BOT}`);
    expect(lines).toContain(`✓ WhatsApp: Hearth is +${WA_BOT}; its owner +4917698765432`);
    expect(wa.pairingAsked).toEqual([WA_BOT]);
    expect(config(home).channels.whatsapp).toMatchObject({ pairingNumber: `+${WA_BOT}`, ownerIds: ["+4917698765432"] });
    expect(JSON.parse(readFileSync(join(home, "secrets.whatsapp.json"), "utf8")).creds.me).toBe(WA_BOT);
  });

  it("by QR code (the default): prints the code's text", async () => {
    const wa = await startFakeWhatsApp();
    closers.push(() => wa.close());
    const home = newHome();
    let stdout = "";
    const running = runHearth(setup("--whatsapp", "--whatsapp-owner", "+4917698765432"), env(home, wa.env()), { onSpawn: (child) => child.stdout!.on("data", (d: Buffer) => (stdout += d.toString())) });
    await waitFor("the QR code to be shown", () => stdout.includes("(the code's text: 2@fake-qr,fake-key)") && wa.waitingForLink());
    wa.link();
    const r = await running;
    expect(r.code, r.stdout + r.stderr).toBe(0);
    expect(wa.pairingAsked).toEqual(["qr"]);
    expect(config(home).channels.whatsapp).toEqual({ ownerIds: ["+4917698765432"] });
  });
});
