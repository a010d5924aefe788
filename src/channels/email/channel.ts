// The email adapter: one IMAP connection watches the folder with IDLE (and is made again when it
// drops), one SMTP transport sends the answers. A mail is handed to the gateway once, each
// sender's in UID order, and the cursor passes its UID only after the gateway's inbox has it
// (state.ts); it is marked seen only once its answer was sent. Who it is from is decided here,
// where the headers are: an owner address counts only when the owner's own server vouches for it
// (auth-results.ts); a sender nobody vouches for is not passed on at all, so a forged From:
// costs nothing and is never answered.
import { ImapFlow } from "imapflow";
import nodemailer, { type Transporter } from "nodemailer";
import type { Logger } from "../../process/log.ts";
import type { Channel, ChannelStatus, DeliveryTarget, InboundMessage, ReplySink, SendMeta, SendReceipt } from "../channel.ts";
import { vouchedFor } from "./auth-results.ts";
import type { EmailConfig } from "./config.ts";
import { attachmentsOf, readMail, wordsOf, type Mail } from "./mail-reading.ts";
import { answerMail, isOwnMessageId, newMail, type OutgoingMail } from "./outbound.ts";
import { serversOf, type Account } from "./servers.ts";
import { MailState } from "./state.ts";

/** Mails larger than this are not fetched (logged and skipped): the MIME parse runs on the main thread. */
export const MAX_MAIL_BYTES = 25 * 1024 * 1024;
/** Mails read and waiting to be handed over at once (their sources are in memory). */
const PARALLEL_MAILS = 8;
const RECONNECT_MIN_MS = 500;
const RECONNECT_MAX_MS = 5_000;

class EmailStartError extends Error {
  readonly retryable: boolean;
  constructor(message: string, retryable: boolean) {
    super(message);
    this.retryable = retryable;
  }
}

type Section = EmailConfig & { address: string };

/** The adapter; `c` must name its address and hosts (the descriptor checks before it calls this). */
export function createEmailChannel(c: EmailConfig, deps: { log: Logger; home: string }): Channel {
  if (!c.address) throw new Error("channels.email.address is not set");
  return new EmailChannel({ ...c, address: c.address }, deps.log, deps.home);
}

class EmailChannel implements Channel {
  readonly id = "email" as const;
  readonly #c: Section;
  readonly #log: Logger;
  readonly #imap: Account;
  readonly #state: MailState;
  readonly #smtp: Transporter;
  #client: ImapFlow | null = null;
  #status: ChannelStatus = { state: "starting" };
  #stopped = false;
  #onMessage: ((m: InboundMessage) => void | Promise<void>) | null = null;
  #lastUid = 0;
  #uidValidity = "";
  /** One pull at a time; a new-mail signal during one makes it pull again. */
  #pulling: Promise<void> | null = null;
  #again = false;
  #reconnectTimer: NodeJS.Timeout | null = null;
  /** UIDs taken up and not yet handed over; UIDs handed over above the cursor (an older one is still pending). */
  readonly #pending = new Set<number>();
  readonly #finishedAbove = new Set<number>();
  /** Each sender's latest hand-over: their next mail waits for it. */
  readonly #bySender = new Map<string, Promise<void>>();

  constructor(c: Section, log: Logger, home: string) {
    this.#c = c;
    this.#log = log;
    const servers = serversOf(c);
    this.#imap = servers.imap;
    this.#state = new MailState(home, c.imap.folder);
    if (this.#state.damagedCopy) log.warn("email.state_damaged", { setAside: this.#state.damagedCopy, effect: "reading starts from now" });
    this.#smtp = nodemailer.createTransport({
      host: servers.smtp.host,
      port: servers.smtp.port,
      secure: servers.smtp.secure,
      auth: { user: servers.smtp.user, pass: c.password ?? "" },
      connectionTimeout: 30_000,
      greetingTimeout: 30_000,
      socketTimeout: 60_000,
    });
  }

  async start(onMessage: (m: InboundMessage) => void | Promise<void>): Promise<void> {
    this.#onMessage = onMessage;
    this.#stopped = false;
    try {
      await this.#connect();
    } catch (err) {
      const e = err as { authenticationFailed?: boolean; message?: string };
      if (e.authenticationFailed) throw new EmailStartError(`${this.#imap.host} refused the login of ${this.#imap.user}: check the password (EMAIL_PASSWORD) or make an app password`, false);
      throw new EmailStartError(`could not reach ${this.#imap.host}:${this.#imap.port} (${e.message ?? String(err)})`, true);
    }
  }

  async stop(): Promise<void> {
    this.#stopped = true;
    if (this.#reconnectTimer) clearTimeout(this.#reconnectTimer);
    const client = this.#client;
    this.#client = null;
    await client?.logout().catch(() => client.close());
    await this.#pulling?.catch(() => undefined);
    this.#smtp.close();
    this.#status = { state: "stopped" };
  }

  status(): ChannelStatus {
    return this.#status;
  }

  openReply(): ReplySink {
    throw new Error("email cannot edit a sent mail: its replies are the channel-neutral FinalReply (fallbacks.ts); openReply is not called");
  }

  /** Resolves with the mail's Message-ID, which a reply to it names (In-Reply-To: `replyTo.id`). */
  async send(to: DeliveryTarget, text: string, meta?: SendMeta): Promise<SendReceipt> {
    const from = this.#c.address;
    if (to.chatId.startsWith("<")) {
      const thread = this.#state.thread(to.chatId);
      if (!thread) throw new Error(`no thread ${to.chatId} is known to the email channel (a forgotten or foreign thread)`);
      const mail = answerMail(thread, text, from, meta?.messageKey);
      await this.#deliver(mail);
      this.#state.noteMail(to.chatId, { to: thread.to, subject: thread.subject, messageId: mail.messageId, references: thread.references });
      await this.#markSeen(to.chatId, thread.unseen ?? []);
      return { type: "delivered", messageIds: [mail.messageId] };
    }
    // A mail of its own goes only to the owner's addresses and the allowed ones: never to whoever asked for it.
    const address = to.chatId.toLowerCase();
    if (!this.#c.ownerAddresses.includes(address) && !this.#c.allowFrom.includes(address)) {
      throw new Error(`${address} is not in channels.email.ownerAddresses or allowFrom: Hearth does not start mail to it`);
    }
    const mail = newMail(address, text, from, meta?.from ?? "Hearth", meta?.messageKey);
    await this.#deliver(mail);
    this.#state.noteMail(mail.messageId, { to: address, subject: mail.subject, messageId: mail.messageId, references: [] });
    return { type: "delivered", messageIds: [mail.messageId] };
  }

  /**
   * The mails a thread's answer answered are marked \Seen, only now that it is sent (they were
   * read with BODY.PEEK). Without a connection they stay unseen until the thread's next answer.
   */
  async #markSeen(root: string, uids: number[]): Promise<void> {
    const client = this.#client;
    if (uids.length === 0 || !client?.usable) return;
    try {
      await client.messageFlagsAdd(uids.join(","), ["\\Seen"], { uid: true });
      this.#state.markedSeen(root, uids);
    } catch (err) {
      this.#log.warn("email.mark_seen_failed", { uids, error: (err as Error).message });
    }
  }

  async #deliver(mail: OutgoingMail): Promise<void> {
    await this.#smtp.sendMail({
      from: this.#c.address,
      to: mail.to,
      subject: mail.subject,
      text: mail.text,
      html: mail.html,
      messageId: mail.messageId,
      headers: { "Auto-Submitted": "auto-replied" },
      ...(mail.inReplyTo ? { inReplyTo: mail.inReplyTo } : {}),
      ...(mail.references?.length ? { references: mail.references } : {}),
    });
    this.#log.info("email.sent", { to: mail.to, messageId: mail.messageId });
  }

  // ── watching the folder ─────────────────────────────────────────────────────────────────

  async #connect(): Promise<void> {
    const client = new ImapFlow({
      host: this.#imap.host,
      port: this.#imap.port,
      secure: this.#imap.secure,
      auth: { user: this.#imap.user, pass: this.#c.password ?? "" },
      logger: false,
      // Some servers drop a silent IDLE: it is restarted well within their timeouts.
      maxIdleTime: 5 * 60_000,
      // IDLE starts a second after our last command, not imapflow's 15 s: mail arriving meanwhile waits for it.
      autoIdleDelay: 1_000,
    });
    client.on("error", (err: Error) => this.#log.warn("email.imap_error", { error: err.message }));
    await client.connect();
    const box = await client.mailboxOpen(this.#c.imap.folder);
    if (this.#stopped) {
      await client.logout().catch(() => undefined);
      return;
    }
    this.#client = client;
    this.#uidValidity = String(box.uidValidity);
    const cursor = this.#state.cursor(this.#uidValidity, box.uidNext);
    this.#lastUid = cursor.lastUid;
    if (cursor.fresh) this.#log.info("email.cursor_set", { folder: this.#c.imap.folder, uidValidity: this.#uidValidity, lastUid: cursor.lastUid });
    client.on("exists", () => this.#pull());
    client.on("close", () => this.#closed(client));
    this.#status = { state: "running", detail: `${this.#imap.user} (${this.#c.imap.folder})` };
    this.#log.info("email.watching", { host: this.#imap.host, folder: this.#c.imap.folder });
    this.#pull();
  }

  #closed(client: ImapFlow): void {
    if (this.#client !== client) return;
    this.#client = null;
    if (this.#stopped) return;
    this.#log.warn("email.imap_closed", { host: this.#imap.host });
    this.#reconnect(RECONNECT_MIN_MS);
  }

  #reconnect(delay: number): void {
    this.#status = { state: "reconnecting", detail: `the IMAP connection to ${this.#imap.host} dropped` };
    this.#reconnectTimer = setTimeout(() => {
      this.#reconnectTimer = null;
      if (this.#stopped) return;
      this.#connect().catch((err: unknown) => {
        this.#log.warn("email.reconnect_failed", { error: (err as Error).message, retryInMs: delay });
        this.#reconnect(Math.min(delay * 2, RECONNECT_MAX_MS));
      });
    }, delay);
    this.#reconnectTimer.unref();
  }

  #pull(): void {
    if (this.#pulling) {
      this.#again = true;
      return;
    }
    this.#pulling = this.#pullNew()
      .catch((err: unknown) => this.#log.warn("email.pull_failed", { error: (err as Error).message }))
      .finally(() => {
        this.#pulling = null;
        if (this.#again && !this.#stopped) {
          this.#again = false;
          this.#pull();
        }
      });
  }

  /**
   * Hands every mail past the cursor to the gateway. Mails are fetched and their senders checked
   * in UID order; their words are read side by side and in the background, so a mail that is slow
   * to read (an HTML bomb, held to the parse pool's limits) holds only the later mails of its own
   * sender, which keep their order, and never the next pull.
   */
  async #pullNew(): Promise<void> {
    const client = this.#client;
    if (!client) return;
    const found = await client.fetchAll(`${this.#lastUid + 1}:*`, { uid: true, size: true }, { uid: true });
    // "n:*" also names the newest mail when its UID is below n.
    const fresh = found.filter((m) => m.uid > this.#lastUid && !this.#pending.has(m.uid) && !this.#finishedAbove.has(m.uid)).sort((a, b) => a.uid - b.uid);
    for (const m of fresh) {
      if (this.#stopped || this.#client !== client) return;
      this.#pending.add(m.uid);
      if ((m.size ?? 0) > MAX_MAIL_BYTES) {
        this.#log.warn("email.too_large", { uid: m.uid, size: m.size, limit: MAX_MAIL_BYTES });
        this.#finish(m.uid);
        continue;
      }
      const full = await client.fetchOne(String(m.uid), { uid: true, source: true }, { uid: true }).catch(() => false as const);
      if (!full || !full.source) {
        this.#pending.delete(m.uid);
        if (this.#client !== client || !client.usable) return; // read again after the reconnection
        this.#finish(m.uid); // expunged meanwhile
        continue;
      }
      const admitted = await this.#admit(m.uid, full.source);
      if (!admitted) {
        this.#finish(m.uid);
        continue;
      }
      const before = this.#bySender.get(admitted.sender) ?? Promise.resolve();
      const handed = Promise.all([wordsOf(admitted.mail), before])
        .then(([words]) => this.#onMessage?.(admitted.message(words)))
        .then(
          () => this.#finish(m.uid),
          // Left pending: the cursor stays before it, and a restart hands it over again.
          (err: unknown) => this.#log.error("email.handover_failed", { uid: m.uid, error: (err as Error).message }),
        );
      this.#bySender.set(admitted.sender, handed);
      void handed.then(() => this.#bySender.get(admitted.sender) === handed && this.#bySender.delete(admitted.sender));
      // Sources wait in memory: past a few at once, the next fetch waits for one to be handed over.
      while (this.#pending.size >= PARALLEL_MAILS && this.#bySender.size > 0 && !this.#stopped) await Promise.race([...this.#bySender.values()]);
    }
  }

  /** Mail `uid` is handed over (or dropped): the cursor moves past every UID below the oldest one still pending. */
  #finish(uid: number): void {
    this.#pending.delete(uid);
    this.#finishedAbove.add(uid);
    const floor = this.#pending.size > 0 ? Math.min(...this.#pending) : Infinity;
    let last = this.#lastUid;
    for (const u of this.#finishedAbove) {
      if (u >= floor) continue;
      last = Math.max(last, u);
      this.#finishedAbove.delete(u);
    }
    if (last > this.#lastUid) {
      this.#lastUid = last;
      this.#state.handled(last);
    }
  }

  /**
   * One mail's sender and thread: null (logged) when it is not passed on. Only mail whose
   * sender's server vouched for it is: anyone can write any From: line, and unvouched mail is a
   * stranger's that nobody answers (mail must never become a reflector).
   */
  async #admit(uid: number, source: Buffer): Promise<{ mail: Mail; sender: string; message(words: string): InboundMessage } | null> {
    let mail: Mail;
    try {
      mail = await readMail(source, `<uid-${uid}.${this.#uidValidity}@hearth.invalid>`);
    } catch (err) {
      this.#log.warn("email.unreadable", { uid, error: (err as Error).message });
      return null;
    }
    const from = mail.from;
    if (mail.repeated.length > 0) {
      // Left unread in the folder for the owner to look at; only this mail is skipped.
      this.#log.warn("email.ambiguous", { uid, from: from?.address, headers: mail.repeated, why: `the mail has more than one ${mail.repeated.join(", ")} header: which one was signed and which one is shown cannot be told, so it is not read` });
      return null;
    }
    const ignored = (why: string) => (this.#log.info("email.ignored", { uid, from: from?.address, why }), null);
    if (!from) return ignored("no single From: address");
    if (from.address === this.#c.address) return ignored("sent by Hearth's own address");
    if (mail.automatic) return ignored("sent by a program (Auto-Submitted or Precedence)");
    const vouched = vouchedFor(mail.authResults, this.#c.authservId, from.address);
    if (!vouched.ok) {
      const event = this.#c.ownerAddresses.includes(from.address) ? "email.owner_unverified" : "email.unverified";
      this.#log.warn(event, { uid, from: from.address, why: vouched.why });
      return null;
    }
    if (this.#state.replayed(from.address, mail.messageId, uid)) {
      this.#log.warn("email.replayed", { uid, from: from.address, messageId: mail.messageId, why: "a mail with this Message-ID from this sender was read before: it is not answered again" });
      return null;
    }
    const isOwner = this.#c.ownerAddresses.includes(from.address);
    // A thread is one correspondent's: someone else answering into it starts a conversation of
    // their own, also one who reuses its Message-ID (which would otherwise send its answers to them).
    const known = this.#state.thread(mail.root);
    let chatId = known && known.to !== from.address ? mail.messageId : mail.root;
    const taken = this.#state.thread(chatId);
    if (taken && taken.to !== from.address) chatId = `<${crypto.randomUUID()}@thread.hearth.invalid>`;
    this.#state.noteMail(chatId, { to: from.address, subject: known?.subject ?? mail.subject, messageId: mail.messageId, references: mail.references, uid });
    this.#log.info("email.received", { uid, from: from.address, owner: isOwner, vouched: vouched.by, chat: chatId });
    const attachments = attachmentsOf(mail);
    // Everyone the mail went to can read the thread from here on (a reply-all reaches them): the
    // gateway decides from them whether the thread is still private. Hearth's own address is the bot.
    const members = [...new Set([from.address, ...mail.recipients])].filter((a) => a !== this.#c.address.toLowerCase()).slice(0, 100);
    return {
      mail,
      sender: from.address,
      message: (words) => ({
        id: `${this.#uidValidity}:${uid}`,
        channel: "email",
        chat: { id: chatId, type: "dm", members, ...(mail.subject ? { title: mail.subject } : {}) },
        sender: { id: from.address, name: from.name, isOwner },
        // A bare number answers a numbered question (fallbacks.ts) and a mail that is a command
        // ("/private") is one: both are passed on as they are.
        text: /^\d{1,2}$/.test(words) || /^\/[A-Za-z_]+$/.test(words) ? words : mail.subject ? `Subject: ${mail.subject}\n\n${words}`.trim() : words,
        addressed: true,
        // The mail it answers names a question of Hearth's exactly (fallbacks.ts, answers.ts).
        ...(mail.parent ? { replyTo: { id: mail.parent, fromBot: isOwnMessageId(mail.parent, this.#c.address) } } : {}),
        ...(attachments.length > 0 ? { attachments } : {}),
        receivedAt: Date.now(),
        outside: "an email",
        raw: { uid, messageId: mail.messageId },
      }),
    };
  }
}
