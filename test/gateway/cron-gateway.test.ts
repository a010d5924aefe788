// The scheduler inside a real gateway (in process): the fake model at the network edge, a test
// channel for the chats. Jobs go through the lanes like messages; the cron tools obey scopes.
import { existsSync, mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { parseConfig } from "../../src/config/config.ts";
import { startGateway, type Gateway } from "../../src/gateway/gateway.ts";
import type { RunRecord } from "../../src/scheduler/run-log.ts";
import { gatewayOptions } from "../../src/gateway/setup.ts";
import { silentLogger } from "../../src/process/log.ts";
import { waitFor } from "../support/daemon.ts";
import { startFakeModel, text, toolCall, type FakeModel } from "../support/fake-model.ts";
import type { CliEvent } from "../../src/channels/terminal/channel.ts";
import { TestChannel } from "../support/test-channel.ts";

let fake: FakeModel;
let home: string;
let gateway: Gateway | undefined;
beforeEach(async () => {
  fake = await startFakeModel();
  home = mkdtempSync(join(tmpdir(), "hearth-cg-"));
});
afterEach(async () => {
  await gateway?.stop();
  gateway = undefined;
  await fake.close();
  rmSync(home, { recursive: true, force: true });
});

const OWNER_CHAT = "1";
const GROUP = "-100";

async function start(extra: Record<string, unknown> = {}): Promise<TestChannel> {
  const channel = new TestChannel();
  const config = parseConfig(
    { timezone: "UTC", heartbeat: { every: "0" }, channels: { telegram: { token: "t", ownerIds: ["1"], groups: { policy: "allowlist", allow: [GROUP], requireMention: false } } }, ...extra },
    { home, env: { ANTHROPIC_API_KEY: "k", ANTHROPIC_BASE_URL: fake.url } },
  );
  gateway = await startGateway({ ...gatewayOptions(home, config, silentLogger, { daemon: false }), channels: [channel], schedule: true });
  return channel;
}

const until = (what: string, check: () => boolean) => waitFor(what, check, 15_000);
const runs = (): RunRecord[] =>
  existsSync(join(home, "cron", "runs.jsonl"))
    ? readFileSync(join(home, "cron", "runs.jsonl"), "utf8").trim().split("\n").map((l) => JSON.parse(l) as RunRecord)
    : [];
// The owner's own words: an untainted run, so cron_add is not asked about (a tainted run's is).
const ownerSays = (c: TestChannel, t: string) => c.say({ chat: OWNER_CHAT, type: "dm", sender: "1", text: t, isOwner: true });
const inSeconds = (s: number) => new Date(Date.now() + s * 1000).toISOString();

describe("cron tools in a gateway", () => {
  it("a job the model creates with cron_add in the owner's chat is listed and delivers to that chat", async () => {
    const channel = await start();
    fake.enqueue(toolCall("cron_add", { name: "Water plants", every: "1d", message: "Remind me to water the plants" }), text("Done, daily."));
    const id = ownerSays(channel, "remind me daily to water the plants");
    await until("the answer", () => channel.replies.has(id));
    const results = JSON.stringify(fake.requests[1]!.body.messages);
    expect(results).toMatch(/Scheduled \\"Water plants\\" \(id [0-9a-f]{8}\): every 1d/);
    expect(gateway!.context.cron.list()).toEqual([expect.objectContaining({ name: "Water plants", deliver: `origin (telegram:${OWNER_CHAT})`, session: "main", nextRunAt: expect.any(String) })]);
    const onDisk = JSON.parse(readFileSync(join(home, "cron", "jobs.json"), "utf8"));
    expect(onDisk.jobs[0]).toMatchObject({ createdBy: "agent", delivery: { to: "origin", channel: "telegram", chatId: OWNER_CHAT } });
  });

  it("a shared-scope session cannot call cron_add: the tool layer refuses and no job exists", async () => {
    const channel = await start();
    fake.enqueue(toolCall("cron_add", { name: "Spam", every: "10s", message: "post spam", deliver: "telegram:-100" }), toolCall("cron_list", {}), text("I can't do that here."));
    const id = channel.say({ chat: GROUP, sender: "5", text: "schedule spam every 10 seconds" });
    await until("the group's answer", () => channel.replies.has(id));
    const messages = JSON.stringify(fake.requests.at(-1)!.body.messages);
    expect(messages).toContain("Refused: cron_add is only available in the owner's private chat");
    expect(messages).toContain("Refused: cron_list is only available in the owner's private chat");
    // The shared scope is not even offered the tools.
    expect(fake.requests[0]!.body.tools.map((t: { name: string }) => t.name)).not.toContain("cron_add");
    expect(gateway!.context.cron.list()).toEqual([]);
    expect(existsSync(join(home, "cron", "jobs.json"))).toBe(false);
  });
});

describe("jobs on lanes", () => {
  it("a job due while main is busy waits for the run in progress, then runs and is delivered", async () => {
    const channel = await start();
    fake.enqueue(text("Here is the long answer.", { headDelayMs: 2000 }), text("Take your pills."));
    const owner = ownerSays(channel, "a question that takes a while");
    await fake.waitForRequests(1);
    const job = gateway!.context.cron.add({ name: "Pills", at: inSeconds(0.3), message: "Remind me to take my pills" }, { createdBy: "cli" });
    await until("the job's delivery", () => (channel.replies.get(`send:${OWNER_CHAT}`) ?? []).includes("Take your pills."));
    expect(channel.replies.get(owner)).toEqual(["Here is the long answer."]);
    // The job's model call came after the busy run ended, in the main conversation.
    expect(fake.requests).toHaveLength(2);
    const jobRequest = JSON.stringify(fake.requests[1]!.body.messages);
    expect(jobRequest).toContain("Here is the long answer.");
    expect(jobRequest).toContain('Scheduled job \\"Pills\\"');
    await until("the run record", () => runs().some((r) => r.status === "ok"));
    expect(runs().map((r) => r.status)).toEqual(["queued", "started", "ok"]);
    expect(gateway!.context.cron.get(job.id)).toMatchObject({ lastStatus: "ok", lastDelivery: "delivered" });
  });

  it("a job whose model call fails writes an error record and notifies the owner on their last chat", async () => {
    const channel = await start();
    fake.enqueue(text("Hello!"));
    const hi = ownerSays(channel, "hi");
    await until("the greeting", () => channel.replies.has(hi));
    fake.enqueue({ type: "http_error", status: 401, message: "invalid x-api-key" });
    const job = gateway!.context.cron.add({ name: "Briefing", at: inSeconds(0.3), message: "Brief me", session: "isolated", deliver: "none" }, { createdBy: "cli" });
    await until("the failure notice", () => (channel.replies.get(`send:${OWNER_CHAT}`) ?? []).length === 1);
    expect(channel.replies.get(`send:${OWNER_CHAT}`)![0]).toMatch(/^⚠️ Scheduled job "Briefing" \([0-9a-f]{8}\) failed \(due .+\): The model API rejected the API key \(HTTP 401\)\. Set a valid key in ANTHROPIC_API_KEY/);
    await until("the error record", () => runs().some((r) => r.status === "error"));
    expect(runs().find((r) => r.status === "error")).toMatchObject({ jobId: job.id, notified: true, delivery: { status: "none" } });
    expect(gateway!.context.cron.get(job.id).lastStatus).toBe("error");
  });
});

describe("answers for the terminal", () => {
  // The owner has never written on Telegram here, so "owner" means the terminal.
  const okRecord = () => runs().find((r) => r.status === "ok") as Extract<RunRecord, { status: "ok" | "error" }> | undefined;

  it("with no chat open, an answer waits in the mailbox; the next listening client gets it once, labelled", async () => {
    await start();
    fake.enqueue(text("Stretch now."));
    const job = gateway!.context.cron.add({ name: "Stretch", at: inSeconds(0.2), message: "Tell me to stretch" }, { createdBy: "cli" });
    await until("the run record", () => okRecord() !== undefined);
    expect(okRecord()).toMatchObject({ delivery: { status: "mailbox", to: "cli" } });
    expect(gateway!.context.cron.get(job.id)).toMatchObject({ lastStatus: "ok", lastDelivery: "mailbox" });
    expect(gateway!.status().terminalMailbox).toBe(1);

    // A client that does not listen (`chat -m`, `status`) neither gets nor takes it.
    const quiet: CliEvent[] = [];
    gateway!.cli.attach((e) => quiet.push(e));
    const events: CliEvent[] = [];
    const client = gateway!.cli.attach((e) => events.push(e));
    const letters = gateway!.cli.listen(client);
    expect(letters).toEqual([{ from: `cron job "Stretch" (${job.id})`, at: expect.any(Number), when: expect.stringMatching(/^\d{4}-\d\d-\d\d \d\d:\d\d$/), text: "Stretch now." }]);
    expect(gateway!.cli.listen(client)).toEqual([]);
    expect(gateway!.status().terminalMailbox).toBe(0);
    expect(JSON.parse(readFileSync(join(home, "terminal-mailbox.json"), "utf8"))).toEqual({ version: 1, letters: [] });

    // While a chat listens, the next answer is shown there at once, and only there.
    fake.enqueue(text("Drink water."));
    gateway!.context.cron.add({ name: "Water", at: inSeconds(0.2), message: "Tell me to drink" }, { createdBy: "cli" });
    await until("the live notice", () => events.some((e) => e.type === "notice"));
    expect(events).toEqual([{ type: "notice", text: "Drink water." }]);
    expect(quiet).toEqual([]);
    await until("the second record", () => runs().filter((r) => r.status === "ok").length === 2);
    expect(runs().filter((r) => r.status === "ok").at(-1)).toMatchObject({ delivery: { status: "delivered", to: "cli" } });
  });

  it("cron.fallback takes a terminal answer to the owner's Telegram chat when no chat is open", async () => {
    const channel = await start({ cron: { fallback: "telegram" } });
    fake.enqueue(text("Stretch now."));
    gateway!.context.cron.add({ name: "Stretch", at: inSeconds(0.2), message: "Tell me to stretch" }, { createdBy: "cli" });
    await until("the fallback delivery", () => (channel.replies.get(`send:${OWNER_CHAT}`) ?? []).length === 1);
    expect(channel.replies.get(`send:${OWNER_CHAT}`)).toEqual(["Stretch now."]);
    await until("the run record", () => okRecord() !== undefined);
    expect(okRecord()).toMatchObject({ delivery: { status: "delivered", to: `telegram:${OWNER_CHAT}` } });
    expect(gateway!.status().terminalMailbox).toBe(0);
  });

  it("a fallback with no known chat (Discord, never written from) keeps the answer in the mailbox", async () => {
    await start({ cron: { fallback: "discord" } });
    fake.enqueue(text("Stretch now."));
    gateway!.context.cron.add({ name: "Stretch", at: inSeconds(0.2), message: "Tell me to stretch" }, { createdBy: "cli" });
    await until("the run record", () => okRecord() !== undefined);
    expect(okRecord()).toMatchObject({ delivery: { status: "mailbox", to: "cli" } });
    expect(gateway!.status().terminalMailbox).toBe(1);
  });

  it("keeps only the last 50 letters, and they survive a restart", async () => {
    await start();
    for (let i = 1; i <= 52; i++) await gateway!.context.channels.send({ channel: "cli", chatId: "cli" }, `note ${i}`, { from: "Hearth" });
    await gateway!.stop();
    gateway = undefined;
    await start();
    expect(gateway!.status().terminalMailbox).toBe(50);
    const client = gateway!.cli.attach(() => {});
    const letters = gateway!.cli.listen(client);
    expect(letters.map((l) => l.text)).toEqual(Array.from({ length: 50 }, (_, i) => `note ${i + 3}`));
  });
});
