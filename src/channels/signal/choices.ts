// Questions with choices on Signal, which has no buttons: the question lists one emoji per choice
// (✅ allow once, ⏳ for 30 min, ❌ deny) and a reaction with one of them is the press; a reply
// quoting the question with a choice's number counts too, and a bare number where it cannot mean
// another question (channels/answers.ts). Signal names a message by its author and timestamp, and
// a reaction and a quote name the message they answer the same way, so the open questions are
// kept here by the timestamp signal-cli gave the question, named `<Hearth's number>:<timestamp>`
// as a quote's `replyTo.id` is. Whose answer counts is the handler's to decide (only the
// owner's, for approvals).
import type { ChoiceQuestion } from "../channel.ts";
import { asked, OpenQuestions as Questions, type AnswerReading } from "../answers.ts";
import { choiceEmoji } from "../choice-emoji.ts";

export const CHOICE_HINT = "React with your choice, or reply to this message with its number.";

export interface EmojiChoice {
  id: string;
  label: string;
  emoji: string;
}

/** The question's text: one numbered line per choice with its emoji, then how to answer. */
export function questionText(q: ChoiceQuestion): string {
  const lines = choiceEmoji(q.choices).map((c, i) => `${i + 1}. ${c.emoji} ${c.label}`);
  return `${q.text}\n\n${lines.join("\n")}\n\n${CHOICE_HINT}`;
}

const bare = (emoji: string) => emoji.replace(/\uFE0F/g, "");

/** How a quote or a reaction names one of Hearth's messages: its author and its timestamp. */
export const messageName = (account: string, timestamp: number): string => `${account}:${timestamp}`;

/** The questions the channel asked and nobody settled yet, by the question's Signal timestamp. */
export class OpenQuestions {
  readonly #questions = new Questions<EmojiChoice>();

  /** Question `q`, asked in `chatId` (a number or a group id) as the message `account` sent at `timestamp`. */
  add(account: string, timestamp: number, chatId: string, q: ChoiceQuestion): void {
    this.#questions.add(asked(String(timestamp), chatId, q, choiceEmoji(q.choices), [messageName(account, timestamp)]));
  }

  settle(timestamp: number): void {
    this.#questions.settle(String(timestamp));
  }

  /** The choice a reaction to Hearth's message sent at `timestamp` picks; null when it is no open question or the emoji none of its choices. */
  byReaction(account: string, timestamp: number, emoji: string): { key: string; choiceId: string } | null {
    const q = this.#questions.named(messageName(account, timestamp));
    const c = q?.choices.find((x) => bare(x.emoji) === bare(emoji));
    return q && c ? { key: q.key, choiceId: c.id } : null;
  }

  /** What a message of just a number answers (answers.ts): `replyTo` is the quoted message's name. */
  byNumber(chatId: string, text: string, replyTo?: string): AnswerReading<EmojiChoice> {
    return this.#questions.read(chatId, text, replyTo);
  }
}
