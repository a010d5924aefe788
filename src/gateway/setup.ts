// Builds the gateway's parts from the configuration: the chat channels that have credentials
// and the memory service. Shared by `hearth start` and the embedded gateway of `hearth chat`.
import { installCommand, missingPackages, usePackagesOf } from "../channels/packages.ts";
import { join } from "node:path";
import type { Channel, ChannelId } from "../channels/channel.ts";
import { withFallbacks } from "../channels/fallbacks.ts";
import { CONFIGURABLE, channelSection } from "../channels/registry.ts";
import { UnstartableChannel } from "../channels/unstartable.ts";
import { hearthCmd } from "../process/hearth-command.ts";
import type { Logger } from "../process/log.ts";
import { openMemory } from "../memory/memory.ts";
import { homePaths } from "../config/home.ts";
import { ensureHome } from "../config/init.ts";
import type { Config } from "../config/schema.ts";
import { commandMenu, slashCommands } from "./commands.ts";
import type { GatewayOptions } from "./gateway.ts";

/**
 * The chat channels to run: each configured one of the registry. One without its credentials is
 * registered as unstartable, with what is missing and the command that adds it, so that status
 * lists it as not running (a restore without secrets leaves the token out, and the bot would go
 * quiet unsaid). One not configured is not wanted: a debug line only. Adapters load only when
 * configured and startable (descriptor.create imports them): discord.js alone costs ~50 MB and
 * ~0.3 s to import.
 */
export async function chatChannels(home: string, config: Config, log: Logger, tellOwner: (from: ChannelId, text: string) => void = () => {}): Promise<Channel[]> {
  const channels: Channel[] = [];
  // The menus come from the one command table: the owner's private chat shows the owner's.
  const deps = { home, commandMenus: { owner: commandMenu("owner"), everyone: commandMenu("everyone") }, slashCommands: slashCommands() };
  usePackagesOf(home);
  for (const c of CONFIGURABLE) {
    const section = channelSection(config.channels, c.id);
    if (!section) {
      log.debug("channel.not_configured", { channel: c.id, hint: `add channels.${c.id} to config.json` });
      continue;
    }
    const missing = (c.credentials ?? []).find((k) => typeof section[k.key] !== "string" || section[k.key] === "");
    if (missing) {
      const what = missing.key === "token" ? "no bot token" : `no ${missing.key}`;
      const reason = `${what} (${missing.variable} in ${homePaths(home).secrets} or the environment, or channels.${c.id}.${missing.key} in config.json): \`${hearthCmd("setup")}\` adds it`;
      channels.push(new UnstartableChannel(c.id, reason));
      continue;
    }
    // What the platform lacks (buttons, edits) the channel-neutral fallbacks stand in for.
    const missingLibs = missingPackages(home, c);
    if (missingLibs.length > 0) {
      channels.push(new UnstartableChannel(c.id, `its libraries are not installed (${missingLibs.join(", ")}): \`${hearthCmd("setup")}\` installs them, or ${installCommand(home, missingLibs)}`));
      continue;
    }
    if (c.create) channels.push(withFallbacks(await c.create(section, { ...deps, log: log.child({ channel: c.id }), tellOwner: (text) => tellOwner(c.id, text) }), c.capabilities));
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
    channels: opts.daemon ? (tellOwner) => chatChannels(home, config, log, tellOwner) : [],
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
        provenanceFile: homePaths(home).provenance,
        ...(embeddings ? { embeddings: { config: embeddings, file: join(homePaths(home).index, "vectors.db") } } : {}),
      }),
  };
}
