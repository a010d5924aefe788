// A channel the configuration names that cannot start before it ever connects (no bot token):
// registered all the same, so that `hearth status`, the dashboard and the ready line list it as
// not running, with the reason and the fix, instead of leaving it out as if it were not wanted.
import type { Channel, ChannelId, ChannelStatus, ReplySink, SendReceipt } from "./channel.ts";

export class UnstartableChannel implements Channel {
  readonly id: ChannelId;
  readonly #reason: string;

  /** `reason` says what is missing and what adds it; it is shown as the channel's state. */
  constructor(id: ChannelId, reason: string) {
    this.id = id;
    this.#reason = reason;
  }

  /** Always rejects, and not as a temporary failure: nothing changes until a restart. */
  start(): Promise<void> {
    return Promise.reject(new Error(this.#reason));
  }

  stop(): Promise<void> {
    return Promise.resolve();
  }

  /** Never called: the registry gives a failed channel's replies a sink that only logs. */
  openReply(): ReplySink {
    throw new Error(`The ${this.id} channel is not running (${this.#reason}); the channel registry must not open replies on it.`);
  }

  send(): Promise<SendReceipt | void> {
    return Promise.reject(new Error(`${this.id} is not running: ${this.#reason}`));
  }

  status(): ChannelStatus {
    return { state: "failed", reason: this.#reason };
  }
}
