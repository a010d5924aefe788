// The channels a gateway runs. Each starts in isolation: one failing (a bad token) is marked
// failed with its reason and the others keep serving.
import type { Channel, ChannelId, ChannelStatus, DeliveryTarget, InboundMessage, ReplySink } from "../channels/channel.ts";
import { isDeliveryTarget } from "../channels/channel.ts";
import type { Logger } from "../log.ts";

export class ChannelRegistry {
  readonly #channels = new Map<ChannelId, Channel>();
  readonly #failures = new Map<ChannelId, string>();
  readonly #log: Logger;

  constructor(log: Logger) {
    this.#log = log;
  }

  register(channel: Channel): void {
    this.#channels.set(channel.id, channel);
  }

  get(id: ChannelId): Channel | undefined {
    return this.#channels.get(id);
  }

  ids(): ChannelId[] {
    return [...this.#channels.keys()];
  }

  /** Starts every channel; resolves when each has started or failed. */
  async startAll(onMessage: (m: InboundMessage) => void): Promise<void> {
    await Promise.all(
      [...this.#channels.values()].map(async (ch) => {
        try {
          await ch.start(onMessage);
          this.#log.info("channel.started", { channel: ch.id });
        } catch (err) {
          const reason = err instanceof Error ? err.message : String(err);
          this.#failures.set(ch.id, reason);
          this.#log.error("channel.failed", { channel: ch.id, reason });
        }
      }),
    );
  }

  async stopAll(): Promise<void> {
    await Promise.all(
      [...this.#channels.values()].map(async (ch) => {
        try {
          await ch.stop();
        } catch (err) {
          this.#log.warn("channel.stop_failed", { channel: ch.id, error: err });
        }
      }),
    );
  }

  status(id: ChannelId): ChannelStatus {
    const failure = this.#failures.get(id);
    if (failure) return { state: "failed", reason: failure };
    return this.#channels.get(id)?.status() ?? { state: "stopped" };
  }

  /** A reply on the message's channel; when that channel is gone, a sink that only logs. */
  openReply(to: InboundMessage | DeliveryTarget): ReplySink {
    const id = isDeliveryTarget(to) ? to.channel : to.channel;
    const ch = this.#channels.get(id);
    if (ch && this.status(id).state !== "failed") return ch.openReply(to);
    return this.#discardingSink(id);
  }

  /** A proactive message; rejects when the channel is missing or the send fails. */
  async send(to: DeliveryTarget, text: string): Promise<void> {
    const ch = this.#channels.get(to.channel);
    if (!ch) throw new Error(`channel ${to.channel} is not running`);
    await ch.send(to, text);
  }

  #discardingSink(id: ChannelId): ReplySink {
    const log = this.#log;
    return {
      textDelta: () => {},
      textReset: () => {},
      toolStarted: () => {},
      toolFinished: () => {},
      finish: async (text) => log.warn("reply.no_channel", { channel: id, chars: text.length }),
      fail: async (message) => log.warn("reply.no_channel", { channel: id, message }),
    };
  }
}
