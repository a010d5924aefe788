// Questions with buttons on Discord: message components (action rows of buttons) under a
// plain message; a press arrives as a message-component interaction, answered with an
// ephemeral reply (only the presser sees it); settling edits the message and removes the row.
// Slash commands are other interactions, handled elsewhere: this file only knows buttons.
import { MessageFlags, Routes, type Interaction } from "discord.js";
import type { ChoiceHandler, ChoiceQuestion } from "../channel.ts";
import { printable } from "../printable.ts";
import type { DiscordRest } from "./reply.ts";

/** A button's custom_id: `q:<key>:<choice>` (Discord allows 100 characters). */
const customId = (key: string, choiceId: string): string => `q:${key}:${choiceId}`;

function parseCustomId(id: string): { key: string; choiceId: string } | null {
  const m = /^q:([A-Za-z0-9_-]{1,24}):([A-Za-z0-9_-]{1,16})$/.exec(id);
  return m ? { key: m[1]!, choiceId: m[2]! } : null;
}

/** Discord's button styles: the last choice (Deny) red, the first (Allow once) green, others grey. */
const styleOf = (i: number, n: number) => (i === n - 1 ? 4 : i === 0 ? 3 : 2);

/** Discord takes at most 5 buttons in an action row, and 5 rows under a message. */
const PER_ROW = 5;

/** The question's buttons as action rows of at most five (`/model` may offer ten models). */
export function actionRows(q: ChoiceQuestion): Array<{ type: 1; components: unknown[] }> {
  const buttons = q.choices.slice(0, PER_ROW * 5).map((c, i) => ({ type: 2, style: styleOf(i, q.choices.length), label: c.label, custom_id: customId(q.key, c.id) }));
  const rows: Array<{ type: 1; components: unknown[] }> = [];
  for (let i = 0; i < buttons.length; i += PER_ROW) rows.push({ type: 1, components: buttons.slice(i, i + PER_ROW) });
  return rows;
}

export async function sendQuestion(rest: DiscordRest, channelId: string, q: ChoiceQuestion): Promise<string> {
  const sent = (await rest.post(Routes.channelMessages(channelId), { body: { content: q.text, components: actionRows(q), allowed_mentions: { parse: [] } } })) as { id: string };
  return sent.id;
}

export async function settleQuestion(rest: DiscordRest, channelId: string, messageId: string, text: string): Promise<void> {
  await rest.patch(Routes.channelMessage(channelId, messageId), { body: { content: text, components: [] } });
}

/**
 * A button press (a message-component interaction) to the handler, and its answer back to the
 * presser alone. Other interactions, and buttons Hearth did not make, are left alone.
 */
export async function handleComponentInteraction(interaction: Interaction, ownerIds: readonly string[], handler: ChoiceHandler | undefined): Promise<void> {
  if (!interaction.isButton()) return;
  const parsed = parseCustomId(interaction.customId);
  if (!parsed || !handler) return;
  const user = interaction.user;
  const text = await handler({ ...parsed, channel: "discord", by: { id: user.id, name: printable(user.globalName ?? user.username), isOwner: ownerIds.includes(user.id) } });
  await interaction.reply({ content: text, flags: MessageFlags.Ephemeral });
}
