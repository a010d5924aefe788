// Placeholder until the Discord channel lands: configuring it fails clearly at start.
import type { Logger } from "../log.ts";
import type { Channel } from "./channel.ts";

export interface DiscordChannelOptions {
  token?: string | undefined;
  apiBase: string;
  ownerIds: string[];
  namePattern: string | null;
}

export function createDiscordChannel(_options: DiscordChannelOptions, _deps: { log: Logger }): Channel {
  throw new Error("The Discord channel is not available in this version of Hearth.");
}
