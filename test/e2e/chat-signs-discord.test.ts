// Discord's slash commands end to end (one daemon for the file): registered at start from the
// gateway's command table, answered by the same command code as typed commands, ephemerally,
// and only for the owner. Asserted at the fake Discord: the registration call, each
// interaction's callbacks and the edits of its response.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { cleanupDaemon, makeHome, startDaemon, type Daemon } from "../support/daemon.ts";
import { startFakeDiscord, type FakeDiscord, type FakeInteraction, type FakeUser } from "../support/fake-discord.ts";
import { startFakeModel, type FakeModel } from "../support/fake-model.ts";

let model: FakeModel;
let discord: FakeDiscord;
let daemon: Daemon;
let owner: FakeUser;
let alice: FakeUser;
let ownerDm: string;
let general: string;
let elsewhere: string;

beforeAll(async () => {
  model = await startFakeModel();
  discord = await startFakeDiscord();
  owner = discord.addUser("owner");
  alice = discord.addUser("alice");
  const guild = discord.addGuild("Lab").id;
  general = discord.addTextChannel(guild, "general").id;
  ownerDm = discord.dmChannel(owner);
  elsewhere = discord.addTextChannel(discord.addGuild("Elsewhere").id, "random").id;
  const home = makeHome({ channels: { discord: { apiBase: discord.apiBase, ownerIds: [owner.id], guilds: { policy: "allowlist", allow: [guild], requireMention: true } } } });
  daemon = await startDaemon(home, { DISCORD_BOT_TOKEN: discord.token, ANTHROPIC_API_KEY: "test-key", ANTHROPIC_BASE_URL: model.url });
});
afterAll(async () => {
  await cleanupDaemon(daemon);
  await discord.close();
  await model.close();
});

const DEFERRED_EPHEMERAL = { type: 5, data: { flags: 64 } };

/** Waits until the interaction's response shows `what` was answered (an edit of the deferred response). */
const answered = (i: FakeInteraction) => discord.waitFor(`the answer to interaction ${i.id}`, () => i.edits.length > 0 && i);

describe("discord slash commands (daemon e2e)", () => {
  it("the owner's commands are registered once connected, with their one optional argument", async () => {
    const registered = await discord.waitFor("the slash commands", () => discord.callsTo("PUT", /^\/applications\/\d+\/commands$/)[0]);
    expect(registered.path).toBe(`/applications/${discord.bot.id}/commands`);
    const option = (name: string, description: string) => ({ options: [{ type: 3, name, description, required: false }] });
    expect(registered.body).toEqual([
      { type: 1, name: "stop", description: "stop the current answer and drop queued messages" },
      { type: 1, name: "new", description: "start a fresh conversation (the old one stays on disk)" },
      { type: 1, name: "status", description: "model, context use, queue and today's usage" },
      { type: 1, name: "compact", description: "summarise older turns to free context", ...option("focus", "what the summary should keep") },
      { type: 1, name: "model", description: "show or switch this conversation's model (owner only)", ...option("name", "the model to switch to (provider/model), or default") },
      { type: 1, name: "budget", description: "spending against the limits; raise today's limit by N dollars (owner)", ...option("raise", "raise today's limit by this many US dollars") },
      { type: 1, name: "grants", description: "what you allowed for a while or always (owner); /revoke N takes grant N back" },
    ]);
    expect(registered.status).toBe(200);
  });

  it("the owner's /status: acknowledged at once as ephemeral, answered with the same text as the typed /status, nothing posted in the chat", async () => {
    discord.sendMessage({ channelId: ownerDm, author: owner, content: "/status" });
    const typed = await discord.waitFor("the typed /status answer", () => discord.botMessages(ownerDm)[0]);
    const posted = discord.botMessages(ownerDm).length;

    const slash = await answered(discord.useSlashCommand({ user: owner, channelId: ownerDm, name: "status" }));
    expect(slash.responses).toEqual([DEFERRED_EPHEMERAL]);
    expect(slash.edits).toEqual([{ content: typed.content, allowed_mentions: { parse: [] } }]);
    expect(typed.content).toMatch(/^Model: .*\nSession: main \(main\)/);
    expect(slash.shown()).toEqual({ content: typed.content, ephemeral: true });
    expect(discord.botMessages(ownerDm)).toHaveLength(posted);
  });

  it("an option becomes the command's argument: /budget raise:5 runs as /budget raise 5; /grants lists the grants", async () => {
    const slash = await answered(discord.useSlashCommand({ user: owner, channelId: ownerDm, name: "budget", options: { raise: "5" } }));
    expect(slash.shown()).toEqual({
      content: "There is no budget to raise: no limit is set. Set budget.daily or budget.monthly in config.json to have one.",
      ephemeral: true,
    });
    const grants = await answered(discord.useSlashCommand({ user: owner, channelId: ownerDm, name: "grants" }));
    expect(grants.shown()).toEqual({ content: "No grants: every risky command is asked about (approvals.exec: risky).", ephemeral: true });
  });

  it("the owner in a channel Hearth does not answer in is told so, ephemerally", async () => {
    const slash = await answered(discord.useSlashCommand({ user: owner, channelId: elsewhere, name: "status" }));
    expect(slash.shown()).toEqual({ content: "I don't answer in this chat, so its commands do nothing here. Use them in our private chat.", ephemeral: true });
    expect(discord.botMessages(elsewhere)).toEqual([]);
  });

  it("anyone else is refused, ephemerally, in a DM and in an allowed guild channel; no model call", async () => {
    for (const channelId of [discord.dmChannel(alice), general]) {
      const slash = await answered(discord.useSlashCommand({ user: alice, channelId, name: "status" }));
      expect(slash.responses).toEqual([DEFERRED_EPHEMERAL]);
      expect(slash.edits).toEqual([{ content: "Only my owner can use these commands.", allowed_mentions: { parse: [] } }]);
    }
    expect(discord.botMessages(general)).toEqual([]);
    expect(model.requests).toEqual([]);
  });
});
