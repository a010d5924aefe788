// Discord's slash commands: the owner's everyday commands registered with the application at
// start, and a used one handed to the gateway as a PlatformCommand, answered ephemerally (only
// the person who used it sees the answer). Who may use them is the gateway's decision.
//
// Discord wants an answer to an interaction within 3 s, and a command may take longer (/compact
// asks the model): each one is acknowledged at once as a deferred ephemeral response, and the
// answer then replaces it (the original response's webhook message).
import { ApplicationCommandOptionType, ApplicationCommandType, ChannelType, InteractionContextType, InteractionResponseType, MessageFlags, Routes, type ChatInputCommandInteraction, type Client } from "discord.js";
import type { Logger } from "../../process/log.ts";
import type { InboundMessage, MenuCommand, PlatformCommand } from "../channel.ts";
import { printable } from "../printable.ts";
import { chatOf, type DiscordPlace } from "./inbound.ts";

/** Discord's limits: a description, and an interaction response's content. */
const MAX_DESCRIPTION = 100;
const MAX_CONTENT = 2000;

/** The registration body (a bulk overwrite: commands no longer listed disappear). */
export function slashCommandBodies(commands: MenuCommand[]): object[] {
  return commands.map((c) => ({
    type: ApplicationCommandType.ChatInput,
    name: c.name,
    description: c.description.slice(0, MAX_DESCRIPTION),
    ...(c.option ? { options: [{ type: ApplicationCommandOptionType.String, name: c.option.name, description: c.option.description.slice(0, MAX_DESCRIPTION), required: false }] } : {}),
  }));
}

/** Registers `commands` as the application's global commands. Never throws: a failure is logged. */
export async function registerSlashCommands(client: Client, commands: MenuCommand[], log: Logger): Promise<void> {
  const appId = client.application?.id;
  if (!appId) {
    log.warn("discord.slash_commands_failed", { reason: "Discord did not name the application" });
    return;
  }
  try {
    await client.rest.put(Routes.applicationCommands(appId), { body: slashCommandBodies(commands) });
    log.info("discord.slash_commands_registered", { commands: commands.map((c) => c.name) });
  } catch (error) {
    log.warn("discord.slash_commands_failed", { error });
  }
}

/**
 * One used slash command: acknowledged at once, described as the typed command would be
 * (`/budget raise 5`), and handed to `onCommand`, whose answer goes out ephemerally.
 */
export function handleSlashCommand(
  client: Client,
  interaction: ChatInputCommandInteraction,
  opts: { commands: MenuCommand[]; ownerIds: string[]; onCommand: ((c: PlatformCommand) => void) | undefined; log: Logger },
): void {
  const rest = client.rest;
  const route = Routes.interactionCallback(interaction.id, interaction.token);
  const acknowledged = rest.post(route, { body: { type: InteractionResponseType.DeferredChannelMessageWithSource, data: { flags: MessageFlags.Ephemeral } }, auth: false });
  const answer = async (text: string): Promise<void> => {
    await acknowledged;
    const content = text.length > MAX_CONTENT ? `${text.slice(0, MAX_CONTENT - 1)}…` : text;
    await rest.patch(Routes.webhookMessage(interaction.applicationId, interaction.token), { body: { content, allowed_mentions: { parse: [] } }, auth: false });
  };
  const spec = opts.commands.find((c) => c.name === interaction.commandName);
  const value = spec?.option ? interaction.options.getString(spec.option.name)?.trim() : undefined;
  const message: InboundMessage = {
    id: `slash:${interaction.id}`,
    channel: "discord",
    chat: chatOf(placeOf(interaction)),
    sender: { id: interaction.user.id, name: printable(interaction.user.displayName), isOwner: opts.ownerIds.includes(interaction.user.id) },
    text: `/${interaction.commandName}${value ? ` ${spec?.option?.prefix ?? ""}${value}` : ""}`,
    addressed: true,
    receivedAt: Date.now(),
  };
  const failed = (error: unknown) => opts.log.warn("discord.slash_answer_failed", { command: interaction.commandName, error });
  acknowledged.catch(failed);
  if (!opts.onCommand) {
    answer("Commands are not available right now.").catch(failed);
    return;
  }
  opts.onCommand({ message, answer });
}

function placeOf(interaction: ChatInputCommandInteraction): DiscordPlace {
  const channelId = interaction.channelId;
  if (!interaction.inGuild()) {
    // A user-installed command can be used in a DM between two people, or in a group DM: not the bot's own DM.
    const own = interaction.context === null || interaction.context === InteractionContextType.BotDM;
    return own && interaction.channel?.type !== ChannelType.GroupDM ? { kind: "dm", channelId, with: interaction.user.id } : { kind: "group-dm", channelId };
  }
  const channel = interaction.channel;
  if (channel?.isThread()) return { kind: "thread", guildId: interaction.guildId, channelId, parentId: channel.parentId ?? channelId };
  return { kind: "channel", guildId: interaction.guildId, channelId };
}
