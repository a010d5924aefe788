// The Discord channel against the fake Discord: real discord.js, real sockets, no gateway.
// Covers connecting and failing to, the connection state through a drop, messages as the
// gateway receives them, and replies as Discord sees them (REST calls, pacing, pings).
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import type { Channel, InboundMessage } from "../../../src/channels/channel.ts";
import { createDiscordChannel, type DiscordChannelDeps, type DiscordChannelOptions } from "../../../src/channels/discord/channel.ts";
import { createLogger } from "../../../src/process/log.ts";
import { fencesBalanced, longMarkdownAnswer, rejoinMessages, startFakeDiscord, type FakeDiscord, type FakeUser } from "../../support/fake-discord.ts";

interface LogLine {
  level: string;
  event: string;
  [field: string]: unknown;
}

let fake: FakeDiscord;
let channel: Channel | undefined;
let lines: LogLine[];
let received: InboundMessage[];
let owner: FakeUser;
let alice: FakeUser;
let world: { guild: string; general: string; thread: string; ownerDm: string; aliceDm: string };

beforeEach(async () => {
  fake = await startFakeDiscord();
  channel = undefined;
  lines = [];
  received = [];
  owner = fake.addUser("owner");
  alice = fake.addUser("alice");
  const guild = fake.addGuild("Lab").id;
  const general = fake.addTextChannel(guild, "general").id;
  world = { guild, general, thread: fake.addThread(general, "plans").id, ownerDm: fake.dmChannel(owner), aliceDm: fake.dmChannel(alice) };
});
afterEach(async () => {
  await channel?.stop();
  await fake.close();
});

function makeChannel(options: Partial<DiscordChannelOptions> = {}, deps: Partial<DiscordChannelDeps> = {}): Channel {
  const log = createLogger({ level: "debug", sink: { write: (l) => void lines.push(JSON.parse(l) as LogLine), isTTY: false } });
  channel = createDiscordChannel({ token: fake.token, apiBase: fake.apiBase, ownerIds: [owner.id], namePattern: null, ...options }, { log, env: {}, ...deps });
  return channel;
}

async function started(options: Partial<DiscordChannelOptions> = {}): Promise<Channel> {
  const ch = makeChannel(options);
  await ch.start((m) => void received.push(m));
  return ch;
}

const stateLines = () => lines.filter((l) => l.event === "discord.state").map((l) => l.state);
const messageCalls = () => fake.calls.filter((c) => /^\/channels\/\d+\/messages(\/\d+)?$/.test(c.path));
const sleep = (ms: number) => new Promise<void>((r) => setTimeout(r, ms));

/** Sends a user message through the fake and waits until the channel has handed it on. */
async function deliver(opts: Parameters<FakeDiscord["sendMessage"]>[0]): Promise<InboundMessage> {
  const sent = fake.sendMessage(opts);
  return fake.waitFor(`message ${sent.id} to reach the gateway`, () => received.find((m) => m.id === sent.id));
}

describe("connecting", () => {
  it("start resolves once READY, with the status running and one state line per change", async () => {
    const ch = await started();
    expect(ch.status()).toEqual({ state: "running", detail: "as Hearth · 1 guild" });
    expect(stateLines()).toEqual(["starting", "running"]);
    expect(fake.connected()).toBe(true);
    expect(fake.calls[0]).toMatchObject({ method: "GET", path: "/gateway/bot", authorized: true });
  });

  it("takes the token from DISCORD_BOT_TOKEN when the config has none", async () => {
    const ch = makeChannel({ token: undefined }, { env: { DISCORD_BOT_TOKEN: fake.token } });
    await ch.start(() => {});
    expect(ch.status().state).toBe("running");
  });

  it("a bad token (REST 401) fails start with a reason that says what to fix, never the token", async () => {
    const ch = makeChannel({ token: "not-the-right-token" });
    const error = await ch.start(() => {}).then(() => null, (e: Error) => e);
    expect(error?.message).toBe(
      "Discord rejected the bot token (401 Unauthorized): set a valid DISCORD_BOT_TOKEN or channels.discord.token (Developer Portal → your app → Bot → Reset Token)",
    );
    expect(error?.message).not.toContain("not-the-right-token");
    expect(ch.status()).toEqual({ state: "failed", reason: error!.message });
    expect(stateLines()).toEqual(["starting", "failed"]);
    expect(fake.gateway.connections).toBe(0);
  });

  it("a token refused by the gateway (close 4004) fails start the same way", async () => {
    const strict = await startFakeDiscord({ rejectTokensAt: "gateway" });
    try {
      const ch = makeChannel({ token: "revoked-token", apiBase: strict.apiBase });
      await expect(ch.start(() => {})).rejects.toThrow(/^Discord rejected the bot token \(the gateway closed with 4004 Authentication failed\)/);
      expect(strict.gateway.identifies).toHaveLength(1);
      expect(ch.status().state).toBe("failed");
    } finally {
      await strict.close();
    }
  });

  it("no token at all fails start without a connection attempt", async () => {
    const ch = makeChannel({ token: undefined });
    await expect(ch.start(() => {})).rejects.toThrow("no bot token: set DISCORD_BOT_TOKEN or channels.discord.token");
    expect(fake.calls).toHaveLength(0);
  });

  it("an unreachable API fails start with the address", async () => {
    const closed = await listen(createServer());
    const base = `http://127.0.0.1:${(closed.address() as AddressInfo).port}/api`;
    await new Promise<void>((r) => closed.close(() => r()));
    const ch = makeChannel({ apiBase: base });
    await expect(ch.start(() => {})).rejects.toThrow(`could not connect to Discord at ${base}`);
  });

  it("a Discord that never answers fails start after the connect timeout", async () => {
    const hanging = await listen(createServer(() => {}));
    try {
      const ch = makeChannel({ apiBase: `http://127.0.0.1:${(hanging.address() as AddressInfo).port}/api` }, { connectTimeoutMs: 300 });
      const began = Date.now();
      await expect(ch.start(() => {})).rejects.toThrow(/did not answer within/);
      expect(Date.now() - began).toBeLessThan(2000);
      expect(ch.status().state).toBe("failed");
    } finally {
      hanging.closeAllConnections();
      await new Promise<void>((r) => hanging.close(() => r()));
    }
  });

  it("survives a dropped connection: reconnecting, then running again, and nothing sent meanwhile is lost", async () => {
    const ch = await started();
    fake.disconnect("drop");
    await fake.waitFor("reconnecting", () => ch.status().state === "reconnecting");
    expect(ch.status()).toEqual({ state: "reconnecting", detail: "lost the connection to Discord; reconnecting" });
    const away = fake.sendMessage({ channelId: world.general, author: alice, content: "sent while you were away" });
    await fake.waitFor("running again", () => ch.status().state === "running");
    await fake.waitFor("the replayed message", () => received.find((m) => m.id === away.id));
    expect(stateLines()).toEqual(["starting", "running", "reconnecting", "running"]);
    expect(lines.find((l) => l.event === "discord.state" && l.state === "reconnecting")?.level).toBe("warn");
    expect(received.filter((m) => m.id === away.id)).toHaveLength(1);
    // and replies still work
    await ch.openReply(received.at(-1)!).finish("welcome back");
    expect(fake.botMessages(world.general).map((m) => m.content)).toEqual(["welcome back"]);
  });

  it("a token revoked while running: the resume is refused (4004) and the status says failed, why and what to do", async () => {
    const ch = await started();
    fake.revokeToken();
    fake.disconnect("drop");
    await fake.waitFor("failed", () => ch.status().state === "failed");
    expect(ch.status()).toEqual({ state: "failed", reason: expect.stringMatching(/^Discord rejected the bot token \(the gateway closed with 4004/) });
    expect(stateLines()).toEqual(["starting", "running", "reconnecting", "failed"]);
    expect(lines.find((l) => l.event === "discord.state" && l.state === "failed")?.level).toBe("error");
  });

  it("stop during a start that waits for the gateway ends the start at once", async () => {
    fake.pauseGateway();
    const ch = makeChannel();
    const starting = ch.start(() => {}).then(() => null, (e: Error) => e);
    await fake.waitFor("the gateway URL request", () => fake.calls.length > 0);
    await sleep(100);
    await ch.stop();
    expect((await starting)?.message).toMatch(/stopped while connecting/);
    expect(ch.status()).toEqual({ state: "stopped" });
    // The socket that was still connecting is gone too: when Discord lets it through, nothing stays open.
    fake.resumeGateway();
    await sleep(300);
    expect(fake.openGatewaySockets()).toBe(0);
  });

  it("stop closes the connection cleanly, reports stopped and may be called twice", async () => {
    const ch = await started();
    await ch.stop();
    await ch.stop();
    expect(ch.status()).toEqual({ state: "stopped" });
    await fake.waitFor("the close", () => fake.gateway.clientCloses.length === 1);
    expect(fake.gateway.clientCloses).toEqual([1000]);
    // destroying the client is not mistaken for a dropped connection
    expect(stateLines()).toEqual(["starting", "running", "stopped"]);
  });
});

describe("receiving", () => {
  it("a guild message: chat is the channel, the guild is a scope id, not addressed without a mention", async () => {
    await started();
    const m = await deliver({ channelId: world.general, author: alice, content: "lunch?" });
    expect(m).toMatchObject({
      channel: "discord",
      chat: { id: world.general, type: "group", scopeIds: [world.guild], title: "Lab › #general" },
      sender: { id: alice.id, name: "alice", isOwner: false },
      text: "lunch?",
      addressed: false,
    });
    expect(m.chat.threadId).toBeUndefined();
  });

  it("a mention addresses the bot and is removed from the text, so '@Hearth /stop' is a command", async () => {
    await started();
    const m = await deliver({ channelId: world.general, author: alice, content: "/stop", mentionsBot: true });
    expect(m).toMatchObject({ text: "/stop", addressed: true });
  });

  it("role mentions and @everyone do not address the bot", async () => {
    await started();
    const role = fake.addRole(world.guild, "Hearth");
    const m = await deliver({ channelId: world.general, author: alice, content: `<@&${role.id}> @everyone hi` });
    expect(m.addressed).toBe(false);
    expect(m.text).toBe(`<@&${role.id}> @everyone hi`);
  });

  it("a reply to the bot's message addresses it, without a ping", async () => {
    const ch = await started();
    const first = await deliver({ channelId: world.general, author: alice, content: "hi", mentionsBot: true });
    await ch.openReply(first).finish("Hello!");
    const botMessage = fake.botMessages(world.general)[0]!;
    const m = await deliver({ channelId: world.general, author: alice, content: "thanks", replyTo: botMessage.id, replyPing: false });
    expect(m).toMatchObject({ addressed: true, replyTo: { id: botMessage.id, fromBot: true, text: "Hello!" } });
  });

  it("the name pattern addresses the bot", async () => {
    await started({ namePattern: "^hearth\\b" });
    const m = await deliver({ channelId: world.general, author: alice, content: "Hearth, what's for lunch?" });
    expect(m.addressed).toBe(true);
  });

  it("a thread message: chat is the parent channel, threadId the thread", async () => {
    await started();
    const m = await deliver({ channelId: world.thread, author: alice, content: "in the thread", mentionsBot: true });
    expect(m.chat).toEqual({ id: world.general, type: "group", threadId: world.thread, scopeIds: [world.guild, world.thread], title: "Lab › #general › plans" });
    expect(m.raw).toEqual({ channelId: world.thread, messageId: m.id });
  });

  it("a DM (an uncached DM channel) arrives addressed, from the owner when the owner writes", async () => {
    await started();
    const m = await deliver({ channelId: world.ownerDm, author: owner, content: "hi me" });
    expect(m).toMatchObject({ chat: { id: world.ownerDm, type: "dm" }, sender: { id: owner.id, isOwner: true }, addressed: true, text: "hi me" });
  });

  it("ignores other bots and the bot's own echoed messages", async () => {
    const ch = await started();
    const robot = fake.addUser("robot", { bot: true });
    fake.sendMessage({ channelId: world.general, author: robot, content: "beep", mentionsBot: true });
    const last = await deliver({ channelId: world.general, author: alice, content: "hi", mentionsBot: true });
    await ch.openReply(last).finish("hello alice");
    const marker = await deliver({ channelId: world.general, author: alice, content: "marker" });
    expect(received.map((m) => m.text)).toEqual(["hi", "marker"]);
    expect(marker.addressed).toBe(false);
    expect(lines.filter((l) => l.event === "discord.ignored").map((l) => l.reason)).toEqual(["from a bot", "own message"]);
  });
});

describe("replying", () => {
  it("streams: typing first, a reply to the message, throttled merged edits with tool lines, the final text in place", async () => {
    const ch = await started();
    const m = await deliver({ channelId: world.general, author: alice, content: "count to ten", mentionsBot: true });
    const sink = ch.openReply(m);
    const began = Date.now();
    for (let i = 1; i <= 10; i++) {
      sink.textDelta(`${i} `);
      // the tool runs for 1.8 s: longer than the edit interval, so a preview shows it running
      if (i === 2) sink.toolStarted("exec", "ls -la");
      if (i === 8) sink.toolFinished("exec", true);
      await sleep(300);
    }
    await sink.finish("1 2 3 4 5 6 7 8 9 10 — **done**");
    const elapsed = Date.now() - began;

    const calls = messageCalls();
    const typing = fake.callsTo("POST", /\/typing$/);
    expect(typing.length).toBeGreaterThanOrEqual(1);
    expect(typing[0]!.at).toBeLessThanOrEqual(calls[0]!.at);
    // one message, created as a reply that pings no one, then edited in place
    expect(calls[0]).toMatchObject({ method: "POST", body: { message_reference: { message_id: m.id, fail_if_not_exists: false }, allowed_mentions: { parse: [], replied_user: false } } });
    expect(calls.slice(1).every((c) => c.method === "PATCH")).toBe(true);
    const bot = fake.botMessages(world.general);
    expect(bot).toHaveLength(1);
    expect(bot[0]!.replyTo).toBe(m.id);
    expect(bot[0]!.content).toBe("1 2 3 4 5 6 7 8 9 10 — **done**");
    // previews at most every 1.2 s (the final text does not wait), so merged rather than one per delta
    const previews = calls.slice(0, -1);
    for (let i = 1; i < previews.length; i++) expect(previews[i]!.at - previews[i - 1]!.at).toBeGreaterThanOrEqual(1150);
    expect(previews.length).toBeLessThanOrEqual(Math.ceil(elapsed / 1200) + 1);
    expect(bot[0]!.history.some((h) => h.includes("⏳ exec: ls -la"))).toBe(true);
    expect(bot[0]!.history.at(-1)).not.toContain("exec");
  }, 15_000);

  it("refreshes typing while the run waits, and stops once text shows", async () => {
    const ch = await started();
    const m = await deliver({ channelId: world.aliceDm, author: alice, content: "think hard" });
    const sink = ch.openReply(m);
    await sleep(8600);
    expect(fake.callsTo("POST", /\/typing$/)).toHaveLength(2);
    sink.textDelta("Thought about it.");
    await sink.finish("Thought about it.");
    await sleep(200);
    expect(fake.callsTo("POST", /\/typing$/)).toHaveLength(2);
  }, 15_000);

  it("a 4,500-character answer is three messages under 2,000 with every code block closed and reopened", async () => {
    const ch = await started();
    const m = await deliver({ channelId: world.general, author: alice, content: "long one", mentionsBot: true });
    const answer = longMarkdownAnswer();
    expect(answer.length).toBeGreaterThanOrEqual(4500);
    await ch.openReply(m).finish(answer);
    const bot = fake.botMessages(world.general);
    expect(bot).toHaveLength(3);
    for (const msg of bot) {
      expect(msg.content.length).toBeLessThanOrEqual(2000);
      expect(fencesBalanced(msg.content)).toBe(true);
    }
    expect(bot[0]!.replyTo).toBe(m.id);
    expect(bot.slice(1).every((b) => b.replyTo === undefined)).toBe(true);
    expect(rejoinMessages(bot.map((b) => b.content))).toBe(answer.replace(/\s+/g, " "));
  });

  it("the bot's text pings no one: not @everyone, not users, not roles", async () => {
    const ch = await started();
    const role = fake.addRole(world.guild, "mods");
    const m = await deliver({ channelId: world.general, author: alice, content: "say it", mentionsBot: true });
    await ch.openReply(m).finish(`@everyone <@${alice.id}> <@&${role.id}> hello`);
    const [msg] = fake.botMessages(world.general);
    expect(msg!.content).toContain("@everyone");
    expect(msg!.pings).toEqual([]);
  });

  it("delivers exactly once when a create's response is lost and retried", async () => {
    const ch = await started();
    const m = await deliver({ channelId: world.general, author: alice, content: "hi", mentionsBot: true });
    fake.injectFailure({ method: "POST", path: /\/messages$/, status: 502, afterEffect: true, times: 2 });
    await ch.openReply(m).finish("only once, please");
    expect(fake.callsTo("POST", /\/messages$/).map((c) => c.status)).toEqual([502, 502, 200]);
    expect(fake.botMessages(world.general).map((b) => b.content)).toEqual(["only once, please"]);
  });

  it("answers from ids alone: a stored message replayed into a fresh channel (cold cache)", async () => {
    const first = await started();
    const m = await deliver({ channelId: world.thread, author: alice, content: "remember me", mentionsBot: true });
    await first.stop();
    const stored = JSON.parse(JSON.stringify(m)) as InboundMessage;
    const fresh = await started();
    const before = fake.calls.length;
    await fresh.openReply(stored).finish("answered after a restart");
    const [msg] = fake.botMessages(world.thread);
    expect(msg).toMatchObject({ content: "answered after a restart", replyTo: m.id });
    expect(fake.calls.slice(before).every((c) => c.method !== "GET")).toBe(true);
  });

  it("send: a proactive message to a chat or a thread, split at 2,000, no reply reference, no typing", async () => {
    const ch = await started();
    await ch.send({ channel: "discord", chatId: world.general, threadId: world.thread }, "in the thread");
    await ch.send({ channel: "discord", chatId: world.ownerDm }, `${"a".repeat(1500)}\n\n${"b".repeat(1500)}`);
    expect(fake.botMessages(world.thread).map((b) => b.content)).toEqual(["in the thread"]);
    expect(fake.botMessages(world.ownerDm).map((b) => b.content)).toEqual(["a".repeat(1500), "b".repeat(1500)]);
    expect(fake.callsTo("POST", /\/typing$/)).toHaveLength(0);
    expect(fake.botMessages().every((b) => b.replyTo === undefined)).toBe(true);
  });

  it("send rejects when the channel is not running", async () => {
    const ch = makeChannel();
    await expect(ch.send({ channel: "discord", chatId: world.general }, "hello")).rejects.toThrow("the Discord channel is not running");
    expect(fake.calls).toHaveLength(0);
  });
});

function listen(server: Server): Promise<Server> {
  return new Promise((resolve, reject) => {
    server.once("error", reject);
    server.listen(0, "127.0.0.1", () => resolve(server));
  });
}
