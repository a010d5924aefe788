// The WhatsApp channel: Hearth as a linked device of a phone number, through the narrow socket
// interface of socket.ts (the library behind it is baileys.ts; the tests' fake sits at the
// interface). This file keeps one connection open — reconnecting with backoff, reporting a
// logged-out device once and for good — turns messages into InboundMessages (inbound.ts) and
// sends. Replies are sent whole (WhatsApp's edits are limited) and choices are numbered replies
// quoting the question: both come from the channel-neutral fallbacks.
import { createHash } from "node:crypto";
import type { Logger } from "../../process/log.ts";
import type { Attachment, Channel, ChannelStatus, DeliveryTarget, InboundMessage, OutboundFile, ReplySink, SendMeta, SendReceipt } from "../channel.ts";
import { isDeliveryTarget, logStateChange } from "../channel.ts";
import { splitMessage } from "../chunk.ts";
import { chatIdOf, digitsOf, jidOf, normalizeWhatsApp, type WhatsAppMessageRef } from "./inbound.ts";
import type { WhatsAppAuthStore, WhatsAppConnector, WhatsAppEvent, WhatsAppMessage, WhatsAppSocket } from "./socket.ts";

export interface WhatsAppChannelOptions {
  ownerIds: string[];
  namePattern: string | null;
  /** Link by an 8-character pairing code for this number instead of a QR code; null: QR. */
  pairingNumber: string | null;
}

export interface WhatsAppChannelDeps {
  log: Logger;
  connect: WhatsAppConnector;
  store: WhatsAppAuthStore;
  /** Tells the owner on another channel (ChannelDeps.tellOwner); absent: only the status and the log say it. */
  tellOwner?(text: string): void;
  /** The first wait before reconnecting; doubled each failure up to maxRetryMs. Default 1 s. */
  retryBaseMs?: number;
  /** Default 60 s. */
  maxRetryMs?: number;
}

/** What `hearth status` and the log say of a device WhatsApp logged out, word for word. */
export const LOGGED_OUT =
  "WhatsApp logged this device out (it was removed under Linked devices on the phone, or by WhatsApp); its credentials are deleted: restart Hearth and link it again (docs/channels/whatsapp.md).";
export const REPLACED = "another WhatsApp Web client took over this device's session; stop the other client and restart Hearth.";

/** Long answers are split here: WhatsApp takes more, but a phone screen reads better in parts. */
const MAX_MESSAGE = 4000;
/** Ids of messages Hearth sent, remembered so its answers in "Message yourself" are not read back. */
const SENT_IDS_KEPT = 500;
/** Marks Hearth's answers in the owner's chat with themselves, where both write as the owner. */
export const SELF_CHAT_MARK = "🤖 ";

type Handler = (m: InboundMessage) => void | Promise<void>;

export function createWhatsAppChannel(options: WhatsAppChannelOptions, deps: WhatsAppChannelDeps): Channel {
  return new WhatsAppChannel(options, deps);
}

class WhatsAppChannel implements Channel {
  readonly id = "whatsapp" as const;
  readonly #o: WhatsAppChannelOptions;
  readonly #d: WhatsAppChannelDeps;
  readonly #namePattern: RegExp | null;
  readonly #sent: string[] = [];
  #status: ChannelStatus = { state: "stopped" };
  #socket: WhatsAppSocket | null = null;
  #me: string | null = null;
  #stopped = true;
  #generation = 0;
  #retryTimer: NodeJS.Timeout | undefined;
  /** Messages are handed to the gateway one at a time, in arrival order. */
  #inbound: Promise<void> = Promise.resolve();

  constructor(options: WhatsAppChannelOptions, deps: WhatsAppChannelDeps) {
    this.#o = options;
    this.#d = deps;
    this.#namePattern = options.namePattern === null ? null : new RegExp(options.namePattern, "i");
  }

  status(): ChannelStatus {
    return this.#status;
  }

  // ── lifecycle ─────────────────────────────────────────────────────────────────────────────

  /**
   * Resolves once the first connection is open (after linking, when not linked yet); rejects
   * when the device is logged out or its session was taken over. Losses after that are
   * reconnected here, with backoff.
   */
  start(onMessage: Handler): Promise<void> {
    if (!this.#stopped) return Promise.reject(new Error("The WhatsApp channel is already started; stop() it before starting it again."));
    this.#stopped = false;
    this.#setStatus({ state: "starting" });
    return new Promise<void>((resolve, reject) => {
      void this.#connect(onMessage, 0, { resolve, reject });
    });
  }

  async stop(): Promise<void> {
    this.#stopped = true;
    this.#generation++;
    clearTimeout(this.#retryTimer);
    this.#socket?.end();
    this.#socket = null;
    await this.#inbound;
    if (this.#status.state !== "failed") this.#setStatus({ state: "stopped" });
  }

  async #connect(onMessage: Handler, attempt: number, first: { resolve(): void; reject(err: Error): void } | null): Promise<void> {
    if (this.#stopped) return;
    const generation = ++this.#generation;
    const on = (e: WhatsAppEvent) => {
      if (generation === this.#generation && !this.#stopped) this.#event(e, onMessage, attempt, first, () => (first = null));
    };
    try {
      const socket = await this.#d.connect({ store: this.#d.store, on, pairingNumber: this.#o.pairingNumber });
      if (generation !== this.#generation || this.#stopped) return socket.end();
      this.#socket = socket;
    } catch (err) {
      const reason = `the WhatsApp library could not start: ${err instanceof Error ? err.message : String(err)}`;
      this.#setStatus({ state: "failed", reason });
      first?.reject(new Error(reason));
    }
  }

  #event(e: WhatsAppEvent, onMessage: Handler, attempt: number, first: { resolve(): void; reject(err: Error): void } | null, started: () => void): void {
    switch (e.type) {
      case "pairing":
        // Not linked yet: the owner links the device from the phone (docs/channels/whatsapp.md).
        // The status carries the current code too, for the dashboard to show.
        if (e.how === "code") this.#d.log.warn("whatsapp.pairing_code", { code: e.code, how: "on the phone: WhatsApp → Linked devices → Link a device → Link with phone number instead" });
        else this.#d.log.warn("whatsapp.pairing_qr", { qr: e.qr, how: "show it as a QR code (Hearth's docs/channels/whatsapp.md) and scan it under Linked devices" });
        this.#setStatus({ state: "starting", link: e.how === "code" ? { how: "code", code: e.code } : { how: "qr", qr: e.qr } });
        return;
      case "open":
        this.#me = digitsOf(e.me.number);
        this.#setStatus({ state: "running", detail: `linked to +${this.#me}` });
        this.#d.log.info("whatsapp.connected", { number: `+${this.#me}` });
        first?.resolve();
        started();
        this.#nextAttempt = 0;
        return;
      case "message":
        this.#inbound = this.#inbound.then(() => this.#receive(e.message, onMessage));
        return;
      case "close":
        this.#socket = null;
        this.#closed(e.reason, e.detail, onMessage, attempt, first);
        return;
      default:
        e satisfies never;
    }
  }

  #nextAttempt = 0;

  #closed(reason: Extract<WhatsAppEvent, { type: "close" }>["reason"], detail: string, onMessage: Handler, attempt: number, first: { resolve(): void; reject(err: Error): void } | null): void {
    switch (reason) {
      case "logged_out":
        this.#d.store.clear();
        this.#fail(LOGGED_OUT, first);
        // The owner may not look at `hearth status` for days; WhatsApp itself cannot tell them now.
        this.#d.tellOwner?.(LOGGED_OUT);
        return;
      case "replaced":
        this.#fail(REPLACED, first);
        return;
      case "restart":
        void this.#connect(onMessage, attempt, first);
        return;
      case "lost": {
        const n = Math.max(attempt, this.#nextAttempt);
        this.#nextAttempt = n + 1;
        const delayMs = Math.min((this.#d.retryBaseMs ?? 1000) * 2 ** n, this.#d.maxRetryMs ?? 60_000);
        this.#setStatus({ state: "reconnecting", detail: `lost the connection to WhatsApp (${detail}); trying again in ${Math.ceil(delayMs / 1000)} s` });
        this.#retryTimer = setTimeout(() => void this.#connect(onMessage, n + 1, first), delayMs);
        return;
      }
      default:
        reason satisfies never;
    }
  }

  #fail(reason: string, first: { reject(err: Error): void } | null): void {
    this.#setStatus({ state: "failed", reason });
    first?.reject(new Error(reason));
  }

  #setStatus(next: ChannelStatus): void {
    const prev = this.#status;
    this.#status = next;
    logStateChange(this.#d.log, "whatsapp", prev, next);
  }

  // ── inbound ───────────────────────────────────────────────────────────────────────────────

  /** Settles once the gateway has the message on disk (or decided against it). Never rejects. */
  async #receive(m: WhatsAppMessage, onMessage: Handler): Promise<void> {
    try {
      if (!this.#me) return;
      const result = normalizeWhatsApp(m, { me: this.#me, ownerIds: this.#o.ownerIds, namePattern: this.#namePattern, sentByHearth: (id) => this.#sent.includes(id) });
      if (result.kind === "ignored") {
        this.#d.log.debug("whatsapp.ignored", { reason: result.reason });
        return;
      }
      const media = m.media;
      const attachments: Attachment[] = media
        ? [{ kind: media.voice ? "audio" : media.kind, name: media.fileName ?? defaultName(media.mime, media.voice), mime: media.mime, ...(media.size !== undefined ? { size: media.size } : {}), ...(media.seconds !== undefined ? { durationSeconds: media.seconds } : {}), fetch: (max, signal) => media.download(max, signal) }]
        : [];
      await onMessage(attachments.length > 0 ? { ...result.message, attachments } : result.message);
    } catch (err) {
      this.#d.log.error("whatsapp.inbound_failed", { error: err });
    }
  }

  // ── outbound ──────────────────────────────────────────────────────────────────────────────

  /** Never called: WhatsApp's replies are FinalReply's (fallbacks.ts), since the descriptor says `edits: false`. */
  openReply(): ReplySink {
    throw new Error("The WhatsApp channel has no streaming replies (capabilities.edits is false); wrap it with withFallbacks (channels/fallbacks.ts), which sends replies whole.");
  }

  /** Resolves with the messages' names as a quote of them names them (`<chat>:<WhatsApp's id>`, inbound.ts). */
  async send(to: DeliveryTarget, text: string, meta?: SendMeta): Promise<SendReceipt> {
    const mark = this.#selfChat(to.chatId) ? SELF_CHAT_MARK : "";
    const jid = jidOf(to.chatId);
    let quote = meta?.answering ? quoteOf(meta.answering) : undefined;
    const messageIds: string[] = [];
    for (const [i, part] of splitMessage(text.trim() || "(no answer)", MAX_MESSAGE - mark.length).entries()) {
      const id = meta?.messageKey ? messageIdOf(`${meta.messageKey}:${i}`) : undefined;
      const sent = await this.#live().send(jid, { kind: "text", text: `${mark}${part}` }, quote, id);
      this.#remember(sent);
      messageIds.push(`${chatIdOf(jid)}:${sent}`);
      quote = undefined;
    }
    return { type: "delivered", messageIds };
  }

  async sendFile(to: InboundMessage | DeliveryTarget, file: OutboundFile): Promise<string> {
    const chatId = isDeliveryTarget(to) ? to.chatId : to.chat.id;
    const quote = isDeliveryTarget(to) ? undefined : quoteOf(to);
    const id = await this.#live().send(
      jidOf(chatId),
      { kind: "file", data: file.data, name: file.name, mime: file.mime, asPhoto: file.asPhoto, voice: file.voice === true, ...(file.caption ? { caption: file.caption } : {}) },
      quote,
    );
    this.#remember(id);
    return id;
  }

  /** WhatsApp shows "typing…" until it is paused or about 25 s pass. */
  async showActivity(to: InboundMessage | DeliveryTarget): Promise<void> {
    await this.#live().presence(jidOf(isDeliveryTarget(to) ? to.chatId : to.chat.id), "composing");
  }

  #live(): WhatsAppSocket {
    if (!this.#socket || this.#status.state !== "running") throw Object.assign(new Error(`WhatsApp is not connected (${this.#status.state})`), { retryable: true });
    return this.#socket;
  }

  #selfChat(chatId: string): boolean {
    return this.#me !== null && chatIdOf(jidOf(chatId)) === this.#me;
  }

  #remember(id: string): void {
    this.#sent.push(id);
    if (this.#sent.length > SENT_IDS_KEPT) this.#sent.splice(0, this.#sent.length - SENT_IDS_KEPT);
  }
}

/** The quote of a message Hearth received (its ref in `raw`), or undefined when it has none. */
function quoteOf(m: InboundMessage): { id: string; sender: string; fromMe: boolean } | undefined {
  const ref = m.raw as Partial<WhatsAppMessageRef> | undefined;
  return ref?.id && ref.sender !== undefined ? { id: ref.id, sender: ref.sender, fromMe: ref.fromMe === true } : undefined;
}

function defaultName(mime: string, voice: boolean): string {
  const ext = mime.split("/")[1]?.split(/[;+]/)[0] || "bin";
  return `${voice ? "voice-note" : mime.startsWith("image/") ? "photo" : "attachment"}.${ext === "ogg" || voice ? "ogg" : ext}`;
}

/** A WhatsApp message id from a stable key: the form WhatsApp's own clients use (3EB0 and hex), the same for the same key. */
export function messageIdOf(key: string): string {
  return `3EB0${createHash("sha256").update(key).digest("hex").slice(0, 18).toUpperCase()}`;
}
