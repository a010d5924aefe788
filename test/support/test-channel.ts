// A chat channel for in-process gateway tests and benchmarks: messages are injected, replies
// recorded (with the time they were handed over).
import type { Channel, ChannelId, ChannelStatus, ChoiceHandler, ChoiceQuestion, DeliveryTarget, InboundMessage, ReplySink } from "../../src/channels/channel.ts";

export class TestChannel implements Channel {
  readonly id: ChannelId;
  /** Final texts by inbound message id (or "send:<chatId>" for proactive messages). */
  readonly replies = new Map<string, string[]>();
  /** performance.now() when the latest final text for that key was handed to the channel. */
  readonly repliedAt = new Map<string, number>();
  #onMessage: ((m: InboundMessage) => void) | null = null;
  #seq = 0;

  constructor(id: ChannelId = "telegram") {
    this.id = id;
  }

  async start(onMessage: (m: InboundMessage) => void): Promise<void> {
    this.#onMessage = onMessage;
  }
  async stop(): Promise<void> {
    this.#onMessage = null;
  }
  status(): ChannelStatus {
    return this.#onMessage ? { state: "running" } : { state: "stopped" };
  }

  async send(to: DeliveryTarget, text: string): Promise<void> {
    this.#record(`send:${to.chatId}`, text);
  }

  openReply(to: InboundMessage | DeliveryTarget): ReplySink {
    const key = "chatId" in to ? `send:${to.chatId}` : to.id;
    return {
      textDelta: () => {},
      textReset: () => {},
      toolStarted: () => {},
      toolFinished: () => {},
      finish: async (text) => this.#record(key, text),
      fail: async (message) => this.#record(key, `FAILED: ${message}`),
    };
  }

  /** Delivers a message as the platform would. */
  deliver(m: InboundMessage): void {
    this.#onMessage!(m);
  }

  /**
   * Delivers a message built from the essentials; returns its id. `isOwner`: the platform's
   * reading of its owner ids (default: not the owner). `members`: who is in a DM (default: its
   * sender alone, as in a platform's one-to-one chat). `outside`: the message carries outside
   * content (InboundMessage.outside, as every mail does).
   */
  say(opts: { chat: string; type?: "dm" | "group"; sender: string; text: string; title?: string; id?: string; isOwner?: boolean; members?: readonly string[]; outside?: string }): string {
    const id = opts.id ?? `t${++this.#seq}`;
    this.deliver({
      id,
      channel: this.id,
      chat: { id: opts.chat, ...(opts.type === "dm" ? { type: "dm" as const, members: opts.members ?? [opts.sender] } : { type: "group" as const }), ...(opts.title ? { title: opts.title } : {}) },
      sender: { id: opts.sender, name: `user${opts.sender}`, isOwner: opts.isOwner ?? false },
      text: opts.text,
      addressed: true,
      receivedAt: Date.now(),
      ...(opts.outside ? { outside: opts.outside } : {}),
    });
    return id;
  }

  #record(key: string, text: string): void {
    this.replies.set(key, [...(this.replies.get(key) ?? []), text]);
    this.repliedAt.set(key, performance.now());
  }
}

/** A TestChannel with buttons: questions and their settled texts are recorded. */
export class ButtonChannel extends TestChannel {
  readonly questions: Array<{ to: DeliveryTarget; q: ChoiceQuestion; settled?: string }> = [];
  handler: ChoiceHandler | undefined;
  onChoice(h: ChoiceHandler): void {
    this.handler = h;
  }
  async askChoices(to: DeliveryTarget, q: ChoiceQuestion): Promise<string> {
    this.questions.push({ to, q });
    return String(this.questions.length);
  }
  async settleChoices(_to: DeliveryTarget, id: string, text: string): Promise<void> {
    this.questions[Number(id) - 1]!.settled = text;
  }
}
