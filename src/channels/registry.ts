// Every chat platform Hearth speaks, one line each. Adding a platform is its folder
// (descriptor.ts's contract) and one line here; the configuration, the gateway, setup, doctor,
// status and the dashboard learn it from this list.
import { z } from "zod";
import { strict } from "../fields/config-fields.ts";
import type { ChannelId } from "./channel.ts";
import type { ChannelAccess, ChannelDescriptor } from "./descriptor.ts";
import { discord } from "./discord/descriptor.ts";
import { email } from "./email/descriptor.ts";
import { matrix } from "./matrix/descriptor.ts";
import { slack } from "./slack/descriptor.ts";
import { telegram } from "./telegram/descriptor.ts";
import { signal } from "./signal/descriptor.ts";
import { terminal } from "./terminal/descriptor.ts";
import { whatsapp } from "./whatsapp/descriptor.ts";

export const CHANNELS = [telegram, discord, slack, matrix, signal, whatsapp, email, terminal] as const;

// The contract (channel.ts) names a channel by a plain string, so that it imports no platform;
// the ids are checked here, where config and records are read.
export const CHANNEL_IDS = CHANNELS.map((c) => c.id) as [ChannelId, ...ChannelId[]];

/** A channel id as stored in Hearth's records (inbox, jobs, tasks, pairing): one the registry lists. */
export const channelIdSchema = z.enum(CHANNEL_IDS);

export function channelDescriptor(id: string): ChannelDescriptor | undefined {
  return CHANNELS.find((c) => c.id === id);
}

/** The channels with a section in config.json (every one but the terminal). */
export const CONFIGURABLE = CHANNELS.filter((c) => c.config !== undefined) as unknown as Array<ChannelDescriptor<any, ConfigurableId> & Required<Pick<ChannelDescriptor, "config">>>;

/** The id of a channel with a section in config.json. */
export type ConfigurableId = keyof ChannelShapes;
export const CONFIGURABLE_IDS = CONFIGURABLE.map((c) => c.id) as [ConfigurableId, ...ConfigurableId[]];

/** config.json's `channels` section: one optional key per platform; an absent one is not configured. */
export const channelsSchema = strict(Object.fromEntries(CONFIGURABLE.map((c) => [c.id, c.config.schema.optional()])) as ChannelShapes).prefault({});

type ChannelShapes = {
  [D in (typeof CHANNELS)[number] as D extends ChannelDescriptor<infer C, infer Id> ? ([C] extends [never] ? never : Id) : never]: D extends ChannelDescriptor<infer C, string> ? z.ZodOptional<z.ZodType<C, any>> : never;
};

/** A configured channel's section of config.json (`config.channels`), or undefined when it is not configured. */
export function channelSection(channels: object, id: string): Record<string, unknown> | undefined {
  return (channels as Record<string, Record<string, unknown> | undefined>)[id];
}

/** Who may talk to Hearth on channel `id`; null when it is not configured (or has no such rules: the terminal). */
export function channelAccess(channels: object, id: string): ChannelAccess | null {
  const d = channelDescriptor(id);
  const section = channelSection(channels, id);
  return d?.access && section ? d.access(section) : null;
}

/** The chat address forms a job may deliver to, for help texts: "telegram:<chatId> or discord:<channelId>". */
export function chatAddressHelp(): string {
  const forms = CONFIGURABLE.filter((c) => c.chats).map((c) => `${c.id}:${c.chats!.label}`);
  return forms.length > 1 ? `${forms.slice(0, -1).join(", ")} or ${forms.at(-1)}` : (forms[0] ?? "");
}

/**
 * The owner's private chat on channel `id` when the platform's id for it is the owner's user id
 * (Telegram); null where that chat has an id of its own (a Discord DM channel) or no owner is set.
 */
export function ownerPrivateChat(channels: object, id: ConfigurableId): { channel: ConfigurableId; chatId: string } | null {
  const owner = channelAccess(channels, id)?.ownerIds[0];
  return owner && channelDescriptor(id)?.chats?.kind(owner) === "person" ? { channel: id, chatId: owner } : null;
}
