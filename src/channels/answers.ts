// Which question an answer in words answers, on a platform whose questions have no buttons of
// their own (fallbacks.ts's numbered questions, Signal's). A button carries its question's key;
// an answer in words must name its question as exactly: a reply quoting the question's message,
// a mail's In-Reply-To (both arrive as `InboundMessage.replyTo`), a reaction on it (read by the
// platform, which finds the question here by its message). A bare number names no question, so
// it is taken only where it cannot mean another: the one question open in its chat, of a kind a
// bare number may settle — never one about who may talk to Hearth. With more than one open it is
// asked back, never guessed: a pairing request that came after an approval must not take the
// owner's "1" meant for the approval, and the approval must not take a "1" meant for the request.
// Whose answer counts stays the press handler's to decide (only the owner's, for approvals).
import type { Choice, ChoiceQuestion, QuestionKind } from "./channel.ts";

/** Said to a bare number while more than one question is open in its chat. */
export const WHICH_ONE = "Which one? Reply to the question you mean.";
/** Said to a bare number when the one question open is about who may talk to Hearth. */
export const NAME_IT = "Reply to the question itself to answer it: who may talk to Hearth is never decided by a bare number.";
/** Said to a reply that names a question already settled. */
export const NO_LONGER_OPEN = "This request is no longer open.";

/** Whether a bare number may settle a question of this kind (when it is the only one open in its chat). */
export const bareAnswerable = (kind: QuestionKind): boolean => kind !== "access";

/** Questions kept open at once, over every chat; the oldest is forgotten first. */
const MAX_OPEN = 100;
/** Settled questions whose messages are still recognised (a late reply to one is told it is closed). */
const MAX_CLOSED = 200;

const BARE_NUMBER = /^\s*(\d{1,2})\s*$/;

/** What an answer in words does. */
export type AnswerReading<C extends Choice = Choice> =
  /** Not an answer: an ordinary message, passed on. */
  | { type: "none" }
  /** The press of `choice` on question `question`, whose handler decides whose answer counts. */
  | { type: "press"; question: OpenQuestion<C>; choice: C }
  /** Meant as an answer but answering nothing: the sender is told `text`, and nothing is settled. */
  | { type: "refused"; text: string };

export interface OpenQuestion<C extends Choice = Choice> {
  /** What `askChoices` returned for it (settleChoices names it by this). */
  id: string;
  key: string;
  kind: QuestionKind;
  /** Where it was asked, as the platform keys a chat. */
  chat: string;
  choices: C[];
  /** The platform's names of the messages it was sent as (`InboundMessage.replyTo.id`'s form). */
  names: string[];
}

/** The questions a channel asked and nobody settled yet. */
export class OpenQuestions<C extends Choice = Choice> {
  readonly #open = new Map<string, OpenQuestion<C>>();
  readonly #closed = new Set<string>();

  add(q: OpenQuestion<C>): void {
    this.#open.set(q.id, q);
    for (const oldest of this.#open.keys()) {
      if (this.#open.size <= MAX_OPEN) break;
      this.settle(oldest);
    }
  }

  /** The question is no longer open; a reply naming one of its messages is told so. */
  settle(id: string): void {
    const q = this.#open.get(id);
    if (!q) return;
    this.#open.delete(id);
    for (const name of q.names) this.#closed.add(name);
    for (const oldest of this.#closed) {
      if (this.#closed.size <= MAX_CLOSED) break;
      this.#closed.delete(oldest);
    }
  }

  /** The open question sent as the message `name` (a reaction's target); undefined when none is. */
  named(name: string): OpenQuestion<C> | undefined {
    for (const q of this.#open.values()) if (q.names.includes(name)) return q;
    return undefined;
  }

  /**
   * What `text`, written in `chat` as a reply to the message `replyTo` (if any), answers. Only a
   * text that is just a number is read. A reply naming an open question answers that one,
   * wherever it was asked (a platform's message names are its own: a mail's reply may start a
   * thread of its own); one naming a settled question is told it is closed. Otherwise the number
   * is bare: it is a press only when the chat has exactly one open question, which a bare number
   * may settle and which has that many choices.
   */
  read(chat: string, text: string, replyTo?: string): AnswerReading<C> {
    const n = BARE_NUMBER.exec(text)?.[1];
    if (n === undefined) return { type: "none" };
    const index = Number(n) - 1;
    if (replyTo !== undefined) {
      const named = this.named(replyTo);
      if (named) {
        const choice = named.choices[index];
        return choice ? { type: "press", question: named, choice } : { type: "refused", text: `Reply with one of its numbers, 1 to ${named.choices.length}.` };
      }
      if (this.#closed.has(replyTo)) return { type: "refused", text: NO_LONGER_OPEN };
    }
    const open = [...this.#open.values()].filter((q) => q.chat === chat);
    // A number none of the chat's questions offers is no answer at all: it is the sender's message.
    if (!open.some((q) => q.choices[index] !== undefined)) return { type: "none" };
    if (open.length > 1) return { type: "refused", text: WHICH_ONE };
    const only = open[0]!;
    if (!bareAnswerable(only.kind)) return { type: "refused", text: NAME_IT };
    return { type: "press", question: only, choice: only.choices[index]! };
  }
}

/** The open question for `q` as asked in `chat`, sent as the messages `names`. */
export const asked = <C extends Choice>(id: string, chat: string, q: ChoiceQuestion, choices: C[], names: string[]): OpenQuestion<C> => ({ id, key: q.key, kind: q.kind, chat, choices, names });
