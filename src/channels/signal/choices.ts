// Questions with choices on Signal, which has no buttons: the question lists one emoji per choice
// (✅ allow once, ⏳ for 30 min, ❌ deny) and a reaction with one of them is the press; a reply
// that is just a choice's number counts too. Signal names a message by its author and timestamp,
// and a reaction names the message it reacts to the same way, so the open questions are kept
// here by the timestamp signal-cli gave the question. Whose answer counts is the handler's to
// decide (only the owner's, for approvals).
import type { ChoiceQuestion } from "../channel.ts";
import { choiceEmoji } from "../choice-emoji.ts";

export const CHOICE_HINT = "React with your choice, or reply with its number.";

/** Questions kept open at once; the oldest is forgotten first. */
const MAX_OPEN = 100;

export interface OpenQuestion {
  key: string;
  /** Where it was asked: a number or a group id. */
  chatId: string;
  choices: Array<{ id: string; label: string; emoji: string }>;
}

/** The question's text: one numbered line per choice with its emoji, then how to answer. */
export function questionText(q: ChoiceQuestion): string {
  const lines = choiceEmoji(q.choices).map((c, i) => `${i + 1}. ${c.emoji} ${c.label}`);
  return `${q.text}\n\n${lines.join("\n")}\n\n${CHOICE_HINT}`;
}

const bare = (emoji: string) => emoji.replace(/\uFE0F/g, "");

/** The questions the channel asked and nobody settled yet, by the question's Signal timestamp. */
export class OpenQuestions {
  readonly #byTimestamp = new Map<number, OpenQuestion>();

  add(timestamp: number, chatId: string, q: ChoiceQuestion): void {
    this.#byTimestamp.set(timestamp, { key: q.key, chatId, choices: choiceEmoji(q.choices) });
    for (const oldest of this.#byTimestamp.keys()) {
      if (this.#byTimestamp.size <= MAX_OPEN) break;
      this.#byTimestamp.delete(oldest);
    }
  }

  settle(timestamp: number): void {
    this.#byTimestamp.delete(timestamp);
  }

  /** The choice a reaction to the question sent at `timestamp` picks; null when it is no open question or the emoji none of its choices. */
  byReaction(timestamp: number, emoji: string): { key: string; choiceId: string } | null {
    const q = this.#byTimestamp.get(timestamp);
    const c = q?.choices.find((x) => bare(x.emoji) === bare(emoji));
    return q && c ? { key: q.key, choiceId: c.id } : null;
  }

  /** The choice a reply of just a number picks: of the chat's newest open question; null when it is none. */
  byNumber(chatId: string, text: string): { key: string; choiceId: string; timestamp: number } | null {
    const n = /^\s*(\d{1,2})\s*$/.exec(text)?.[1];
    if (!n) return null;
    const newest = [...this.#byTimestamp.entries()].filter(([, q]) => q.chatId === chatId).at(-1);
    const c = newest?.[1].choices[Number(n) - 1];
    return newest && c ? { key: newest[1].key, choiceId: c.id, timestamp: newest[0] } : null;
  }
}
