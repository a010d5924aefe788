// Questions a tool asks the person a run answers (an MCP server's elicitation): the question
// goes to the chat, and that person's next message there is the answer — it is not a new
// message for the agent. A question with choices (yes/no, a few options, Decline) shows them as
// buttons where the chat's channel has them (Telegram, Discord); a press answers as the typed
// words would, and typing still works. Only the person asked answers, by message or by press:
// anyone else's press changes nothing. The terminal keeps to typed answers (its choices are typed
// digits anyway). One question per chat at a time; a second waits for the first. A slash command
// is never taken as an answer (/stop still stops the run).
import { randomBytes } from "node:crypto";
import type { AskChoice, AskOptions } from "../../agent/tool.ts";
import type { ChoicePress, DeliveryTarget, InboundMessage } from "../../channels/channel.ts";
import type { Logger } from "../../process/log.ts";
import type { ChannelRegistry } from "../delivery/channel-registry.ts";

/** What the questions need of the channels. */
type QuestionChannels = Pick<ChannelRegistry, "send" | "canAsk" | "askChoices" | "settleChoices">;

interface Waiting {
  sender: string;
  /** The key of the question's buttons, when it has them. */
  buttons?: string;
  choices: readonly AskChoice[];
  /** Ends the question with `answer`; `outcome` is the line its buttons are replaced by. */
  resolve: (answer: string | null, outcome: string) => void;
}

export class PendingQuestions {
  readonly #waiting = new Map<string, Waiting>();
  /** Per chat: the question being asked, so the next one waits for it. */
  readonly #chains = new Map<string, Promise<unknown>>();
  readonly #channels: QuestionChannels;
  readonly #log: Logger;

  constructor(channels: QuestionChannels, log: Logger) {
    this.#channels = channels;
    this.#log = log;
  }

  /**
   * Asks `text` in `to`'s chat (with `opts.choices` as buttons where the channel has them) and
   * resolves with `sender`'s next message there or the answer of the button they pressed; null
   * after `opts.timeoutMs`, when `opts.signal` aborts, or when the question could not be sent.
   * Never rejects.
   */
  ask(to: DeliveryTarget, sender: string, text: string, opts: AskOptions): Promise<string | null> {
    const key = chatKey(to.channel, to.chatId, to.threadId);
    const turn = (this.#chains.get(key) ?? Promise.resolve()).then(() => this.#askNow(key, to, sender, text, opts));
    const tail = turn.catch(() => null);
    this.#chains.set(key, tail);
    void tail.then(() => {
      if (this.#chains.get(key) === tail) this.#chains.delete(key);
    });
    return tail;
  }

  /** Takes `m` as the answer to the question waiting in its chat; false when it is not one. */
  answer(m: InboundMessage): boolean {
    if (m.text.trimStart().startsWith("/")) return false;
    const key = chatKey(m.channel, m.chat.id, m.chat.threadId);
    const w = this.#waiting.get(key);
    if (!w || w.sender !== m.sender.id) return false;
    w.resolve(m.text, "Answered in the chat.");
    return true;
  }

  /** Whether `key` names the buttons of a question asked here (else they are someone else's). */
  has(key: string): boolean {
    return [...this.#waiting.values()].some((w) => w.buttons === key);
  }

  /** A press on a question's button; resolves with the short answer the presser alone sees. */
  async press(p: ChoicePress): Promise<string> {
    const w = [...this.#waiting.values()].find((x) => x.buttons === p.key);
    if (!w) return "This question is no longer open.";
    if (w.sender !== p.by.id) return "Only the person who was asked can answer this.";
    const choice = w.choices[Number(p.choiceId)];
    if (choice === undefined) return "Unknown choice.";
    w.resolve(choice.answer, `${p.by.name}: ${choice.label}`);
    return `${choice.label}.`;
  }

  async #askNow(key: string, to: DeliveryTarget, sender: string, text: string, opts: AskOptions): Promise<string | null> {
    if (opts.signal.aborted) return null;
    const choices = opts.choices ?? [];
    const buttons = choices.length > 0 && to.channel !== "cli" && this.#channels.canAsk(to.channel) ? `e${randomBytes(6).toString("base64url")}` : undefined;
    // The buttons' message, once shown, and how the question ended, once it did: whichever comes
    // second takes the buttons off.
    let shown: string | undefined;
    let outcome: string | undefined;
    const settle = () => {
      if (shown === undefined || outcome === undefined) return;
      const messageId = shown;
      shown = undefined;
      void this.#channels.settleChoices(to, messageId, `${text}\n\n${outcome}`).catch((err: unknown) => this.#log.warn("question.settle_failed", { channel: to.channel, error: err }));
    };
    const answer = new Promise<string | null>((resolve) => {
      const done = (a: string | null, how: string) => {
        if (outcome !== undefined) return;
        clearTimeout(timer);
        opts.signal.removeEventListener("abort", onAbort);
        if (this.#waiting.get(key)?.resolve === done) this.#waiting.delete(key);
        outcome = how;
        settle();
        resolve(a);
      };
      const onAbort = () => done(null, "The run stopped before an answer.");
      const timer = setTimeout(() => done(null, "⌛ No answer in time."), opts.timeoutMs);
      opts.signal.addEventListener("abort", onAbort, { once: true });
      this.#waiting.set(key, { sender, choices, resolve: done, ...(buttons ? { buttons } : {}) });
    });
    try {
      if (buttons) {
        shown = await this.#channels.askChoices(to, { key: buttons, kind: "question", text, choices: choices.map((c, i) => ({ id: String(i), label: c.label })) }).catch(async (err: unknown) => {
          // No buttons after all (the platform refused them): the question in words.
          this.#log.warn("question.buttons_failed", { channel: to.channel, error: err });
          await this.#channels.send(to, text, { from: "Hearth" });
          return undefined;
        });
        settle();
      } else await this.#channels.send(to, text, { from: "Hearth" });
    } catch {
      this.#waiting.get(key)?.resolve(null, "");
    }
    return answer;
  }
}

const chatKey = (channel: string, chatId: string, threadId?: string): string => `${channel}:${chatId}${threadId ? `:${threadId}` : ""}`;
