// Every chat platform Hearth speaks, one line each. Adding a platform is its folder
// (descriptor.ts's contract) and one line here; the configuration, the gateway, setup, doctor,
// status and the dashboard learn it from this list.
import { z } from "zod";
import { strict } from "../config-fields.ts";
import type { ChannelDescriptor } from "./descriptor.ts";
import { discord } from "./discord/descriptor.ts";
import { telegram } from "./telegram/descriptor.ts";
import { terminal } from "./terminal/descriptor.ts";

export const CHANNELS = [telegram, discord, terminal] as const;

/** A channel's id: `channels.<id>` in config.json, the first part of a chat address. */
export type ChannelId = (typeof CHANNELS)[number]["id"];

export const CHANNEL_IDS = CHANNELS.map((c) => c.id) as [ChannelId, ...ChannelId[]];

/** A channel id as stored in Hearth's records (inbox, jobs, tasks, pairing). */
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
