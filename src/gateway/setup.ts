// Builds the gateway's parts from the configuration: the chat channels that have credentials
// and the memory service. Shared by `hearth start` and the embedded gateway of `hearth chat`.
import { join } from "node:path";
import type { Channel } from "../channels/channel.ts";
import { UnstartableChannel } from "../channels/unstartable.ts";
import { hearthCmd } from "../hearth-command.ts";
import type { Logger } from "../log.ts";
import { openMemory } from "../memory/memory.ts";
import { homePaths } from "../config/home.ts";
import { ensureHome } from "../config/init.ts";
import type { Config } from "../config/schema.ts";
import { commandMenu, slashCommands } from "./commands.ts";
import type { GatewayOptions } from "./gateway.ts";

/**
 * The chat channels to run: each configured one. One without its token is registered as
 * unstartable, with what is missing and the command that adds it, so that status lists it as not
 * running (a restore without secrets leaves the token out, and the bot would go quiet unsaid).
 * One not configured is not wanted: a debug line only. Adapters load only when configured and
 * startable: discord.js alone costs ~50 MB and ~0.3 s to import.
 */
export async function chatChannels(home: string, config: Config, log: Logger): Promise<Channel[]> {
  const channels: Channel[] = [];
  const { telegram, discord } = config.channels;
  const noToken = (variable: string, key: string) =>
    `no bot token (${variable} in ${homePaths(home).secrets} or the environment, or ${key} in config.json): \`${hearthCmd("setup")}\` adds it`;
  if (!telegram) log.debug("channel.not_configured", { channel: "telegram", hint: "add channels.telegram to config.json" });
  else if (!telegram.token) channels.push(new UnstartableChannel("telegram", noToken("TELEGRAM_BOT_TOKEN", "channels.telegram.token")));
  else {
    const { createTelegramChannel } = await import("../channels/telegram/channel.ts");
    // The menus come from the one command table: the owner's private chat shows the owner's.
    const commandMenus = { owner: commandMenu("owner"), everyone: commandMenu("everyone") };
    channels.push(createTelegramChannel({ ...telegram, commandMenus }, { log: log.child({ channel: "telegram" }) }));
  }
  if (!discord) log.debug("channel.not_configured", { channel: "discord", hint: "add channels.discord to config.json" });
  else if (!discord.token) channels.push(new UnstartableChannel("discord", noToken("DISCORD_BOT_TOKEN", "channels.discord.token")));
  else {
    const { createDiscordChannel } = await import("../channels/discord/channel.ts");
    channels.push(createDiscordChannel({ ...discord, slashCommands: slashCommands() }, { log: log.child({ channel: "discord" }) }));
  }
  return channels;
}

export function gatewayOptions(home: string, config: Config, log: Logger, opts: { daemon: boolean; clock?: () => number }): GatewayOptions {
  const e = config.memory.embeddings;
  const apiKey = e ? (e.apiKey ?? (e.apiKeyEnv ? process.env[e.apiKeyEnv]?.trim() : undefined)) : undefined;
  const embeddings = e ? { baseUrl: e.baseUrl, model: e.model, ...(apiKey ? { apiKey } : {}), ...(e.dimensions ? { dimensions: e.dimensions } : {}) } : undefined;
  return {
    home,
    config,
    log,
    controlSocket: opts.daemon,
    schedule: opts.daemon,
    channels: opts.daemon ? () => chatChannels(home, config, log) : [],
    ...(opts.clock ? { clock: opts.clock } : {}),
    openMemory: () =>
      openMemory({
        workspace: config.workspace,
        indexPath: homePaths(home).memoryDb,
        timezone: config.timezone,
        log: log.child({ component: "memory" }),
        ...(opts.clock ? { clock: opts.clock } : {}),
        restoreWorkspace: () => ensureHome(home, { workspace: config.workspace }),
        historyDir: homePaths(home).history,
        ...(embeddings ? { embeddings: { config: embeddings, file: join(homePaths(home).index, "vectors.db") } } : {}),
      }),
  };
}
