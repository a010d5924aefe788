// Discord as a fake platform: the fake Discord (test/support/fake-discord.ts, REST and gateway),
// which the daemon's real discord.js talks to. People are users of the fake; the group is one
// text channel of the allowed guild, where a message is addressed by a mention; the connection
// is the gateway WebSocket, dropped without a close frame and held off until restored.
import { channelDescriptor } from "../../../src/channels/registry.ts";
import type { Daemon } from "../../support/daemon.ts";
import { startFakeDiscord, type FakeDiscord, type FakeMessage, type FakeUser } from "../../support/fake-discord.ts";
import type { BotMessage, ChatRef, FakePlatform, Person, PlatformTraits, Role } from "./platform.ts";

export const DISCORD_TRAITS: PlatformTraits = {
  capabilities: channelDescriptor("discord")!.capabilities,
  holdsDeliveries: true,
  sameAfterCrash: true,
  takenOnce: "not yet done: Hearth does not read a channel's history after a restart, and Discord's gateway does not send a new session what it sent the one that died",
  privateChatsGrow: "a Discord DM is the bot and one person for good: a bot is in no group DM, and one would be a group",
};

export async function startDiscordPlatform(): Promise<FakePlatform> {
  return discordPlatform(await startFakeDiscord());
}

/** The fake platform over a running fake Discord (the caller's to close through `close`). */
export function discordPlatform(discord: FakeDiscord): FakePlatform {
  const users = new Map<string, FakeUser>();
  const add = (role: Role, name: string): Person => {
    const u = discord.addUser(name);
    users.set(u.id, u);
    return { role, id: u.id, name };
  };
  const owner = add("owner", "owner");
  const guild = discord.addGuild("Lab").id;
  const general = discord.addTextChannel(guild, "general").id;
  let people = 0;
  /** Gateway sessions opened (identify) or resumed when the daemon last connected. */
  let sessions = 0;
  const channelOf = (chat: ChatRef) => (chat.kind === "group" ? general : discord.dmChannel(users.get(chat.with.id)!));
  const view = (m: FakeMessage): BotMessage => ({
    id: m.id,
    text: m.content,
    versions: [...m.history],
    choices: (m.components ?? []).flatMap((row) => row.components.map((b) => b.label)),
  });
  const MESSAGES = /^\/channels\/\d+\/messages$/;
  const MESSAGE = /^\/channels\/\d+\/messages\/\d+$/;

  return {
    name: "discord",
    capabilities: DISCORD_TRAITS.capabilities,
    daemonSetup: () => ({
      channels: { discord: { apiBase: discord.apiBase, ownerIds: [owner.id], guilds: { policy: "allowlist", allow: [guild], requireMention: true } } },
      env: { DISCORD_BOT_TOKEN: discord.token },
    }),
    async connected(_d: Daemon) {
      // A new session of this daemon's, not the socket of the one just killed.
      const opened = () => discord.gateway.identifies.length + discord.gateway.resumes;
      await discord.waitFor("the bot to connect", () => opened() > sessions && discord.connected());
      sessions = opened();
    },
    person(role) {
      if (role === "owner") return owner;
      people++;
      return add(role, `${role === "stranger" ? "stranger" : "member"}${people}`);
    },
    async send(chat, from, text, opts = {}) {
      discord.sendMessage({
        channelId: channelOf(chat),
        author: users.get(from.id)!,
        content: text,
        ...(chat.kind === "group" && opts.addressed ? { mentionsBot: true } : {}),
        ...(opts.files?.length ? { attachments: opts.files.map((f) => ({ name: f.name, contentType: f.mime, bytes: f.bytes })) } : {}),
      });
    },
    botMessages: (chat) => discord.botMessages(channelOf(chat)).map(view),
    deletedMessages: (chat) => discord.deletedBotMessages(channelOf(chat)).map(view),
    async choose(_chat, message, label, by) {
      const id = discord.pressButton(message.id, label, users.get(by.id)!);
      const reply = await discord.waitFor(`the bot to answer ${by.name}'s press`, () => discord.interactionReplies.find((r) => r.interactionId === id));
      return String(reply.content ?? "");
    },
    sentFiles: (chat) => discord.botMessages(channelOf(chat)).flatMap((m) => (m.attachments ?? []).map((a) => ({ name: a.name, bytes: a.bytes }))),
    async holdDelivery(text) {
      // The final text goes out as a new message or as an edit of the preview: whichever comes first is held.
      let held = false;
      const when = (body: { content?: unknown } | null) => !held && body?.content === text && (held = true);
      discord.injectFailure({ method: "POST", path: MESSAGES, status: 0, hang: true, when });
      discord.injectFailure({ method: "PATCH", path: MESSAGE, status: 0, hang: true, when });
      await discord.waitFor(`the delivery of "${text}" to be held`, () => held);
    },
    async holdAnswer(text) {
      let held = false;
      discord.injectFailure({ method: "POST", path: MESSAGES, status: 0, hang: true, afterEffect: true, when: (body: { content?: unknown } | null) => !held && body?.content === text && (held = true) });
      await discord.waitFor(`the part "${text.slice(0, 40)}…" to be created`, () => held);
    },
    async loseConnection() {
      discord.pauseGateway();
      discord.disconnect("drop");
    },
    async restoreConnection() {
      discord.resumeGateway();
    },
    close: () => discord.close(),
  };
}
