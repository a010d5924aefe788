// Builds the gateway's parts from the configuration: the chat channels that have credentials
// and the memory service. Shared by `hearth start` and the embedded gateway of `hearth chat`.
import type { Channel } from "../channels/channel.ts";
import type { Logger } from "../log.ts";
import type { Config } from "./config.ts";
import type { GatewayOptions } from "./gateway.ts";

/** The chat channels to run: each configured one with a token; the others say why not. */
export function chatChannels(_config: Config, log: Logger): Channel[] {
  const channels: Channel[] = [];
  log.debug("channels.configured", { count: channels.length });
  return channels;
}

export function gatewayOptions(home: string, config: Config, log: Logger, opts: { daemon: boolean }): GatewayOptions {
  return {
    home,
    config,
    log,
    controlSocket: opts.daemon,
    channels: opts.daemon ? chatChannels(config, log) : [],
  };
}
