// Where a platform lacks a capability, Hearth falls back here and nowhere else, so that
// approvals, pairing, `/model` and budget notices work on every channel:
// - no buttons: a question is sent as numbered choices ("reply 1 to allow once"), and a reply
//   that is just one of the numbers, in that chat, is the press (the handler decides whose
//   answer counts, exactly as for a button: only the owner's, for approvals);
// - no edits: the answer is sent once it is complete, split at the platform's message length,
//   each part recorded in the reply's journal so a restart does not send it again.
// An adapter that has what a capability needs is returned as it is.
import type { ChannelCapabilities } from "./capabilities.ts";
import type {
  Channel,
  ChoiceHandler,
  ChoiceQuestion,
  DeliveryTarget,
  InboundMessage,
  PlatformCommand,
  ReplyJournal,
  ReplyOutcome,
  ReplySink,
} from "./channel.ts";
import { isDeliveryTarget } from "./channel.ts";
import { splitMessage } from "./chunk.ts";

/** Questions waiting for a numbered reply, per chat; the newest is the one a number answers. Bounded. */
const MAX_OPEN_PER_CHAT = 20;

/** `channel` with the fallbacks its capabilities call for (itself when it needs none). */
export function withFallbacks(channel: Channel, capabilities: ChannelCapabilities): Channel {
  const needsChoices = !channel.askChoices;
  const needsFinalReplies = !capabilities.edits;
  if (!needsChoices && !needsFinalReplies) return channel;
  return new FallbackChannel(channel, capabilities, needsChoices, needsFinalReplies);
}

/** The text of a question asked by numbered replies. */
export function numberedQuestion(q: ChoiceQuestion): string {
  const lines = q.choices.map((c, i) => `${i + 1}. ${c.label}`);
  const first = q.choices[0];
  return `${q.text}\n\n${lines.join("\n")}\n\n${first ? `Reply with a number (e.g. 1 to ${first.label.toLowerCase()}).` : ""}`.trimEnd();
}

const chatKey = (channel: string, chatId: string, threadId?: string) => `${channel}:${chatId}:${threadId ?? ""}`;

interface OpenQuestion {
  question: ChoiceQuestion;
  messageId: string;
}

class FallbackChannel implements Channel {
  readonly id: Channel["id"];
  readonly #inner: Channel;
  readonly #caps: ChannelCapabilities;
  readonly #open = new Map<string, OpenQuestion[]>();
  #handler: ChoiceHandler | undefined;
  #asked = 0;
  readonly askChoices?: Channel["askChoices"];
  readonly settleChoices?: Channel["settleChoices"];
  readonly onChoice?: Channel["onChoice"];

  constructor(inner: Channel, caps: ChannelCapabilities, choices: boolean, finalReplies: boolean) {
    this.id = inner.id;
    this.#inner = inner;
    this.#caps = caps;
    if (choices) {
      this.askChoices = (to, q) => this.#ask(to, q);
      this.settleChoices = (to, messageId, text) => this.#settle(to, messageId, text);
      this.onChoice = (h) => void (this.#handler = h);
    } else {
      this.askChoices = inner.askChoices!.bind(inner);
      if (inner.settleChoices) this.settleChoices = inner.settleChoices.bind(inner);
      if (inner.onChoice) this.onChoice = inner.onChoice.bind(inner);
    }
    if (!finalReplies) this.openReply = inner.openReply.bind(inner);
    if (inner.sendFile) this.sendFile = inner.sendFile.bind(inner);
    if (inner.sendNote) this.sendNote = inner.sendNote.bind(inner);
    if (inner.showActivity) this.showActivity = inner.showActivity.bind(inner);
  }

  sendFile?: Channel["sendFile"];
  sendNote?: Channel["sendNote"];
  showActivity?: Channel["showActivity"];

  start(onMessage: (m: InboundMessage) => void | Promise<void>, onCommand?: (c: PlatformCommand) => void): Promise<void> {
    return this.#inner.start((m) => (this.#answered(m) ? undefined : onMessage(m)), onCommand);
  }

  stop(): Promise<void> {
    return this.#inner.stop();
  }

  send: Channel["send"] = (to, text, meta) => this.#inner.send(to, text, meta);

  status(): ReturnType<Channel["status"]> {
    return this.#inner.status();
  }

  openReply(to: InboundMessage | DeliveryTarget, journal?: ReplyJournal): ReplySink {
    const target: DeliveryTarget = isDeliveryTarget(to) ? to : { channel: to.channel, chatId: to.chat.id, ...(to.chat.threadId ? { threadId: to.chat.threadId } : {}) };
    // In a group, the answer quotes the message it answers: others write there too.
    const answering = !isDeliveryTarget(to) && to.chat.type === "group" ? to : undefined;
    return new FinalReply(this.#inner, target, this.#caps.maxMessageLength, journal, answering);
  }

  async #ask(to: DeliveryTarget, q: ChoiceQuestion): Promise<string> {
    await this.#inner.send(to, numberedQuestion(q), { from: "Hearth", keep: false });
    const messageId = `numbered-${++this.#asked}-${q.key}`;
    const key = chatKey(to.channel, to.chatId, to.threadId);
    const open = [...(this.#open.get(key) ?? []), { question: q, messageId }].slice(-MAX_OPEN_PER_CHAT);
    this.#open.set(key, open);
    return messageId;
  }

  async #settle(to: DeliveryTarget, messageId: string, text: string): Promise<void> {
    const key = chatKey(to.channel, to.chatId, to.threadId);
    const open = (this.#open.get(key) ?? []).filter((o) => o.messageId !== messageId);
    if (open.length > 0) this.#open.set(key, open);
    else this.#open.delete(key);
    await this.#inner.send(to, text, { from: "Hearth", keep: false });
  }

  /** A bare number answering the chat's newest open question: the press, answered here and not passed on. */
  #answered(m: InboundMessage): boolean {
    const number = /^\s*(\d{1,2})\s*$/.exec(m.text)?.[1];
    if (!number || !this.#handler) return false;
    const open = this.#open.get(chatKey(m.channel, m.chat.id, m.chat.threadId));
    const q = open?.at(-1)?.question;
    const choice = q?.choices[Number(number) - 1];
    if (!q || !choice) return false;
    const to: DeliveryTarget = { channel: m.channel, chatId: m.chat.id, ...(m.chat.threadId ? { threadId: m.chat.threadId } : {}) };
    // The handler must not throw; its answer (shown to the presser alone on a platform with buttons) is a message here.
    void this.#handler({ key: q.key, choiceId: choice.id, by: m.sender, channel: m.channel })
      .then((answer) => (answer ? this.#inner.send(to, answer, { from: "Hearth", keep: false }) : undefined))
      .catch(() => undefined);
    return true;
  }
}

/** How often "typing…" is shown again while a whole answer is being written (platforms show it for 5–25 s). */
const TYPING_EVERY_MS = 4_000;

/**
 * A reply on a platform that cannot edit: nothing but "typing…" (where the platform shows it)
 * until the answer is complete, then its parts in order.
 */
class FinalReply implements ReplySink {
  readonly #channel: Channel;
  readonly #to: DeliveryTarget;
  readonly #max: number;
  readonly #journal: ReplyJournal | undefined;
  #text = "";
  #done = false;
  #typing: NodeJS.Timeout | undefined;
  readonly #answering: InboundMessage | undefined;

  constructor(channel: Channel, to: DeliveryTarget, max: number, journal?: ReplyJournal, answering?: InboundMessage) {
    this.#channel = channel;
    this.#to = to;
    this.#max = max;
    this.#journal = journal;
    this.#answering = answering;
    if (channel.showActivity) {
      const show = () => void channel.showActivity!(to, "typing").catch(() => clearInterval(this.#typing));
      show();
      this.#typing = setInterval(show, TYPING_EVERY_MS);
      this.#typing.unref();
    }
  }

  textDelta(text: string): void {
    this.#text += text;
  }

  textReset(text: string): void {
    this.#text = text;
  }

  toolStarted(): void {}

  toolFinished(): void {}

  async finish(finalText: string, _outcome?: ReplyOutcome): Promise<void> {
    await this.#deliver(finalText);
  }

  async fail(message: string): Promise<void> {
    await this.#deliver(this.#text.trim() ? `${this.#text.trim()}\n\n${message}` : message);
  }

  async #deliver(text: string): Promise<void> {
    if (this.#done) return;
    this.#done = true;
    clearInterval(this.#typing);
    const parts = splitMessage(text.trim() || "(no answer)", this.#max);
    for (const [i, part] of parts.entries()) {
      // Sent before a restart: the journal has it, and it is not sent twice.
      if (this.#journal?.messageIds[i] !== undefined) continue;
      const key = this.#journal ? { messageKey: `${this.#journal.key}:${i}` } : {};
      await this.#channel.send(this.#to, part, { from: "Hearth", keep: false, ...key, ...(i === 0 && this.#answering ? { answering: this.#answering } : {}) });
      this.#journal?.messageCreated(i, `${this.#journal.key}:${i}`);
    }
  }
}
