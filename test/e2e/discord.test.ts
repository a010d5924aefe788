// Discord end to end: the real daemon (`hearth start`) with the Discord channel on discord.js,
// against the fake Discord (REST + gateway) and the fake model. Everything is observed at the
// edges: what Discord received, what the model was asked, what `hearth` prints.
import { spawn } from "node:child_process";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { hearthBin, repoRoot } from "../support/cli-process.ts";
import { cleanupDaemon, inboxSettled, makeHome, startDaemon, waitFor, type Daemon } from "../support/daemon.ts";
import { fencesBalanced, longMarkdownAnswer, rejoinMessages, startFakeDiscord, type FakeDiscord, type FakeMessage, type FakeUser } from "../support/fake-discord.ts";
import { requestText, startFakeModel, text, type FakeModel } from "../support/fake-model.ts";
import { startTelegramEmulator } from "../support/telegram-emulator.ts";

let model: FakeModel;
let discord: FakeDiscord;
let daemons: Daemon[];
let home: string | undefined;
let owner: FakeUser;
let alice: FakeUser;
let world: { guild: string; general: string; thread: string; otherGuild: string; otherChannel: string; ownerDm: string };

beforeEach(async () => {
  model = await startFakeModel();
  discord = await startFakeDiscord();
  daemons = [];
  home = undefined;
  owner = discord.addUser("owner");
  alice = discord.addUser("alice");
  const guild = discord.addGuild("Lab").id;
  const general = discord.addTextChannel(guild, "general").id;
  const otherGuild = discord.addGuild("Elsewhere").id;
  world = {
    guild,
    general,
    thread: discord.addThread(general, "plans").id,
    otherGuild,
    otherChannel: discord.addTextChannel(otherGuild, "random").id,
    ownerDm: discord.dmChannel(owner),
  };
});
afterEach(async () => {
  for (const d of daemons) await cleanupDaemon(d, undefined).catch(() => {});
  await cleanupDaemon(undefined, home);
  await discord.close();
  await model.close();
});

const discordConfig = () => ({ apiBase: discord.apiBase, ownerIds: [owner.id], guilds: { policy: "allowlist", allow: [world.guild], requireMention: true } });

async function start(token = discord.token, extra: { config?: object; env?: Record<string, string> } = {}): Promise<Daemon> {
  home ??= makeHome({ channels: { discord: discordConfig(), ...extra.config } });
  const d = await startDaemon(home, { DISCORD_BOT_TOKEN: token, ANTHROPIC_API_KEY: "test-key", ANTHROPIC_BASE_URL: model.url, ...extra.env });
  daemons.push(d);
  return d;
}

interface StatusJson {
  channels: Array<{ id: string; state: string; reason?: string; detail?: string }>;
  sessions: Array<{ key: string; scope: string }>;
}

async function status(d: Daemon): Promise<StatusJson> {
  const r = await d.hearth(["status", "--json"]);
  expect(r.code).toBe(0);
  return JSON.parse(r.stdout) as StatusJson;
}

const discordStatus = async (d: Daemon) => (await status(d)).channels.find((c) => c.id === "discord");

/** The bot's final reply in a channel: waits until a bot message there has `content`. */
function botReply(channelId: string, content: string): Promise<FakeMessage> {
  return discord.waitFor(`the bot to answer "${content.slice(0, 40)}" in ${channelId}`, () => discord.botMessages(channelId).find((m) => m.content === content), 15_000);
}

describe("Discord (daemon e2e)", () => {
  it("one main session across channels: a fact told on the CLI is known in the owner's Discord DM, and that answer goes to Discord only", async () => {
    const d = await start();
    model.enqueue(text("Noted: your locker code is 4711."), text("Your locker code is 4711."));
    const told = await d.hearth(["chat", "-m", "Remember: my locker code is 4711."]);
    expect(told.code).toBe(0);
    expect(told.stdout.trim()).toBe("Noted: your locker code is 4711.");

    // A terminal stays connected while the owner asks on Discord: it must not get that answer.
    const terminal = spawn(process.execPath, [hearthBin, "chat"], { env: d.env, cwd: repoRoot, stdio: ["pipe", "pipe", "pipe"] });
    let terminalOut = "";
    terminal.stdout.on("data", (b: Buffer) => (terminalOut += b.toString()));
    const terminalExit = new Promise((resolve) => terminal.on("exit", resolve));
    try {
      // The status request is a control-socket client itself: the terminal makes it two.
      await waitFor("the terminal to connect", async () => (await status(d)).channels.find((c) => c.id === "cli")?.detail === "2 client(s)", 10_000);
      const question = discord.sendMessage({ channelId: world.ownerDm, author: owner, content: "What's my locker code?" });
      const answer = await botReply(world.ownerDm, "Your locker code is 4711.");

      expect(answer.replyTo).toBe(question.id);
      expect(model.requests).toHaveLength(2);
      expect(requestText(model.requests[1]!)).toContain("Remember: my locker code is 4711.");
      expect(requestText(model.requests[1]!)).toContain("Noted: your locker code is 4711.");
      expect((await status(d)).sessions.map((s) => s.key)).toEqual(["main"]);
    } finally {
      terminal.stdin.end();
      await terminalExit;
    }
    expect(terminalOut).not.toContain("4711");
  });

  it("guilds: no mention → no model request; a mention → a reply to that message; a thread → its own session; other guilds → nothing", async () => {
    const d = await start();
    model.enqueue(text("Pong from general."), text("Pong from the thread."));

    discord.sendMessage({ channelId: world.general, author: alice, content: "anyone around for lunch?" });
    discord.sendMessage({ channelId: world.otherChannel, author: alice, content: "hello from a guild that is not allowed", mentionsBot: true });
    const ping = discord.sendMessage({ channelId: world.general, author: alice, content: "ping", mentionsBot: true });
    const pong = await botReply(world.general, "Pong from general.");
    expect(pong.replyTo).toBe(ping.id);
    expect(pong.pings).toEqual([]);
    expect(model.requests).toHaveLength(1);
    // The unaddressed message reached the model only as context of the addressed one.
    const first = requestText(model.requests[0]!);
    expect(first).toMatch(/Earlier in this chat \(not addressed to you\):\n.*alice: anyone around for lunch\?/);
    expect(first).not.toContain("not allowed");

    const inThread = discord.sendMessage({ channelId: world.thread, author: alice, content: "ping in the thread", mentionsBot: true });
    const threadPong = await botReply(world.thread, "Pong from the thread.");
    expect(threadPong.replyTo).toBe(inThread.id);
    expect(model.requests).toHaveLength(2);
    expect(requestText(model.requests[1]!)).not.toContain("Pong from general.");

    const keys = (await status(d)).sessions.map((s) => s.key).sort();
    expect(keys).toEqual([`group:discord:${world.general}`, `group:discord:${world.general}:${world.thread}`].sort());
    expect(discord.botMessages(world.otherChannel)).toEqual([]);
    expect(model.requests).toHaveLength(2);
  });

  it("a 4,500-character answer streams into three messages, none over 2,000 characters, no broken code block", async () => {
    await start();
    const answer = longMarkdownAnswer();
    model.enqueue(text(answer, { chunkSize: 300, chunkDelayMs: 120 }));
    const ask = discord.sendMessage({ channelId: world.general, author: alice, content: "show me the code", mentionsBot: true });
    await discord.waitFor("three messages", () => {
      const msgs = discord.botMessages(world.general);
      return msgs.length === 3 && rejoinMessages(msgs.map((m) => m.content)) === answer.replace(/\s+/g, " ");
    }, 20_000);

    const msgs = discord.botMessages(world.general);
    expect(msgs[0]!.replyTo).toBe(ask.id);
    expect(msgs[0]!.history.length).toBeGreaterThan(1); // streamed: previews, then the final text
    for (const m of msgs) {
      expect(m.content.length).toBeLessThanOrEqual(2000);
      expect(fencesBalanced(m.content)).toBe(true);
      for (const version of m.history) expect(version.length).toBeLessThanOrEqual(2000);
    }
    expect(msgs[1]!.content.startsWith("```ts\n")).toBe(true);
    expect(msgs[2]!.content.startsWith("```ts\n")).toBe(true);
    expect(discord.calls.filter((c) => c.status >= 400)).toEqual([]);
  });

  it("an unknown DM sender gets a pairing code and costs no model request; once approved, a private session", async () => {
    const d = await start();
    const strangerDm = discord.dmChannel(alice);
    discord.sendMessage({ channelId: strangerDm, author: alice, content: "hi, who are you?" });
    const codeMessage = await discord.waitFor("the pairing code", () => discord.botMessages(strangerDm)[0], 15_000);
    const code = /Your pairing code: ([A-Z0-9]{8})/.exec(codeMessage.content)?.[1];
    expect(code).toBeDefined();
    expect(model.requests).toHaveLength(0);

    const list = await d.hearth(["pairing", "list"]);
    expect(list.stdout).toContain(`${code}  discord:${alice.id}  alice`);
    expect((await d.hearth(["pairing", "approve", code!])).code).toBe(0);

    model.enqueue(text("Hello alice!"));
    discord.sendMessage({ channelId: strangerDm, author: alice, content: "hello again" });
    await botReply(strangerDm, "Hello alice!");
    expect(model.requests).toHaveLength(1);
    expect((await status(d)).sessions.map((s) => s.key)).toEqual([`dm:discord:${alice.id}`]);
  });

  it("a bad token: Telegram and the CLI keep working, and `hearth status` shows Discord failed with the reason", async () => {
    const telegram = await startTelegramEmulator();
    try {
      const TELEGRAM_OWNER = 4242;
      const d = await start("definitely-not-the-token", {
        config: { telegram: { apiRoot: telegram.apiRoot, ownerIds: [String(TELEGRAM_OWNER)] } },
        env: { TELEGRAM_BOT_TOKEN: telegram.token },
      });
      model.enqueue(text("Still here."), text("Telegram still works."));
      const r = await d.hearth(["chat", "-m", "are you there?"]);
      expect(r.code).toBe(0);
      expect(r.stdout.trim()).toBe("Still here.");
      await telegram.user({ userId: TELEGRAM_OWNER, firstName: "Ann" }).send("and on Telegram?");
      await waitFor("the Telegram answer", () => telegram.botMessages(TELEGRAM_OWNER)[0]?.text === "Telegram still works.", 15_000);

      const channels = (await status(d)).channels;
      expect(channels.find((c) => c.id === "discord")).toMatchObject({ state: "failed", reason: expect.stringMatching(/^Discord rejected the bot token .*DISCORD_BOT_TOKEN/) });
      expect(channels.find((c) => c.id === "telegram")?.state).toBe("running");
      const human = await d.hearth(["status"]);
      expect(human.stdout).toMatch(/discord\s+not running: Discord rejected the bot token/);
      expect(d.log()).toMatch(/"event":"channel.failed".*"channel":"discord"/);
      expect(d.log()).not.toContain("definitely-not-the-token");
      expect(discord.gateway.connections).toBe(0);
    } finally {
      await telegram.stop();
    }
  });

  it("survives a lost connection: status shows reconnecting, then running, and the owner is still answered", async () => {
    const d = await start();
    expect(await discordStatus(d)).toMatchObject({ state: "running" });
    discord.pauseGateway();
    discord.disconnect("drop");
    await waitFor("discord to be reconnecting", async () => (await discordStatus(d))?.state === "reconnecting", 10_000);
    expect((await d.hearth(["status"])).stdout).toMatch(/discord\s+reconnecting: lost the connection to Discord/);

    model.enqueue(text("Back online."));
    const question = discord.sendMessage({ channelId: world.ownerDm, author: owner, content: "are you back?" });
    discord.resumeGateway();
    const answer = await botReply(world.ownerDm, "Back online.");
    expect(answer.replyTo).toBe(question.id);
    await waitFor("discord to be running", async () => (await discordStatus(d))?.state === "running", 10_000);
    expect(discord.gateway.resumes).toBe(1);
    expect(d.log()).toMatch(/"event":"discord.state".*"state":"reconnecting"/);
  });

  it("kill -9 mid-stream: after the restart the new answer replaces the stale preview in the same message", async () => {
    const first = await start();
    model.enqueue(text("A long first draft that the crash will cut short. ".repeat(4), { chunkSize: 4, chunkDelayMs: 60 }));
    const question = discord.sendMessage({ channelId: world.ownerDm, author: owner, content: "summarise the plan" });
    await waitFor("a preview edited at least once", () => (discord.botMessages(world.ownerDm)[0]?.history.length ?? 0) >= 2, 15_000);
    first.proc.kill("SIGKILL");
    await first.exited;
    const stale = discord.botMessages(world.ownerDm)[0]!;

    model.enqueue(text("The plan: ship on Friday."));
    await start();
    await botReply(world.ownerDm, "The plan: ship on Friday.");
    await waitFor("the message's outcome to be recorded", () => inboxSettled(home!));
    const msgs = discord.botMessages(world.ownerDm);
    expect(msgs.map((m) => m.content)).toEqual(["The plan: ship on Friday."]);
    expect(msgs[0]!.id).toBe(stale.id);
    expect(msgs[0]!.replyTo).toBe(question.id);
    expect(model.requests).toHaveLength(2);
  });

  it("a message whose run was cut by a crash is answered after the restart, from ids alone, exactly once", async () => {
    const first = await start();
    model.enqueue({ type: "hang" });
    const question = discord.sendMessage({ channelId: world.thread, author: alice, content: "what did we decide?", mentionsBot: true });
    await model.waitForRequests(1);
    first.proc.kill("SIGKILL");
    await first.exited;

    model.enqueue(text("We decided on Friday."));
    const second = await start();
    const answer = await botReply(world.thread, "We decided on Friday.");
    expect(answer.replyTo).toBe(question.id);
    expect(discord.botMessages(world.thread).filter((m) => m.content === "We decided on Friday.")).toHaveLength(1);

    // SIGTERM: the daemon closes the gateway connection cleanly and exits (no handle left open).
    expect(await second.stop()).toBe(0);
    expect(discord.gateway.clientCloses).toContain(1000);
  });
});
