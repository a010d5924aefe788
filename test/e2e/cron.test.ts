// Scheduled jobs end to end: the real daemon (`hearth start`), the Telegram Bot API emulator and
// the fake model at the edges, driven through `hearth cron …`, `hearth chat` and jobs.json.
import { existsSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { setTimeout as sleep } from "node:timers/promises";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import type { RunRecord } from "../../src/scheduler/run-log.ts";
import type { JobView } from "../../src/scheduler/view.ts";
import { isolatedEnv, runHearth } from "../support/cli-process.ts";
import { cleanupDaemon, makeHome, startDaemon, waitFor, type Daemon } from "../support/daemon.ts";
import { startFakeModel, text, toolCall, type FakeModel } from "../support/fake-model.ts";
import { startTelegramEmulator, type TelegramEmulator } from "../support/telegram-emulator.ts";

const OWNER = 100;

let fake: FakeModel;
let emu: TelegramEmulator;
let home: string;
let daemons: Daemon[] = [];
beforeEach(async () => {
  fake = await startFakeModel();
  emu = await startTelegramEmulator();
  home = makeHome({
    timezone: "UTC",
    heartbeat: { every: "0" },
    channels: { telegram: { apiRoot: emu.apiRoot, ownerIds: [String(OWNER)] } },
  });
  daemons = [];
});
afterEach(async () => {
  for (const d of daemons) await cleanupDaemon(d, undefined).catch(() => {});
  await cleanupDaemon(undefined, home);
  await emu.stop();
  await fake.close();
});

const env = () => ({ TELEGRAM_BOT_TOKEN: emu.token, ANTHROPIC_API_KEY: "test-key", ANTHROPIC_BASE_URL: fake.url });
async function start(): Promise<Daemon> {
  const d = await startDaemon(home, env());
  daemons.push(d);
  await waitFor("telegram polling", () => d.log().includes("telegram.polling"));
  return d;
}
/** `hearth ARGS` on this home, with or without a daemon. */
const hearth = (args: string[]) => runHearth(args, isolatedEnv({ HEARTH_HOME: home, ...env() }));
async function list(): Promise<JobView[]> {
  const r = await hearth(["cron", "list", "--json"]);
  expect(r.code, r.stderr).toBe(0);
  return JSON.parse(r.stdout) as JobView[];
}
const runs = (): RunRecord[] => {
  const file = join(home, "cron", "runs.jsonl");
  return existsSync(file) ? readFileSync(file, "utf8").trim().split("\n").map((l) => JSON.parse(l) as RunRecord) : [];
};
const jobsFile = () => join(home, "cron", "jobs.json");
const inMs = (ms: number) => new Date(Date.now() + ms).toISOString();

describe("hearth cron (daemon e2e)", () => {
  it("an --at job fires once, its answer arrives in the Telegram chat, and cron list --json shows how it went", async () => {
    await start();
    fake.enqueue(text("Time to stretch your legs!"));
    // Far enough ahead that the list below sees it still due when the CLI is slow on a loaded machine.
    const dueAt = inMs(8000);
    const add = await hearth(["cron", "add", "--name", "Stretch", "--at", dueAt, "--message", "Tell me to stretch", "--deliver", `telegram:${OWNER}`]);
    expect(add.code, add.stderr).toBe(0);
    expect(add.stdout).toMatch(/^Added job [0-9a-f]{8} "Stretch": at /);
    const [job] = await list();
    expect(job).toMatchObject({ name: "Stretch", nextRunAt: new Date(dueAt).toISOString(), lastStatus: null, deliver: `telegram:${OWNER}` });

    const [msg] = await emu.waitForBotMessages(OWNER, 1, 30_000);
    expect(msg!.text).toBe("Time to stretch your legs!");
    expect(Date.now()).toBeGreaterThanOrEqual(Date.parse(dueAt));
    expect(fake.requests).toHaveLength(1);
    expect(fake.requests[0]!.rawBody).toContain("Tell me to stretch");

    await waitFor("the job's status", async () => (await list())[0]!.lastStatus === "ok");
    expect((await list())[0]).toMatchObject({ id: job!.id, lastStatus: "ok", lastDelivery: "delivered", nextRunAt: null, lastRunAt: expect.any(String), running: false });
    await sleep(1500);
    expect(emu.botMessages(OWNER)).toHaveLength(1);
    expect(fake.requests).toHaveLength(1);
    expect(runs().map((r) => r.status)).toEqual(["queued", "started", "ok"]);
  });

  it("a job due while the daemon is down runs exactly once on start (inside its window) and never again", async () => {
    const d = await start();
    fake.setDefault(text("Catching up."));
    const dueAt = inMs(3000);
    expect((await hearth(["cron", "add", "--name", "Missed", "--at", dueAt, "--message", "m", "--deliver", "none"])).code).toBe(0);
    expect(await d.stop()).toBe(0);
    await sleep(Date.parse(dueAt) - Date.now() + 800);
    expect(fake.requests).toHaveLength(0);

    const again = await start();
    await fake.waitForRequests(1);
    await waitFor("the run's record", () => runs().some((r) => r.status === "ok"));
    expect(runs().map((r) => [r.status, "trigger" in r ? r.trigger : undefined])).toEqual([
      ["queued", "catch-up"],
      ["started", undefined],
      ["ok", "catch-up"],
    ]);
    expect(await again.stop()).toBe(0);

    await start();
    await sleep(1000);
    expect(fake.requests).toHaveLength(1);
    expect(runs().filter((r) => r.status === "queued")).toHaveLength(1);
  });

  it("a job missed by more than its catch-up window is recorded as skipped and does not run", async () => {
    const d = await start();
    const dueAt = inMs(3000);
    expect((await hearth(["cron", "add", "--name", "Too late", "--at", dueAt, "--message", "m", "--catch-up", "1s"])).code).toBe(0);
    await d.stop();
    await sleep(Date.parse(dueAt) - Date.now() + 2500);

    await start();
    await waitFor("the skip record", () => runs().length === 1);
    await sleep(500);
    expect(fake.requests).toHaveLength(0);
    expect(runs()[0]).toMatchObject({ status: "skipped", scheduledAt: new Date(dueAt).toISOString(), reason: expect.stringContaining("missed while Hearth was not running") });
    expect((await list())[0]).toMatchObject({ lastStatus: "skipped", nextRunAt: null });
  });

  it("a job the model creates through cron_add shows in hearth cron list", async () => {
    await start();
    fake.enqueue(toolCall("cron_add", { name: "Weekly review", cron: "0 17 * * 5", message: "Walk me through my week" }), text("Scheduled for Fridays at 17:00."));
    const chat = await hearth(["chat", "-m", "every friday at 5pm, walk me through my week"]);
    expect(chat.code, chat.stderr).toBe(0);
    const human = await hearth(["cron", "list"]);
    expect(human.code).toBe(0);
    expect(human.stdout).toContain("Weekly review");
    expect(human.stdout).toContain('cron "0 17 * * 5" (UTC)');
    expect(await list()).toEqual([expect.objectContaining({ name: "Weekly review", deliver: "origin (cli)", prompt: "Walk me through my week", nextRunAt: expect.stringMatching(/T17:00:00.000Z$/) })]);
  });

  it("a job whose run fails notifies the owner on Telegram and is recorded in runs.jsonl", async () => {
    await start();
    fake.enqueue(text("Hi Ann!"));
    await emu.user({ userId: OWNER, firstName: "Ann" }).send("hi");
    await waitFor("the greeting", () => emu.botMessages(OWNER)[0]?.text === "Hi Ann!");

    fake.enqueue({ type: "http_error", status: 401, message: "invalid x-api-key" });
    expect((await hearth(["cron", "add", "--name", "Briefing", "--at", inMs(2500), "--message", "Brief me", "--session", "isolated"])).code).toBe(0);
    const msgs = await emu.waitForBotMessages(OWNER, 2, 15_000);
    expect(msgs[1]!.text).toMatch(/Scheduled job "Briefing" \([0-9a-f]{8}\) failed .*HTTP 401/);
    await waitFor("the error record", () => runs().some((r) => r.status === "error"));
    expect(runs().find((r) => r.status === "error")).toMatchObject({ error: expect.stringContaining("HTTP 401"), notified: true });
    expect((await list())[0]).toMatchObject({ lastStatus: "error", lastError: expect.stringContaining("HTTP 401") });
  });

  it("hearth cron run needs the daemon; with it, the job runs now", async () => {
    const add = await hearth(["cron", "add", "--name", "Manual", "--every", "1d", "--message", "Say hi", "--deliver", `telegram:${OWNER}`]);
    expect(add.code, add.stderr).toBe(0);
    expect(add.stdout).toContain("Hearth is not running");
    const [job] = await list();
    const offline = await hearth(["cron", "run", job!.id]);
    expect(offline.code).toBe(1);
    expect(offline.stderr).toMatch(/not running.*hearth start/);

    await start();
    fake.enqueue(text("Hi from a manual run."));
    const r = await hearth(["cron", "run", job!.id]);
    expect(r.code, r.stderr).toBe(0);
    await waitFor("the manual run's message", () => emu.botMessages(OWNER)[0]?.text === "Hi from a manual run.");
    await waitFor("the record", () => runs().some((x) => x.status === "ok"));
    expect(runs()[0]).toMatchObject({ status: "queued", trigger: "manual" });
    expect((await hearth(["cron", "rm", job!.id])).code).toBe(0);
    expect(await list()).toEqual([]);
  });
});

describe("bad input and hand edits (daemon e2e)", () => {
  it("a bad expression, time zone or past --at is refused with exit 2 and jobs.json stays unchanged", async () => {
    await start();
    expect((await hearth(["cron", "add", "--name", "Keep", "--every", "1h", "--message", "m"])).code).toBe(0);
    const before = readFileSync(jobsFile(), "utf8");
    const cases: Array<[string[], RegExp]> = [
      [["--cron", "0 25 * * *"], /--cron "0 25 \* \* \*" is not a cron expression .*use 5 fields/],
      [["--cron", "0 9 * * *", "--tz", "Europe/Atlantis"], /--tz "Europe\/Atlantis" is not a time zone: use an IANA time zone such as/],
      [["--at", "2020-01-01T09:00:00Z"], /--at 2020-01-01T09:00:00.000Z is in the past .*give a time in the future/],
      [["--every", "1s"], /the shortest interval is 10s/],
      [["--every", "1h", "--deliver", "slack:x"], /--deliver must be origin, owner, none, telegram:<chatId>, discord:<channelId>, slack:<channelId>, matrix:<roomId>, signal:<number or groupId>, whatsapp:<number or groupId> or email:<address>/],
    ];
    for (const [flags, message] of cases) {
      const r = await hearth(["cron", "add", "--name", "Bad", ...flags, "--message", "m"]);
      expect(r.code, r.stderr).toBe(2);
      expect(r.stderr).toMatch(message);
    }
    expect(readFileSync(jobsFile(), "utf8")).toBe(before);
    expect(await list()).toHaveLength(1);
  });

  it("an invalid hand edit is rejected with a log line naming the problem; the old jobs stay; a fix is picked up", async () => {
    const d = await start();
    expect((await hearth(["cron", "add", "--name", "Old", "--every", "1h", "--message", "m"])).code).toBe(0);
    const data = JSON.parse(readFileSync(jobsFile(), "utf8"));
    const old = data.jobs[0];
    writeFileSync(jobsFile(), JSON.stringify({ jobs: [{ ...old, schedule: { kind: "every", every: "sometimes" } }] }, null, 2));
    await waitFor("the log line", () => d.log().includes("cron.jobs_invalid"));
    const line = d.log().split("\n").find((l) => l.includes("cron.jobs_invalid"))!;
    expect(JSON.parse(line).problem).toMatch(/expected a duration.*at jobs\[0\]\.schedule\.every/);
    expect(await list()).toEqual([expect.objectContaining({ id: old.id, scheduleText: "every 1h" })]);

    writeFileSync(jobsFile(), JSON.stringify({ jobs: [{ ...old, name: "Renamed by hand", schedule: { kind: "every", every: "2h" } }] }, null, 2));
    await waitFor("the fix to be picked up", async () => (await list())[0]?.name === "Renamed by hand");
    expect((await list())[0]).toMatchObject({ scheduleText: "every 2h" });
  });
});
