// The fake Discord is only useful if real discord.js accepts it: a bare Client logs in, sees
// guild, thread and DM messages, replies, survives a dropped connection, and fails on a bad token.
import { Client, Events, GatewayIntentBits, Partials, type Message } from "discord.js";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { Intent, startFakeDiscord, type FakeDiscord } from "./fake-discord.ts";

let fake: FakeDiscord;
let client: Client | undefined;

beforeEach(async () => {
  fake = await startFakeDiscord();
  client = undefined;
});
afterEach(async () => {
  await client?.destroy();
  await fake.close();
});

const allIntents = [GatewayIntentBits.Guilds, GatewayIntentBits.GuildMessages, GatewayIntentBits.MessageContent, GatewayIntentBits.DirectMessages];

/** A client logged in to the fake and READY (all guilds received); its messages are collected. */
async function login(intents = allIntents): Promise<{ client: Client; seen: Message[] }> {
  const c = new Client({ intents, partials: [Partials.Channel], rest: { api: fake.apiBase } });
  client = c;
  const seen: Message[] = [];
  c.on(Events.MessageCreate, (m) => void seen.push(m));
  const ready = new Promise<void>((resolve) => c.once(Events.ClientReady, () => resolve()));
  await c.login(fake.token);
  await ready;
  return { client: c, seen };
}

describe("fake Discord with a bare discord.js client", () => {
  it("serves the gateway URL, takes IDENTIFY without compression and delivers READY and the guilds", async () => {
    const guild = fake.addGuild("Lab");
    const general = fake.addTextChannel(guild.id, "general");
    const thread = fake.addThread(general.id, "plans");
    const { client: c } = await login();

    expect(fake.calls[0]).toMatchObject({ method: "GET", path: "/gateway/bot", authorized: true, status: 200 });
    expect(fake.gateway.queries).toEqual(["v=10&encoding=json"]);
    expect(fake.gateway.identifies).toHaveLength(1);
    expect(fake.gateway.identifies[0]!.intents).toBe(Intent.guilds | Intent.guildMessages | Intent.messageContent | Intent.directMessages);
    expect(c.user?.id).toBe(fake.bot.id);
    expect(c.guilds.cache.get(guild.id)?.name).toBe("Lab");
    const cachedThread = c.channels.cache.get(thread.id);
    expect(cachedThread?.isThread() && cachedThread.parentId).toBe(general.id);
  });

  it("delivers guild, thread and DM messages with mentions and replies, and records the bot's reply", async () => {
    const guild = fake.addGuild("Lab");
    const general = fake.addTextChannel(guild.id, "general");
    const thread = fake.addThread(general.id, "plans");
    const role = fake.addRole(guild.id, "mods");
    const alice = fake.addUser("alice");
    const { client: c, seen } = await login();

    const first = fake.sendMessage({ channelId: general.id, author: alice, content: "hello", mentionsBot: true });
    await fake.waitFor("the guild message", () => seen.length === 1);
    expect(seen[0]!.content).toBe(`<@${fake.bot.id}> hello`);
    expect(seen[0]!.mentions.users.has(c.user!.id)).toBe(true);
    expect(seen[0]!.inGuild()).toBe(true);

    const reply = await seen[0]!.reply("hi alice");
    const sent = fake.message(reply.id)!;
    expect(sent).toMatchObject({ channelId: general.id, replyTo: first.id, content: "hi alice" });
    expect(sent.pings).toEqual([alice.id]); // discord.js pings the replied-to user by default
    const post = fake.callsTo("POST", /^\/channels\/\d+\/messages$/)[0]!;
    expect(post.body.message_reference).toMatchObject({ message_id: first.id });

    fake.sendMessage({ channelId: thread.id, author: alice, content: `<@&${role.id}> @everyone look`, replyTo: reply.id, replyPing: false });
    fake.sendMessage({ channelId: fake.dmChannel(alice), author: alice, content: "psst" });
    // The bot's own reply is echoed back as MESSAGE_CREATE, as Discord does.
    await fake.waitFor("the thread and DM messages", () => seen.length === 4);
    const [echo, inThread, dm] = seen.slice(1);
    expect(echo!.author.id).toBe(fake.bot.id);
    expect(inThread!.channel.isThread()).toBe(true);
    expect(inThread!.mentions.users.size).toBe(0);
    expect(inThread!.mentions.roles.has(role.id)).toBe(true);
    expect(inThread!.mentions.everyone).toBe(true);
    expect(inThread!.mentions.repliedUser?.id).toBe(fake.bot.id);
    expect(dm!.inGuild()).toBe(false);
    expect(dm!.content).toBe("psst");

    const channel = c.channels.cache.get(general.id);
    if (!channel?.isSendable()) throw new Error("general is not a sendable channel");
    await channel.sendTyping();
    expect(fake.callsTo("POST", /\/typing$/)).toHaveLength(1);
    const edited = await reply.edit("hi again");
    expect(edited.content).toBe("hi again");
    expect(fake.message(reply.id)!.history).toEqual(["hi alice", "hi again"]);
  });

  it("without the MessageContent intent, guild content is empty unless the bot is mentioned", async () => {
    const guild = fake.addGuild("Lab");
    const general = fake.addTextChannel(guild.id, "general");
    const alice = fake.addUser("alice");
    const { seen } = await login([GatewayIntentBits.Guilds, GatewayIntentBits.GuildMessages]);
    fake.sendMessage({ channelId: general.id, author: alice, content: "secret" });
    fake.sendMessage({ channelId: general.id, author: alice, content: "visible", mentionsBot: true });
    fake.sendMessage({ channelId: fake.dmChannel(alice), author: alice, content: "dm without the intent" });
    await fake.waitFor("two guild messages", () => seen.length === 2);
    expect(seen.map((m) => m.content)).toEqual(["", `<@${fake.bot.id}> visible`]);
  });

  it("enforces Discord's rules on created messages: 2,000 characters, nonce dedupe, allowed_mentions", async () => {
    const guild = fake.addGuild("Lab");
    const general = fake.addTextChannel(guild.id, "general");
    const alice = fake.addUser("alice");
    const { client: c } = await login();
    const route = `/channels/${general.id}/messages` as const;

    await expect(c.rest.post(route, { body: { content: "x".repeat(2001) } })).rejects.toMatchObject({ status: 400 });
    const body = { content: `<@${alice.id}> @everyone`, nonce: "n-1", enforce_nonce: true, allowed_mentions: { parse: [] } };
    const a = (await c.rest.post(route, { body })) as { id: string };
    const b = (await c.rest.post(route, { body })) as { id: string };
    expect(b.id).toBe(a.id);
    expect(fake.botMessages(general.id)).toHaveLength(1);
    expect(fake.message(a.id)!.pings).toEqual([]);
  });

  it("a lost response is retried by discord.js's REST client: the nonce keeps it to one message", async () => {
    const guild = fake.addGuild("Lab");
    const general = fake.addTextChannel(guild.id, "general");
    const { client: c } = await login();
    fake.injectFailure({ method: "POST", path: /\/messages$/, status: 502, afterEffect: true });
    const route = `/channels/${general.id}/messages` as const;
    await c.rest.post(route, { body: { content: "once", nonce: "n-2", enforce_nonce: true } });
    expect(fake.callsTo("POST", /\/messages$/).map((x) => x.status)).toEqual([502, 200]);
    expect(fake.botMessages(general.id).map((m) => m.content)).toEqual(["once"]);
  });

  it("resumes after a dropped connection and replays what was dispatched meanwhile", async () => {
    const guild = fake.addGuild("Lab");
    const general = fake.addTextChannel(guild.id, "general");
    const alice = fake.addUser("alice");
    const { client: c, seen } = await login();
    const events: string[] = [];
    c.on(Events.ShardReconnecting, () => events.push("reconnecting"));
    c.on(Events.ShardResume, () => events.push("resumed"));

    fake.disconnect("drop");
    fake.sendMessage({ channelId: general.id, author: alice, content: "while you were away" });
    await fake.waitFor("the replayed message", () => seen.some((m) => m.content === "while you were away"));
    await fake.waitFor("the resume event", () => events.includes("resumed"));
    expect(events).toEqual(["reconnecting", "resumed"]);
    expect(fake.gateway.resumes).toBe(1);
    expect(fake.gateway.identifies).toHaveLength(1);
  });

  it("a clean close makes the client identify again", async () => {
    fake.addGuild("Lab");
    const { client: c } = await login();
    const ready = new Promise<void>((resolve) => c.once(Events.ShardReady, () => resolve()));
    fake.disconnect(1000);
    await ready;
    expect(fake.gateway.identifies).toHaveLength(2);
  }, 15_000);

  it("a wrong token gets REST 401, and discord.js fails with TokenInvalid", async () => {
    const c = new Client({ intents: allIntents, rest: { api: fake.apiBase } });
    client = c;
    await expect(c.login("wrong-token")).rejects.toMatchObject({ code: "TokenInvalid" });
    expect(fake.calls).toMatchObject([{ path: "/gateway/bot", status: 401, authorized: false }]);
    expect(fake.gateway.connections).toBe(0);
  });

  it("with rejectTokensAt: gateway, a wrong token is closed with 4004", async () => {
    const strict = await startFakeDiscord({ rejectTokensAt: "gateway" });
    const c = new Client({ intents: allIntents, rest: { api: strict.apiBase } });
    const closes: number[] = [];
    c.on(Events.ShardDisconnect, (e) => closes.push(e.code));
    c.on(Events.ShardError, () => {});
    try {
      await expect(c.login("wrong-token")).rejects.toThrow(/Authentication failed/);
      expect(closes).toEqual([4004]);
    } finally {
      await c.destroy();
      await strict.close();
    }
  });

  it("a clean client.destroy closes the gateway with 1000", async () => {
    const { client: c } = await login();
    await c.destroy();
    client = undefined;
    await fake.waitFor("the close", () => fake.gateway.clientCloses.length === 1);
    expect(fake.gateway.clientCloses).toEqual([1000]);
    expect(fake.connected()).toBe(false);
  });
});
