// Answers that are ready while their channel is not connected (a WhatsApp device logged out, a
// connection lost, a channel still linking at a start) wait here instead of being dropped: their
// final text is in the outbox, their inbox entries stay open, and they are delivered from the
// record — no model call, the messages they had — once the channel runs again, in this process
// or, after a restart, when recovery hands them over. A channel that failed (it needs the owner,
// like a device to link again) makes the owner hear on another channel which answers wait.
import type { ChannelId, ChannelStatus, InboundMessage, ReplyJournal, ReplySink } from "../../channels/channel.ts";
import type { Logger } from "../../process/log.ts";

/** What this needs of a reply the outbox recorded (its ReplyRecord). */
export interface RecordedReply {
  id: string;
  final?: unknown;
  delivered: boolean;
  messageIds: ReadonlyArray<string | undefined>;
}

/** What this needs of an open inbox entry (its InboxEntry). */
export interface OpenEntry {
  id: string;
  message: InboundMessage;
}

/** The outbox's side (gateway/outbox.ts). */
export interface HeldOutbox<R extends RecordedReply> {
  replyOf(entryId: string): R | undefined;
  /** Delivers `reply` from its final record; rejects when it could not be delivered. */
  redeliver(reply: R, to: InboundMessage, open: (to: InboundMessage, journal: ReplyJournal) => ReplySink): Promise<void>;
  release(entryId: string): void;
}

export interface HeldRepliesDeps<R extends RecordedReply> {
  outbox: HeldOutbox<R>;
  /** The inbox entry `id` while it is open; undefined once closed. */
  entry(id: string): OpenEntry | undefined;
  /** Closes entry `id` as answered. Must not throw. */
  markDone(id: string): void;
  /** The channel's state now; undefined for a channel that is not configured (nothing waits for it). */
  status(channel: ChannelId): ChannelStatus | undefined;
  /** Opens the reply an answer is delivered through (as recovery opens it). */
  openReply(to: InboundMessage, journal: ReplyJournal): ReplySink;
  /** Tells the owner on a channel other than `from`; must not throw. */
  tellOwner(from: ChannelId, text: string): void;
  log: Logger;
  /** How often the channels of waiting answers are looked at. Default 1 s. */
  pollMs?: number;
}

interface Held<R> {
  reply: R;
  entries: OpenEntry[];
  channel: ChannelId;
  told: boolean;
  delivering: boolean;
}

const DEFAULT_POLL_MS = 1_000;
const QUOTED = 80;

/** What the owner is told of an answer that waits for `channel`. */
export function heldNotice(channel: ChannelId, status: ChannelStatus, answered: string): string {
  const words = answered.replace(/\s+/g, " ").trim();
  const quoted = words.length > QUOTED ? `${words.slice(0, QUOTED - 1)}…` : words;
  const why = status.state === "failed" ? status.reason.replace(/\.$/, "") : `it is ${status.state}`;
  return `Not sent yet on ${channel}: the answer to "${quoted}". ${channel} is not connected (${why}); the answer goes out once it is connected again.`;
}

export class HeldReplies<R extends RecordedReply> {
  readonly #d: HeldRepliesDeps<R>;
  /** By reply id. */
  readonly #held = new Map<string, Held<R>>();
  #timer: NodeJS.Timeout | undefined;
  #stopped = false;

  constructor(deps: HeldRepliesDeps<R>) {
    this.#d = deps;
  }

  /**
   * The runs of entries `ids` ended. Each is closed, unless its answer could not be delivered
   * because its channel is not running: that one stays open and waits here.
   */
  runEnded(ids: readonly string[]): void {
    for (const id of ids) {
      const entry = this.#d.entry(id);
      const reply = this.#d.outbox.replyOf(id);
      if (entry && reply?.final && !reply.delivered && this.#waits(entry.message.channel)) this.#hold(reply, [entry], entry.message.channel);
      else this.#close([id]);
    }
  }

  /** A reply recorded before a restart, to deliver from its record: now when its channel runs, else once it does. */
  redeliver(reply: R, entries: OpenEntry[], to: InboundMessage): Promise<void> {
    if (this.#waits(to.channel)) {
      this.#hold(reply, entries, to.channel);
      return Promise.resolve();
    }
    return this.#deliver({ reply, entries, channel: to.channel, told: true, delivering: false }, to);
  }

  /** Answers waiting now, for `hearth status` and tests. */
  waiting(): number {
    return this.#held.size;
  }

  stop(): void {
    this.#stopped = true;
    clearInterval(this.#timer);
    this.#timer = undefined;
  }

  /** The channel is configured and not running: an answer for it can wait for it. */
  #waits(channel: ChannelId): boolean {
    const s = this.#d.status(channel);
    return s !== undefined && s.state !== "running";
  }

  #hold(reply: R, entries: OpenEntry[], channel: ChannelId): void {
    const known = this.#held.get(reply.id);
    const held: Held<R> = known ?? { reply, entries: [], channel, told: false, delivering: false };
    for (const e of entries) if (!held.entries.some((h) => h.id === e.id)) held.entries.push(e);
    this.#held.set(reply.id, held);
    const status = this.#d.status(channel)!;
    if (!known) this.#d.log.warn("reply.held", { reply: reply.id, channel, state: status.state, action: "delivered once the channel is connected again" });
    this.#tellOnce(held, status);
    if (!this.#timer && !this.#stopped) {
      this.#timer = setInterval(() => this.#poll(), this.#d.pollMs ?? DEFAULT_POLL_MS);
      this.#timer.unref();
    }
  }

  /** A channel that failed needs its owner: they hear which answers wait, once per answer. */
  #tellOnce(held: Held<R>, status: ChannelStatus): void {
    if (held.told || status.state !== "failed") return;
    held.told = true;
    const first = held.entries[0]?.message;
    this.#d.tellOwner(held.channel, heldNotice(held.channel, status, first?.text ?? ""));
  }

  #poll(): void {
    for (const held of this.#held.values()) {
      if (held.delivering) continue;
      const status = this.#d.status(held.channel);
      if (status?.state === "running") {
        const to = held.entries[0]?.message;
        if (to) void this.#deliver(held, to);
        continue;
      }
      if (status) this.#tellOnce(held, status);
    }
    if (this.#held.size === 0) {
      clearInterval(this.#timer);
      this.#timer = undefined;
    }
  }

  async #deliver(held: Held<R>, to: InboundMessage): Promise<void> {
    held.delivering = true;
    const { reply, entries } = held;
    this.#d.log.info("outbox.redelivering", { reply: reply.id, entries: entries.map((e) => e.id), messages: reply.messageIds.length });
    try {
      await this.#d.outbox.redeliver(reply, to, this.#d.openReply);
    } catch (error) {
      held.delivering = false;
      // Its channel went away again meanwhile: it waits on. Any other failure is final.
      if (this.#waits(held.channel)) return this.#hold(reply, entries, held.channel);
      this.#d.log.error("outbox.redeliver_failed", { reply: reply.id, error });
    }
    this.#held.delete(reply.id);
    this.#close(entries.map((e) => e.id));
  }

  #close(ids: readonly string[]): void {
    for (const id of ids) {
      this.#d.outbox.release(id);
      this.#d.markDone(id);
    }
  }
}
