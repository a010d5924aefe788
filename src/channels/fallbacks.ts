// Where a platform lacks a capability, Hearth falls back here and nowhere else, so that
// approvals, pairing, `/model` and budget notices work on every channel:
// - no buttons: a question is sent as numbered choices, and a reply to it that is just one of the
//   numbers is the press (the handler decides whose answer counts, exactly as for a button: only
//   the owner's, for approvals). The reply names its question as the platform lets it (a quoted
//   message, a mail's In-Reply-To: `InboundMessage.replyTo`); a bare number only where it cannot
//   mean another question (answers.ts);
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
import { OpenQuestions, asked, type AnswerReading } from "./answers.ts";
import { splitMessage } from "./chunk.ts";

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
  return `${q.text}\n\n${lines.join("\n")}\n\n${first ? `Reply to this message with a number (e.g. 1 to ${first.label.toLowerCase()}).` : ""}`.trimEnd();
}

const chatKey = (channel: string, chatId: string, threadId?: string) => `${channel}:${chatId}:${threadId ?? ""}`;

class FallbackChannel implements Channel {
  readonly id: Channel["id"];
  readonly #inner: Channel;
  readonly #caps: ChannelCapabilities;
  readonly #open = new OpenQuestions();
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

  /**
   * The question as one message with its numbered choices; the platform's names of what it was
   * sent as (its receipt's `messageIds`) are what a reply to it names. A platform that does not
   * say them gets bare answers only.
   */
  async #ask(to: DeliveryTarget, q: ChoiceQuestion): Promise<string> {
    const receipt = await this.#inner.send(to, numberedQuestion(q), { from: "Hearth", keep: false });
    const id = `numbered-${++this.#asked}-${q.key}`;
    const names = receipt?.type === "delivered" ? (receipt.messageIds ?? []) : [];
    this.#open.add(asked(id, chatKey(to.channel, to.chatId, to.threadId), q, q.choices, names));
    return id;
  }

  async #settle(to: DeliveryTarget, messageId: string, text: string): Promise<void> {
    this.#open.settle(messageId);
    await this.#inner.send(to, text, { from: "Hearth", keep: false });
  }

  /** A number answering a question: the press (or what the sender is told instead), handled here and not passed on. */
  #answered(m: InboundMessage): boolean {
    if (!this.#handler || (m.attachments?.length ?? 0) > 0) return false;
    const reading: AnswerReading = this.#open.read(chatKey(m.channel, m.chat.id, m.chat.threadId), m.text, m.replyTo?.id);
    const to: DeliveryTarget = { channel: m.channel, chatId: m.chat.id, ...(m.chat.threadId ? { threadId: m.chat.threadId } : {}) };
    const tell = (text: string) => (text ? this.#inner.send(to, text, { from: "Hearth", keep: false, answering: m }) : undefined);
    switch (reading.type) {
      case "none":
        return false;
      case "refused":
        void Promise.resolve(tell(reading.text)).catch(() => undefined);
        return true;
      case "press":
        // The handler must not throw; its answer (shown to the presser alone on a platform with buttons) is a message here.
        void this.#handler({ key: reading.question.key, choiceId: reading.choice.id, by: m.sender, channel: m.channel })
          .then(tell)
          .catch(() => undefined);
        return true;
      default:
        return reading satisfies never;
    }
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
