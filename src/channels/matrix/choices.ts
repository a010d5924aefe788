// Questions with choices on Matrix, which has no buttons: the question lists one emoji per choice
// and the bot reacts with each, so the owner answers with one tap on a reaction (✅ allow once,
// ⏳ for 30 min, ❌ deny). The question's key and its emoji travel in the event itself
// (`org.hearth.question`), so a reaction is understood after a restart too. Whose reaction counts
// is the handler's to decide (only the owner's, for approvals); anyone else is told so in the room.
import type { ChoiceQuestion } from "../channel.ts";
import { choiceEmoji } from "../choice-emoji.ts";

export const QUESTION_FIELD = "org.hearth.question";
export const CHOICE_HINT = "React with your choice.";

/** The question's event content: its text, one line per choice, and the key and emoji for reactions. */
export function questionContent(q: ChoiceQuestion): Record<string, unknown> {
  const choices = choiceEmoji(q.choices);
  const body = `${q.text}\n\n${choices.map((c) => `${c.emoji} ${c.label}`).join("\n")}\n\n${CHOICE_HINT}`;
  return { msgtype: "m.text", body, "m.mentions": {}, [QUESTION_FIELD]: { key: q.key, choices: Object.fromEntries(choices.map((c) => [c.emoji, c.id])) } };
}

/** The question a reaction answers and the choice it picks; null when the event is no such question or the emoji none of its choices. */
export function pickedChoice(question: Record<string, any> | undefined, emoji: string): { key: string; choiceId: string } | null {
  const q = question?.[QUESTION_FIELD] as { key?: unknown; choices?: Record<string, unknown> } | undefined;
  if (typeof q?.key !== "string" || !q.choices) return null;
  const id = q.choices[emoji] ?? q.choices[emoji.replace(/\uFE0F/g, "")];
  return typeof id === "string" ? { key: q.key, choiceId: id } : null;
}
