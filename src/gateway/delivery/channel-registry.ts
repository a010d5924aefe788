// The channels a gateway runs. Each starts in isolation: one failing (a bad token) is marked
// failed with its reason and the others keep serving.
import type { Channel, ChannelId, ChatActivity, ChannelStatus, ChoiceHandler, ChoiceQuestion, DeliveryTarget, InboundMessage, OutboundFile, PlatformCommand, ReplyJournal, ReplySink, SendMeta, SendReceipt } from "../../channels/channel.ts";
import { isDeliveryTarget, isRetryableStartError, relaySink } from "../../channels/channel.ts";
import { CliChannel } from "../../channels/terminal/channel.ts";
import { redact, type Logger } from "../../process/log.ts";

export class ChannelRegistry {
  readonly #channels = new Map<ChannelId, Channel>();
  readonly #failures = new Map<ChannelId, string>();
  readonly #retrying = new Map<ChannelId, { reason: string; timer: NodeJS.Timeout }>();
  readonly #log: Logger;
  #onMessage: ((m: InboundMessage) => void | Promise<void>) | null = null;
  #onCommand: ((c: PlatformCommand) => void) | undefined;
  #stopped = false;

  readonly #retryBaseMs: number;

  /** `retryBaseMs`: the first retry delay after a temporary start failure (then doubling, to 5 min). */
  constructor(log: Logger, opts: { retryBaseMs?: number } = {}) {
    this.#log = log;
    this.#retryBaseMs = opts.retryBaseMs ?? 5_000;
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

  /**
   * Starts every channel. Resolves when each has started or failed, or after `waitMs`: a slow
   * platform must not hold back the gateway's readiness; it keeps connecting in the background.
   * A channel that failed for a temporary reason is started again later, with backoff.
   */
  async startAll(onMessage: (m: InboundMessage) => void | Promise<void>, opts: { waitMs?: number; onCommand?: (c: PlatformCommand) => void } = {}): Promise<void> {
    this.#onMessage = onMessage;
    // A command's answer is chat output like any reply: secrets are redacted from it here too.
    const onCommand = opts.onCommand;
    this.#onCommand = onCommand && ((c) => onCommand({ message: c.message, answer: (text) => c.answer(redact(text)) }));
    const starts = [...this.#channels.values()].map((ch) => this.#start(ch, 0));
    let timer: NodeJS.Timeout | undefined;
    const waited = new Promise<void>((resolve) => {
      timer = setTimeout(resolve, opts.waitMs ?? 5_000);
    });
    await Promise.race([Promise.all(starts), waited]);
    clearTimeout(timer);
  }

  async #start(ch: Channel, attempt: number): Promise<void> {
    if (this.#stopped || !this.#onMessage) return;
    try {
      await ch.start(this.#onMessage, this.#onCommand);
      this.#failures.delete(ch.id);
      this.#retrying.delete(ch.id);
      this.#log.info("channel.started", { channel: ch.id, ...(attempt > 0 ? { attempt: attempt + 1 } : {}) });
    } catch (err) {
      const reason = err instanceof Error ? err.message : String(err);
      if (!isRetryableStartError(err) || this.#stopped) {
        this.#retrying.delete(ch.id);
        this.#failures.set(ch.id, reason);
        this.#log.error("channel.failed", { channel: ch.id, reason });
        return;
      }
      const delayMs = Math.min(this.#retryBaseMs * 2 ** attempt, 300_000);
      this.#log.warn("channel.retrying", { channel: ch.id, reason, inSeconds: delayMs / 1000 });
      const timer = setTimeout(() => void this.#start(ch, attempt + 1), delayMs);
      timer.unref();
      this.#retrying.set(ch.id, { reason, timer });
    }
  }

  async stopAll(): Promise<void> {
    this.#stopped = true;
    for (const r of this.#retrying.values()) clearTimeout(r.timer);
    this.#retrying.clear();
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
    const retry = this.#retrying.get(id);
    if (retry) return { state: "reconnecting", detail: `could not start (${retry.reason}); trying again` };
    return this.#channels.get(id)?.status() ?? { state: "stopped" };
  }

  /**
   * A reply on the message's channel. When that channel failed, a reply with a journal (an
   * answer, which must not be lost) is refused at its delivery, so its record waits for the
   * channel (held-replies.ts); any other gets a sink that only logs. Without the channel, too.
   */
  openReply(to: InboundMessage | DeliveryTarget, journal?: ReplyJournal): ReplySink {
    const id = isDeliveryTarget(to) ? to.channel : to.channel;
    const ch = this.#channels.get(id);
    const status = this.status(id);
    if (ch && status.state !== "failed") return redactingSink(ch.openReply(to, journal));
    if (ch && journal && status.state === "failed") return this.#refusingSink(id, status.reason);
    return this.#discardingSink(id);
  }

  /** A line about `to` that is not its answer (see Channel.sendNote); rejects when it could not be delivered. */
  async note(to: InboundMessage, text: string, journal?: ReplyJournal): Promise<void> {
    const ch = this.#channels.get(to.channel);
    if (ch?.sendNote) return ch.sendNote(to, redact(text));
    await this.openReply(to, journal).finish(text);
  }

  /**
   * A proactive message; rejects when the channel is missing or the send fails. `kept`: the
   * channel keeps it for later (the terminal's mailbox, see Channel.send).
   */
  async send(to: DeliveryTarget, text: string, meta?: SendMeta): Promise<SendReceipt> {
    const ch = this.#channels.get(to.channel);
    if (!ch) throw new Error(`channel ${to.channel} is not running`);
    return (await ch.send(to, redact(text), meta)) ?? { type: "delivered" };
  }

  /** Presses on every channel that has buttons go to `handler` (Channel.onChoice); call before startAll. */
  onChoice(handler: ChoiceHandler): void {
    for (const ch of this.#channels.values()) ch.onChoice?.(handler);
  }

  /** Whether `channel` runs and can show a question with buttons. */
  canAsk(channel: ChannelId): boolean {
    const ch = this.#channels.get(channel);
    return ch?.askChoices !== undefined && this.status(channel).state === "running";
  }

  /** See Channel.askChoices; rejects when the channel cannot ask or the platform refused. */
  async askChoices(to: DeliveryTarget, question: ChoiceQuestion): Promise<string> {
    const ch = this.#channels.get(to.channel);
    if (!ch?.askChoices) throw new Error(`channel ${to.channel} cannot show buttons`);
    return ch.askChoices(to, { ...question, text: redact(question.text) });
  }

  /** See Channel.settleChoices; rejects when the platform refused. */
  async settleChoices(to: DeliveryTarget, messageId: string, text: string): Promise<void> {
    await this.#channels.get(to.channel)?.settleChoices?.(to, messageId, redact(text));
  }

  /** See CliChannel.holdChoices; null when the terminal channel is not there. */
  holdForTerminal(question: ChoiceQuestion): string | null {
    const cli = this.#channels.get("cli");
    return cli instanceof CliChannel ? cli.holdChoices({ ...question, text: redact(question.text) }) : null;
  }

  /** How many proactive messages wait in the terminal's mailbox (CliChannel.waiting). */
  terminalWaiting(): number {
    const cli = this.#channels.get("cli");
    return cli instanceof CliChannel ? cli.waiting() : 0;
  }

  #refusingSink(id: ChannelId, reason: string): ReplySink {
    const refuse = async () => {
      throw Object.assign(new Error(`${id} is not connected: ${reason}`), { retryable: true });
    };
    return { textDelta: () => {}, textReset: () => {}, toolStarted: () => {}, toolFinished: () => {}, finish: refuse, fail: refuse };
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

  /**
   * Sends a file to the chat of `to`; resolves with the platform's message id, or null when the
   * channel cannot send files (the terminal: the caller shows the path). Rejects on a refusal.
   */
  async sendFile(to: InboundMessage, file: OutboundFile): Promise<string | null> {
    const channel = this.#channels.get(to.channel);
    if (!channel?.sendFile) return null;
    return channel.sendFile(to, { ...file, ...(file.caption !== undefined ? { caption: redact(file.caption) } : {}) });
  }

  /** Shows that the bot is busy in the chat of `to` (see Channel.showActivity); rejects where it cannot. */
  async showActivity(to: InboundMessage, activity: ChatActivity): Promise<void> {
    const channel = this.#channels.get(to.channel);
    if (!channel?.showActivity) throw new Error(`${to.channel} shows no activity`);
    await channel.showActivity(to, activity);
  }
}

/**
 * Every text a chat receives passes here: a registered secret (API key, bot token) never
 * reaches a channel, whatever produced the text. A secret split across two stream deltas is
 * caught only in the final text (the model never sees one: tool results are redacted too).
 */
function redactingSink(sink: ReplySink): ReplySink {
  return relaySink(sink, {
    textDelta: (text, notice) => sink.textDelta(redact(text), notice),
    textReset: (text) => sink.textReset(redact(text)),
    toolStarted: (name, summary) => sink.toolStarted(name, redact(summary)),
    ...(sink.modelRetrying ? { modelRetrying: (text: string) => sink.modelRetrying!(redact(text)) } : {}),
    finish: (text, outcome) => sink.finish(redact(text), outcome),
    fail: (message) => sink.fail(redact(message)),
  });
}
