// Questions a tool asks the person a run answers (an MCP server's elicitation), as plain chat
// messages: the question goes to the chat, and that person's next message there is the answer —
// it is not a new message for the agent. One question per chat at a time; a second waits for the
// first. A slash command is never taken as an answer (/stop still stops the run). This is the one
// place a later change can turn questions into buttons.
import type { DeliveryTarget, InboundMessage } from "../channels/channel.ts";

interface Waiting {
  sender: string;
  resolve: (answer: string | null) => void;
}

export class PendingQuestions {
  readonly #waiting = new Map<string, Waiting>();
  /** Per chat: the question being asked, so the next one waits for it. */
  readonly #chains = new Map<string, Promise<unknown>>();

  /**
   * Sends `text` through `send` and resolves with `sender`'s next message in `to`'s chat; null
   * after `timeoutMs`, when `signal` aborts, or when the question could not be sent. Never rejects.
   */
  ask(to: DeliveryTarget, sender: string, text: string, send: (text: string) => Promise<unknown>, opts: { timeoutMs: number; signal: AbortSignal }): Promise<string | null> {
    const key = chatKey(to.channel, to.chatId, to.threadId);
    const turn = (this.#chains.get(key) ?? Promise.resolve()).then(() => this.#askNow(key, sender, text, send, opts));
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
    this.#waiting.delete(key);
    w.resolve(m.text);
    return true;
  }

  async #askNow(key: string, sender: string, text: string, send: (text: string) => Promise<unknown>, opts: { timeoutMs: number; signal: AbortSignal }): Promise<string | null> {
    if (opts.signal.aborted) return null;
    const answer = new Promise<string | null>((resolve) => {
      const done = (a: string | null) => {
        clearTimeout(timer);
        opts.signal.removeEventListener("abort", onAbort);
        if (this.#waiting.get(key)?.resolve === done) this.#waiting.delete(key);
        resolve(a);
      };
      const onAbort = () => done(null);
      const timer = setTimeout(() => done(null), opts.timeoutMs);
      opts.signal.addEventListener("abort", onAbort, { once: true });
      this.#waiting.set(key, { sender, resolve: done });
    });
    try {
      await send(text);
    } catch {
      this.#waiting.get(key)?.resolve(null);
    }
    return answer;
  }
}

const chatKey = (channel: string, chatId: string, threadId?: string): string => `${channel}:${chatId}${threadId ? `:${threadId}` : ""}`;
