// The Signal channel: a running signal-cli (`daemon --http`) is Hearth's device on the owner's
// Signal. Messages come in by its event stream (events.ts), everything else goes out by JSON-RPC
// (rpc.ts). Access, pairing, sessions and commands are the gateway's; this file keeps the stream
// open, turns envelopes into InboundMessages (inbound.ts) and sends.
//
// signal-cli does not replay its events: what it handed over is gone from Signal's servers. So
// events are taken one at a time and the next is read only once the gateway's inbox has the
// current one on disk; and signal-cli should run with `--receive-mode on-connection`, so that
// while Hearth is not listening (stopped, restarting, or signal-cli's stream lost) messages wait
// on Signal's servers instead of being received into nothing. A stopped or restarted signal-cli
// is waited for with backoff and the stream resumed.
//
// Questions with choices are answered by a reaction, or a reply quoting them with the choice's
// number (a bare number only where it cannot mean another question); see choices.ts. A press is no inbox message: it goes to the handler directly.
import type { Logger } from "../../process/log.ts";
import type { Attachment, Channel, ChannelStatus, ChoiceHandler, ChoiceQuestion, DeliveryTarget, InboundMessage, OutboundFile, ReplyJournal, ReplySink, SendMeta } from "../channel.ts";
import { isDeliveryTarget, logStateChange } from "../channel.ts";
import { splitMessage } from "../chunk.ts";
import { PREVIEW_PLACEHOLDER, StreamingReply } from "../streaming-reply.ts";
import { OpenQuestions, questionText } from "./choices.ts";
import { readSignalEvents, type SignalEvent } from "./events.ts";
import { attachmentKind, attachmentName, isPersonChat, normalizeEnvelope, reactionToOwn, type SignalAttachmentFacts, type SignalEnvelope, type SignalMessageRef } from "./inbound.ts";
import { signalTransport } from "./reply.ts";
import { callSignal, SignalRpcError } from "./rpc.ts";

export interface SignalChannelOptions {
  httpUrl: string;
  /** The number signal-cli is linked to; null: learned from the first event (signal-cli names its account in each). */
  account: string | null;
  ownerIds: string[];
  namePattern: string | null;
}

export interface SignalChannelDeps {
  log: Logger;
  /** The first wait before reconnecting to a lost stream; doubled each failure up to maxRetryMs. Default 500 ms. */
  retryBaseMs?: number;
  /** Default 30 s. */
  maxRetryMs?: number;
}

/** Signal's apps take about 2,000 characters as one message (longer ones become a file). */
const MAX_MESSAGE = 2000;
/** The least time between two preview requests (reply.ts spaces a message's edits further). */
const EDIT_INTERVAL_MS = 1000;

export function createSignalChannel(options: SignalChannelOptions, deps: SignalChannelDeps): Channel {
  return new SignalChannel(options, deps);
}

type Handler = (m: InboundMessage) => void | Promise<void>;

class SignalChannel implements Channel {
  readonly id = "signal" as const;
  readonly #o: SignalChannelOptions;
  readonly #log: Logger;
  readonly #retryBaseMs: number;
  readonly #maxRetryMs: number;
  readonly #namePattern: RegExp | null;
  #status: ChannelStatus = { state: "stopped" };
  #running: AbortController | null = null;
  #loop: Promise<void> | null = null;
  #account: string | null;
  #onChoice: ChoiceHandler | undefined;
  readonly #questions = new OpenQuestions();

  constructor(options: SignalChannelOptions, deps: SignalChannelDeps) {
    this.#o = options;
    this.#account = options.account;
    this.#log = deps.log;
    this.#retryBaseMs = deps.retryBaseMs ?? 500;
    this.#maxRetryMs = deps.maxRetryMs ?? 30_000;
    this.#namePattern = options.namePattern === null ? null : new RegExp(options.namePattern, "i");
  }

  status(): ChannelStatus {
    return this.#status;
  }

  // ── lifecycle ─────────────────────────────────────────────────────────────────────────────

  /** Resolves once the event stream is open; rejects (retryable) when signal-cli cannot be reached now. */
  async start(onMessage: Handler): Promise<void> {
    if (this.#running) throw new Error("The Signal channel is already started; stop() it before starting it again.");
    const running = new AbortController();
    this.#running = running;
    this.#setStatus({ state: "starting" });
    let opened!: () => void;
    let failed!: (err: unknown) => void;
    const first = new Promise<void>((resolve, reject) => {
      opened = resolve;
      failed = reject;
    });
    this.#loop = this.#listen(running.signal, onMessage, opened, failed);
    try {
      await first;
    } catch (err) {
      if (this.#running === running) this.#running = null;
      running.abort();
      this.#setStatus({ state: "failed", reason: err instanceof Error ? err.message : String(err) });
      throw err;
    }
  }

  async stop(): Promise<void> {
    const running = this.#running;
    this.#running = null;
    if (!running) return;
    running.abort();
    await this.#loop;
    this.#loop = null;
    this.#setStatus({ state: "stopped" });
  }

  /**
   * Reads the stream until stopped. The first failure before any stream was open ends the loop
   * through `failed` (the gateway retries the start); later ones are retried here, with backoff.
   */
  async #listen(signal: AbortSignal, onMessage: Handler, opened: () => void, failed: (err: unknown) => void): Promise<void> {
    let everOpen = false;
    let attempt = 0;
    while (!signal.aborted) {
      try {
        await readSignalEvents(this.#o.httpUrl, {
          signal,
          onOpen: () => {
            attempt = 0;
            this.#setStatus({ state: "running", detail: `${this.#account ? `as ${this.#account} ` : ""}through signal-cli at ${new URL(this.#o.httpUrl).host}` });
            this.#log.info("signal.listening", { account: this.#account });
            if (!everOpen) opened();
            everOpen = true;
          },
          onEvent: (e) => this.#receive(e, onMessage),
        });
      } catch (err) {
        if (signal.aborted) return;
        const reason = err instanceof Error ? err.message : String(err);
        if (!everOpen) return failed(err);
        const delayMs = Math.min(this.#retryBaseMs * 2 ** attempt++, this.#maxRetryMs);
        this.#setStatus({ state: "reconnecting", detail: `${reason}; trying again in ${Math.ceil(delayMs / 1000)} s` });
        await abortableSleep(delayMs, signal);
      }
    }
  }

  #setStatus(next: ChannelStatus): void {
    const prev = this.#status;
    this.#status = next;
    logStateChange(this.#log, "signal", prev, next);
  }

  // ── inbound ───────────────────────────────────────────────────────────────────────────────

  /** One event: settles once the gateway has the message on disk (or decided against it). Never rejects. */
  async #receive(event: SignalEvent, onMessage: Handler): Promise<void> {
    if (event.type !== "receive") return;
    try {
      const parsed = JSON.parse(event.data) as { envelope?: SignalEnvelope; account?: string };
      if (!parsed.envelope) return;
      this.#account ??= typeof parsed.account === "string" ? parsed.account : null;
      // A multi-account signal-cli streams every account's messages: only Hearth's count.
      if (!this.#account || (parsed.account && parsed.account !== this.#account)) return;
      const rules = { account: this.#account, ownerIds: this.#o.ownerIds, namePattern: this.#namePattern };
      const reaction = reactionToOwn(parsed.envelope, rules);
      if (reaction) {
        const picked = this.#questions.byReaction(this.#account, reaction.targetTimestamp, reaction.emoji);
        if (picked) this.#press(picked, reaction.sender, reaction.chatId, !reaction.sender.isOwner, reaction.targetTimestamp);
        return;
      }
      const result = normalizeEnvelope(parsed.envelope, rules);
      if (result.kind === "ignored") {
        this.#log.debug("signal.ignored", { reason: result.reason });
        return;
      }
      const { message } = result;
      const numbered = result.attachments.length === 0 ? this.#questions.byNumber(message.chat.id, message.text, message.replyTo?.id) : ({ type: "none" } as const);
      switch (numbered.type) {
        case "none":
          break;
        case "press":
          this.#press({ key: numbered.question.key, choiceId: numbered.choice.id }, message.sender, message.chat.id, true);
          return;
        case "refused":
          // Which question, or why none: said in the chat, quoting the number it answers.
          await this.#rpc("send", { ...recipientOf(message), message: numbered.text, ...quoteOf(message) }).catch((error: unknown) => this.#log.warn("signal.press_failed", { error }));
          return;
        default:
          numbered satisfies never;
      }
      const attachments = result.attachments.map((a) => this.#attachment(a, message));
      await onMessage(attachments.length > 0 ? { ...message, attachments } : message);
    } catch (err) {
      this.#log.error("signal.inbound_failed", { error: err });
    }
  }

  /**
   * A reaction or a numbered reply picked a choice: the handler decides whose answer counts. Its
   * answer is said in the chat when `tell` (to the owner, a settled question says enough).
   */
  #press(picked: { key: string; choiceId: string }, by: InboundMessage["sender"], chatId: string, tell: boolean, question?: number): void {
    const handler = this.#onChoice;
    if (!handler) return;
    void handler({ key: picked.key, choiceId: picked.choiceId, by, channel: "signal" })
      .then(async (answer) => {
        if (!tell || !answer) return;
        const quote = question !== undefined && this.#account ? { quoteTimestamp: question, quoteAuthor: this.#account } : {};
        await this.#rpc("send", { ...recipientOf({ channel: "signal", chatId }), message: answer, ...quote });
      })
      .catch((error: unknown) => this.#log.warn("signal.press_failed", { error }));
  }

  #attachment(a: SignalAttachmentFacts, m: InboundMessage): Attachment {
    const where: Record<string, string> = m.chat.type === "group" ? { groupId: m.chat.id } : { recipient: m.sender.id };
    return {
      kind: attachmentKind(a),
      name: attachmentName(a),
      mime: a.contentType ?? "",
      ...(typeof a.size === "number" ? { size: a.size } : {}),
      fetch: (maxBytes, signal) => this.#download(a.id!, where, maxBytes, signal),
    };
  }

  /** An attachment signal-cli already downloaded, as its `getAttachment` returns it (base64); bounded. */
  async #download(id: string, where: Record<string, string>, maxBytes: number, signal: AbortSignal): Promise<Uint8Array> {
    // Base64 is 4 bytes for 3, plus the JSON around it.
    const result = (await callSignal(this.#o.httpUrl, "getAttachment", { id, ...where }, { signal, maxBytes: Math.ceil((maxBytes * 4) / 3) + 1024, timeoutMs: 120_000 }).catch((err: unknown) => {
      if ((err as { tooLarge?: boolean }).tooLarge) throw Object.assign(new Error(`the file is larger than ${maxBytes} bytes`), { tooLarge: true });
      throw err;
    })) as { data?: unknown } | null;
    if (typeof result?.data !== "string") throw new Error("signal-cli returned no data for the attachment");
    const bytes = Buffer.from(result.data, "base64");
    if (bytes.byteLength > maxBytes) throw Object.assign(new Error(`the file is larger than ${maxBytes} bytes`), { tooLarge: true });
    return new Uint8Array(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  }

  // ── outbound ──────────────────────────────────────────────────────────────────────────────

  /**
   * A reply streamed by edits (reply.ts keeps them few: Signal shows only ten edits of a
   * message); in a group its first message quotes the one answered.
   */
  openReply(to: InboundMessage | DeliveryTarget, journal?: ReplyJournal): ReplySink {
    // A resumed reply already quoted the message in its first part.
    const quote = !isDeliveryTarget(to) && to.chat.type === "group" && journal?.messageIds[0] === undefined ? quoteOf(to) : {};
    const transport = signalTransport({ rpc: (method, params) => this.#rpc(method, params), where: recipientOf(to), ...("quoteTimestamp" in quote ? { quote: quote as { quoteTimestamp: number; quoteAuthor: string } } : {}) });
    return new StreamingReply(transport, {
      maxLength: MAX_MESSAGE,
      editIntervalMs: EDIT_INTERVAL_MS,
      log: this.#log,
      // signal-cli's send is not idempotent: a preview made in the instant before its id is on
      // disk is created with a neutral text, so it is never a half-written answer.
      ...(journal ? { journal, previewPlaceholder: PREVIEW_PLACEHOLDER } : {}),
    });
  }

  /** Each part of `text` as one message, in order; rejects when signal-cli refused one or could not be reached. */
  async send(to: DeliveryTarget, text: string, meta?: SendMeta): Promise<void> {
    let quote = meta?.answering ? quoteOf(meta.answering) : {};
    for (const part of splitMessage(text.trim() || "(no answer)", MAX_MESSAGE)) {
      await this.#rpc("send", { ...recipientOf(to), message: part, ...quote });
      quote = {};
    }
  }

  async sendFile(to: InboundMessage | DeliveryTarget, file: OutboundFile): Promise<string> {
    const data = Buffer.from(file.data.buffer, file.data.byteOffset, file.data.byteLength).toString("base64");
    const name = file.name.replace(/[;,]/g, "_");
    const quote = isDeliveryTarget(to) ? {} : quoteOf(to);
    const result = (await this.#rpc(
      "send",
      { ...recipientOf(to), message: file.caption ?? "", attachments: [`data:${file.mime || "application/octet-stream"};filename=${name};base64,${data}`], ...quote },
      Math.ceil(data.length / 1_000_000) * 60_000 + 30_000,
    )) as { timestamp?: unknown } | null;
    return String(result?.timestamp ?? "");
  }

  onChoice(handler: ChoiceHandler): void {
    this.#onChoice = handler;
  }

  /** The question with one emoji per choice; resolves with its Signal timestamp, which reactions name it by. */
  async askChoices(to: DeliveryTarget, question: ChoiceQuestion): Promise<string> {
    const result = (await this.#rpc("send", { ...recipientOf(to), message: questionText(question) })) as { timestamp?: unknown } | null;
    const timestamp = Number(result?.timestamp);
    if (!Number.isSafeInteger(timestamp)) throw new Error("signal-cli sent the question but returned no timestamp for it");
    if (!this.#account) throw new Error("signal-cli sent the question before Hearth knew its own number, so no reply could name it");
    this.#questions.add(this.#account, timestamp, to.chatId, question);
    return String(timestamp);
  }

  /** The question is edited to `text` (no choices any more); where Signal refuses the edit, `text` is sent anew. */
  async settleChoices(to: DeliveryTarget, messageId: string, text: string): Promise<void> {
    const timestamp = Number(messageId);
    this.#questions.settle(timestamp);
    try {
      await this.#rpc("send", { ...recipientOf(to), message: text, editTimestamp: timestamp });
    } catch (err) {
      if (err instanceof SignalRpcError && err.retryable) throw err;
      this.#log.warn("signal.edit_refused", { error: err });
      await this.#rpc("send", { ...recipientOf(to), message: text });
    }
  }

  /** Signal has one indicator for every kind of work: typing (it shows for about 15 s). */
  async showActivity(to: InboundMessage | DeliveryTarget): Promise<void> {
    await this.#rpc("sendTyping", recipientOf(to));
  }

  #rpc(method: string, params: Record<string, unknown>, timeoutMs?: number): Promise<unknown> {
    if (!this.#running) return Promise.reject(new SignalRpcError("the Signal channel is not running", { retryable: false }));
    return callSignal(this.#o.httpUrl, method, params, timeoutMs ? { timeoutMs } : {});
  }
}

/** signal-cli's addressing: `recipient` for a person's chat, `groupId` for a group. */
function recipientOf(to: InboundMessage | DeliveryTarget): { recipient: string[] } | { groupId: string } {
  if (isDeliveryTarget(to)) return isPersonChat(to.chatId) ? { recipient: [to.chatId] } : { groupId: to.chatId };
  return to.chat.type === "group" ? { groupId: to.chat.id } : { recipient: [to.chat.id] };
}

/** Quotes the message being answered (Signal's reply). */
function quoteOf(m: InboundMessage): { quoteTimestamp: number; quoteAuthor: string } | Record<string, never> {
  const ref = m.raw as Partial<SignalMessageRef> | undefined;
  return typeof ref?.timestamp === "number" && typeof ref.author === "string" ? { quoteTimestamp: ref.timestamp, quoteAuthor: ref.author } : {};
}

function abortableSleep(ms: number, signal: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    const timer = setTimeout(done, ms);
    function done() {
      clearTimeout(timer);
      signal.removeEventListener("abort", done);
      resolve();
    }
    signal.addEventListener("abort", done, { once: true });
  });
}
