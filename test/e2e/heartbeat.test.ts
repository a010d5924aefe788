// The heartbeat end to end: the real daemon with a one-second heartbeat, the Telegram emulator
// and the fake model. HEARTBEAT_OK stays quiet; anything else reaches the owner's chat; outside
// the active hours nothing runs.
import { mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { setTimeout as sleep } from "node:timers/promises";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { cleanupDaemon, makeHome, startDaemon, waitFor, type Daemon } from "../support/daemon.ts";
import { lastUserContent, startFakeModel, text, type FakeModel, type RecordedRequest } from "../support/fake-model.ts";
import { startTelegramEmulator, type TelegramEmulator } from "../support/telegram-emulator.ts";

const OWNER = 100;
const CHECKLIST = "- Check whether the owner's flight LH404 is delayed.";

let fake: FakeModel;
let emu: TelegramEmulator;
let home: string;
let daemons: Daemon[] = [];
beforeEach(async () => {
  fake = await startFakeModel();
  emu = await startTelegramEmulator();
  daemons = [];
});
afterEach(async () => {
  for (const d of daemons) await cleanupDaemon(d, undefined).catch(() => {});
  await cleanupDaemon(undefined, home);
  await emu.stop();
  await fake.close();
});

function writeConfig(heartbeat: unknown): void {
  writeFileSync(join(home, "config.json"), JSON.stringify({ timezone: "UTC", heartbeat, channels: { telegram: { apiRoot: emu.apiRoot, ownerIds: [String(OWNER)] } } }));
}

async function start(): Promise<Daemon> {
  const d = await startDaemon(home, { TELEGRAM_BOT_TOKEN: emu.token, ANTHROPIC_API_KEY: "test-key", ANTHROPIC_BASE_URL: fake.url });
  daemons.push(d);
  await waitFor("telegram polling", () => d.log().includes("telegram.polling"));
  return d;
}

const isHeartbeat = (req: RecordedRequest) => lastUserContent(req).some((b) => typeof b.text === "string" && b.text.includes("Heartbeat check-in"));
const heartbeats = () => fake.requests.filter(isHeartbeat);
const count = (d: Daemon, event: string) => d.log().split(`"event":"${event}"`).length - 1;

/** The owner writes once with the heartbeat off, so Hearth knows their chat; then the daemon stops. */
async function meetOwner(): Promise<void> {
  home = makeHome();
  mkdirSync(join(home, "workspace"), { recursive: true });
  writeFileSync(join(home, "workspace", "HEARTBEAT.md"), `# Heartbeat\n\n${CHECKLIST}\n`);
  writeConfig({ every: "0" });
  const d = await start();
  fake.enqueue(text("Hi Ann!"));
  await emu.user({ userId: OWNER, firstName: "Ann" }).send("hi");
  await waitFor("the greeting", () => emu.botMessages(OWNER)[0]?.text === "Hi Ann!");
  expect(await d.stop()).toBe(0);
}

describe("heartbeat (daemon e2e)", () => {
  it("HEARTBEAT_OK delivers nothing; another answer goes to the owner's chat", async () => {
    await meetOwner();
    const replies = ["HEARTBEAT_OK", "Heads up: LH404 is delayed by 2 hours."];
    fake.setDefault({ type: "respond", fn: (req) => text(isHeartbeat(req) ? (replies.shift() ?? "**HEARTBEAT_OK**") : "unexpected") });
    writeConfig({ every: "1s", activeHours: { start: "00:00", end: "00:00" } });
    const d = await start();

    await waitFor("the alert", () => emu.botMessages(OWNER).some((m) => m.text === "Heads up: LH404 is delayed by 2 hours."), 15_000);
    expect(heartbeats().length).toBeGreaterThanOrEqual(2);
    expect(JSON.stringify(heartbeats()[0]!.body.messages)).toContain(CHECKLIST);
    // Runs in main: the owner's earlier conversation is part of the request.
    expect(JSON.stringify(heartbeats()[0]!.body.messages)).toContain("Hi Ann!");

    const oks = count(d, "heartbeat.ok");
    await waitFor("two more quiet heartbeats", () => count(d, "heartbeat.ok") >= oks + 2, 15_000);
    expect(emu.botMessages(OWNER).map((m) => m.text)).toEqual(["Hi Ann!", "Heads up: LH404 is delayed by 2 hours."]);
    // The daily log keeps the heartbeat that had something to say, not the quiet ones.
    const dailyLog = readFileSync(join(home, "workspace", "memory", `${new Date().toISOString().slice(0, 10)}.md`), "utf8");
    expect(dailyLog).toContain("Heads up: LH404 is delayed by 2 hours.");
    expect(dailyLog).not.toContain("HEARTBEAT_OK");
  });

  it("outside the active hours no heartbeat runs", async () => {
    await meetOwner();
    const hour = new Date().getUTCHours();
    const at = (h: number) => `${String(h % 24).padStart(2, "0")}:00`;
    writeConfig({ every: "1s", activeHours: { start: at(hour + 2), end: at(hour + 3) } });
    fake.setDefault(text("Something to report!"));
    const before = fake.requests.length;
    const d = await start();
    await waitFor("three heartbeat times to pass", () => d.log().split("outside_active_hours").length - 1 >= 3, 10_000);
    await sleep(200);
    expect(fake.requests.length).toBe(before);
    expect(emu.botMessages(OWNER)).toHaveLength(1);
  });
});
