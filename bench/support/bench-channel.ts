// A channel for benchmarks: messages are injected directly, replies are timed and counted.
import type { Channel, ChannelId, ChannelStatus, DeliveryTarget, InboundMessage, ReplySink } from "../../src/channels/channel.ts";

export class BenchChannel implements Channel {
  readonly id: ChannelId;
  /** Per inbound message id: how many final replies it got, and when the last arrived. */
  readonly finals = new Map<string, { count: number; at: number; text: string }>();
  #onMessage: ((m: InboundMessage) => void) | null = null;

  constructor(id: ChannelId = "telegram") {
    this.id = id;
  }

  async start(onMessage: (m: InboundMessage) => void): Promise<void> {
    this.#onMessage = onMessage;
  }
  async stop(): Promise<void> {}
  status(): ChannelStatus {
    return { state: "running" };
  }
  async send(): Promise<void> {}

  inject(m: InboundMessage): void {
    this.#onMessage!(m);
  }

  openReply(to: InboundMessage | DeliveryTarget): ReplySink {
    const id = "id" in to ? to.id : "proactive";
    const record = (text: string) => {
      const prev = this.finals.get(id);
      this.finals.set(id, { count: (prev?.count ?? 0) + 1, at: performance.now(), text });
    };
    return {
      textDelta: () => {},
      textReset: () => {},
      toolStarted: () => {},
      toolFinished: () => {},
      finish: async (text) => record(text),
      fail: async (message) => record(`FAIL ${message}`),
    };
  }
}

export function benchMessage(id: string, chat: { id: string; type: "dm" | "group" }, sender: string, text: string): InboundMessage {
  return {
    id,
    channel: "telegram",
    chat,
    sender: { id: sender, name: `user${sender}`, isOwner: sender === "1" },
    text,
    addressed: true,
    receivedAt: Date.now(),
  };
}
