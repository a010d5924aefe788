// Discord as Hearth knows it: the `channels.discord` section (its group rules are "guilds":
// servers or channels), what a bot can do there, its ids, and how setup and doctor reach it. The
// adapter (channel.ts, discord.js: ~50 MB and ~0.3 s to import) loads only when it runs.
import type { z } from "zod";
import { httpUrl, secret, strict } from "../../fields/config-fields.ts";
import { toVariable } from "../../fields/secret-fields.ts";
import { accessOf, accessRows, accessShape, accessTemplate, digitIds } from "../access-config.ts";
import type { ChannelDescriptor } from "../descriptor.ts";
import { checkDiscordToken, discordCodeRequest, discordTokenProblem } from "./setup.ts";

const API = "https://discord.com/api";

const schema = strict({
  token: secret(toVariable("DISCORD_BOT_TOKEN")).optional(),
  apiBase: httpUrl.default(API),
  ...accessShape(digitIds("Discord"), "guilds"),
});

export type DiscordConfig = z.output<typeof schema>;

export const discord: ChannelDescriptor<DiscordConfig, "discord"> = {
  id: "discord",
  name: "Discord",
  capabilities: { edits: true, buttons: true, reactions: false, threads: true, filesIn: true, filesOut: true, voiceIn: true, voiceOut: true, maxMessageLength: 2000, groups: true, strangers: true },
  config: {
    schema,
    template: `"token": "<bot token>",              // or set DISCORD_BOT_TOKEN
"apiBase": "${API}",
${accessTemplate("guilds", "<server or channel id>", true)}`,
    rows: [
      { key: "channels.discord.token", default: "—", meaning: "or `DISCORD_BOT_TOKEN`" },
      { key: "channels.discord.apiBase", default: `\`${API}\``, meaning: "another Discord API address (a proxy)" },
      ...accessRows("discord", "guilds", "servers or channels (ids)"),
    ],
  },
  credentials: [{ variable: "DISCORD_BOT_TOKEN", key: "token", source: "Developer Portal → Bot → Reset Token", shapeProblem: discordTokenProblem }],
  access: (c) => accessOf(c, "guilds"),
  groupsKey: "guilds",
  // A channel id does not say whether it is a DM: only a listed one counts as a group.
  chats: { label: "<channelId>", pattern: /^\d+$/, kind: () => "unknown" },
  ownerIdHint: "Developer Mode → right-click yourself → Copy User ID",
  async checkOnline(c) {
    const r = await checkDiscordToken(c.token ?? "", c.apiBase);
    return r.ok ? { ok: true, detail: `the bot is ${r.botName}` } : { ok: false, detail: r.problem };
  },
  setup: {
    offer: "Connect a Discord bot?",
    offerDefault: false,
    tokenPrompt: "Discord bot token (Developer Portal → Bot → Reset Token)",
    dm: "direct message",
    botHandle: (name) => name,
    apiKey: "apiBase",
    apiFlag: "discord-api-base",
    defaultApi: API,
    checkToken: checkDiscordToken,
    codeRequest: discordCodeRequest,
    async findOwner(token, api, o) {
      const { awaitDiscordOwner } = await import("./handshake.ts");
      return awaitDiscordOwner(token, api, o);
    },
  },
  async create(c, deps) {
    const { createDiscordChannel } = await import("./channel.ts");
    return createDiscordChannel({ ...c, slashCommands: deps.slashCommands }, { log: deps.log });
  },
};
