// Placeholder until the Telegram channel lands: configuring it fails clearly at start.
import type { Logger } from "../log.ts";
import type { Channel } from "./channel.ts";

export interface TelegramChannelOptions {
  token?: string | undefined;
  apiRoot: string;
  ownerIds: string[];
  namePattern: string | null;
}

export function createTelegramChannel(_options: TelegramChannelOptions, _deps: { log: Logger }): Channel {
  throw new Error("The Telegram channel is not available in this version of Hearth.");
}
