// The terminal channel (DESIGN §8). Each `hearth chat` connection is a client; the owner is
// the only user. The transport (the control socket, or an in-process pipe for the embedded
// gateway) hands client lines in and writes events out through `attach`.
import { randomUUID } from "node:crypto";
import { statSync } from "node:fs";
import { readFile, stat } from "node:fs/promises";
import { basename, extname } from "node:path";
import { TooLargeError } from "../../media/download.ts";
import type { Attachment, Channel, ChannelStatus, ChatActivity, Choice, ChoiceHandler, ChoiceQuestion, DeliveryTarget, InboundMessage, ReplyOutcome, ReplySink, SendMeta, SendReceipt } from "../channel.ts";
import { isDeliveryTarget } from "../channel.ts";

/** What the gateway sends a CLI client while answering one of its messages. */
export type CliEvent =
  /**
   * First event of every reply: the run that answers the request. Requests that joined the
   * same run (a message that steered it) get the same `runId` and identical reply events.
   */
  | { type: "joined"; requestId: string; runId: string }
  /** `notice`: not the model's answer but Hearth's line about the run (the terminal prints it on stderr). */
  | { type: "text_delta"; requestId: string; text: string; notice?: true }
  | { type: "text_reset"; requestId: string; text: string }
  | { type: "tool_start"; requestId: string; name: string; summary: string }
  | { type: "tool_end"; requestId: string; name: string; ok: boolean }
  | { type: "final"; requestId: string; text: string; outcome: ReplyOutcome }
  | { type: "failed"; requestId: string; message: string }
  /** A line about the request that is not its answer (what a voice note was heard as); the answer follows. */
  | { type: "note"; requestId: string; text: string }
  /** A proactive message (cron, heartbeat) while the client listens (an interactive chat). */
  | { type: "notice"; text: string }
  /** A question with choices (an approval) for an interactive chat; answered with `choose`. */
  | { type: "question"; key: string; text: string; choices: Choice[] }
  /** The question `key` was decided (here or elsewhere): `text` says how. */
  | { type: "question_settled"; key: string; text: string };

export type CliWriter = (event: CliEvent) => void;

/** A proactive message for the terminal that no client was listening for. */
export interface TerminalLetter {
  /** What sent it: `cron job "Stretch" (a1b2c3d4)`, `heartbeat`, `Hearth`. */
  from: string;
  at: number;
  text: string;
}

/** A letter as kept: with its time in the owner's time zone ("2026-11-25 07:00"). */
export type KeptLetter = TerminalLetter & { when: string };

/** Where the terminal keeps what no client received (gateway/delivery/terminal-mailbox.ts). */
export interface TerminalMailbox {
  /** Keeps the letter (the oldest go past the bound); throws when it could not be stored. */
  keep(letter: TerminalLetter): void;
  /** Every letter kept, oldest first, forgotten from now on; [] when none wait. */
  takeAll(): KeptLetter[];
  count(): number;
}

/** A proactive message for the terminal while no chat listens, and no mailbox may keep it. */
export class NoTerminalClientError extends Error {
  constructor() {
    super("no terminal chat is open");
    this.name = "NoTerminalClientError";
  }
}

export interface CliChannelOptions {
  /** Absent: a proactive message with no listening client is refused (NoTerminalClientError). */
  mailbox?: TerminalMailbox;
  clock?: () => number;
}

interface CliRaw {
  client: string;
  requestId: string;
}

export class CliChannel implements Channel {
  readonly id = "cli" as const;
  readonly #clients = new Map<string, CliWriter>();
  /** Clients that take proactive messages (interactive chats); `-m`, status and cron clients do not. */
  readonly #listeners = new Set<string>();
  /** Pages that show proactive messages while open (the dashboard's Chat). */
  readonly #watchers = new Set<(text: string) => void>();
  #onChoice: ChoiceHandler | undefined;
  /** Questions asked while no chat was open (holdChoices), shown to the next chat that listens; until settled. */
  readonly #held = new Map<string, ChoiceQuestion>();
  readonly #mailbox: TerminalMailbox | undefined;
  readonly #clock: () => number;
  /** How often the busy indicator was asked for, per request (see showActivity); bounded. */
  readonly #busyAsks = new Map<string, number>();
  #onMessage: ((m: InboundMessage) => void) | null = null;

  constructor(opts: CliChannelOptions = {}) {
    this.#mailbox = opts.mailbox;
    this.#clock = opts.clock ?? Date.now;
  }

  async start(onMessage: (m: InboundMessage) => void): Promise<void> {
    this.#onMessage = onMessage;
  }

  async stop(): Promise<void> {
    this.#onMessage = null;
  }

  status(): ChannelStatus {
    return this.#onMessage ? { state: "running", detail: `${this.#clients.size} client(s)` } : { state: "stopped" };
  }

  /** A client connected; `write` must not throw (a dead client's writes are dropped). */
  attach(write: CliWriter): string {
    const client = randomUUID();
    this.#clients.set(client, write);
    return client;
  }

  onChoice(handler: ChoiceHandler): void {
    this.#onChoice = handler;
  }

  /**
   * Shows the question to every interactive chat (the terminal is the owner's); rejects when none
   * is open, so the gateway asks elsewhere. The message id is the question's key.
   */
  async askChoices(_to: DeliveryTarget, q: ChoiceQuestion): Promise<string> {
    const listening = this.#listening();
    if (listening.length === 0) throw new NoTerminalClientError();
    for (const w of listening) w({ type: "question", key: q.key, text: q.text, choices: q.choices });
    return q.key;
  }

  /**
   * Keeps a question for the terminal while no terminal client is connected at all (a run of
   * the terminal's, retried after a restart, whose chat went with the old process): the next
   * chat that listens shows it, until it is settled. Returns its key, as askChoices does; null
   * while a client is connected (a `hearth chat -m` waiting for its answer must hear at once
   * that nobody could be asked, not wait out the timeout).
   */
  holdChoices(q: ChoiceQuestion): string | null {
    if (this.#clients.size > 0) return null;
    this.#held.set(q.key, q);
    return q.key;
  }

  async settleChoices(_to: DeliveryTarget, messageId: string, text: string): Promise<void> {
    this.#held.delete(messageId);
    for (const id of this.#listeners) this.#clients.get(id)?.({ type: "question_settled", key: messageId, text });
  }

  /** A choice typed in a chat; resolves with the answer for it. Whoever uses the terminal is its owner. */
  choose(key: string, choiceId: string): Promise<string> {
    if (!this.#onChoice) return Promise.resolve("Nothing is waiting for an answer.");
    return this.#onChoice({ key, choiceId, channel: "cli", by: { id: "terminal", name: "you (terminal)", isOwner: true } });
  }

  detach(client: string): void {
    this.#clients.delete(client);
    this.#listeners.delete(client);
  }

  /**
   * The client shows proactive messages from now on (an interactive chat). Returns what waited
   * in the mailbox, which is then forgotten: each letter is handed to one client once.
   */
  listen(client: string): KeptLetter[] {
    if (!this.#clients.has(client)) return [];
    this.#listeners.add(client);
    const w = this.#clients.get(client)!;
    for (const q of this.#held.values()) w({ type: "question", key: q.key, text: q.text, choices: q.choices });
    return this.#mailbox?.takeAll() ?? [];
  }

  /**
   * A page that shows proactive messages while it is open (the dashboard's Chat): it gets each
   * one sent from now on, but no question (it has no buttons: questions go to a chat that has)
   * and nothing from the mailbox. `onNotice` must not throw. Returns a function that stops it.
   */
  watchNotices(onNotice: (text: string) => void): () => void {
    this.#watchers.add(onNotice);
    return () => this.#watchers.delete(onNotice);
  }

  /** How many proactive messages wait for the next interactive chat. */
  waiting(): number {
    return this.#mailbox?.count() ?? 0;
  }

  /** A line the owner typed. Returns the request id its reply events will carry. */
  receive(client: string, text: string, requestId: string = randomUUID(), files: readonly string[] = []): string {
    if (!this.#onMessage) throw new Error("The CLI channel is not started.");
    const raw: CliRaw = { client, requestId };
    this.#onMessage({
      // The request id only pairs events with requests (the client picks it); the message id is
      // Hearth's own, so a request id another client also used is never taken for a duplicate.
      id: randomUUID(),
      channel: "cli",
      // The control socket is the owner's alone (mode 600): nobody else is in this chat.
      chat: { id: "cli", type: "dm", members: ["owner"] },
      sender: { id: "owner", name: "owner", isOwner: true },
      text,
      addressed: true,
      ...(files.length > 0 ? { attachments: files.map(localAttachment) } : {}),
      receivedAt: Date.now(),
      raw,
    });
    return requestId;
  }

  openReply(to: InboundMessage | DeliveryTarget): ReplySink {
    const raw = isDeliveryTarget(to) ? null : (to.raw as CliRaw | undefined);
    const requestId = raw?.requestId ?? "";
    const write = (e: CliEvent): boolean => {
      const w = raw ? this.#clients.get(raw.client) : undefined;
      w?.(e);
      return w !== undefined;
    };
    // The answer to a client that went away (closed, or gone with a restart before its answer
    // came) goes to the interactive chats open now, else waits in the mailbox for the next
    // `hearth chat`, like a scheduled answer; the streamed parts before it are not kept.
    const asked = isDeliveryTarget(to) ? "" : to.text.replace(/\s+/g, " ").trim();
    const keepFinal = (text: string) => {
      if (!raw || !text.trim()) return;
      const shown = asked.length > 40 ? `${asked.slice(0, 39)}…` : asked;
      const from = shown ? `the answer to "${shown}"` : "an answer";
      const listening = this.#listening();
      if (listening.length > 0) for (const w of listening) w({ type: "notice", text: `(${from}, which came after its chat closed)\n${text}` });
      else this.#mailbox?.keep({ from, at: this.#clock(), text });
    };
    let done = false;
    return {
      joinedRun: (runId) => write({ type: "joined", requestId, runId }),
      textDelta: (text, notice) => write({ type: "text_delta", requestId, text, ...(notice ? { notice: true as const } : {}) }),
      textReset: (text) => write({ type: "text_reset", requestId, text }),
      toolStarted: (name, summary) => write({ type: "tool_start", requestId, name, summary }),
      toolFinished: (name, ok) => write({ type: "tool_end", requestId, name, ok }),
      // The terminal is the owner's: why the model is silent, the moment it is retried.
      modelRetrying: (text) => write({ type: "note", requestId, text: `(${text})` }),
      finish: async (text, outcome = "answered") => {
        if (done) return;
        done = true;
        if (!write({ type: "final", requestId, text, outcome })) keepFinal(text);
      },
      fail: async (message) => {
        if (done) return;
        done = true;
        if (!write({ type: "failed", requestId, message })) keepFinal(`⚠️ ${message}`);
      },
    };
  }

  /**
   * The terminal has no busy indicator: while a message's files are worked on (the gateway asks
   * again every few seconds), the second ask — work past about 4 s, a long voice note being
   * transcribed — prints one note, so a slow transcription does not look like a hang.
   */
  async showActivity(to: InboundMessage | DeliveryTarget, activity: ChatActivity): Promise<void> {
    const raw = isDeliveryTarget(to) ? undefined : (to.raw as CliRaw | undefined);
    if (activity !== "typing" || !raw) return;
    const key = `${raw.client}:${raw.requestId}`;
    const asked = (this.#busyAsks.get(key) ?? 0) + 1;
    if (!this.#busyAsks.has(key) && this.#busyAsks.size >= 1_000) this.#busyAsks.clear();
    this.#busyAsks.set(key, asked);
    if (asked === 2) this.#clients.get(raw.client)?.({ type: "note", requestId: raw.requestId, text: "(still working on the attached files…)" });
  }

  async sendNote(to: InboundMessage, text: string): Promise<void> {
    const raw = to.raw as CliRaw | undefined;
    if (raw) this.#clients.get(raw.client)?.({ type: "note", requestId: raw.requestId, text });
  }

  /** The writers of the interactive chats connected now. */
  #listening() {
    return [...this.#listeners].map((id) => this.#clients.get(id)).filter((w) => w !== undefined);
  }

  /**
   * Proactive messages go to every listening client (interactive chats) and watching page; with
   * none, they wait in the mailbox for the next one (`kept`), unless `meta.keep` is false.
   */
  async send(_to: DeliveryTarget, text: string, meta?: SendMeta): Promise<SendReceipt> {
    const listening = this.#listening();
    if (listening.length > 0 || this.#watchers.size > 0) {
      for (const w of listening) w({ type: "notice", text });
      for (const n of this.#watchers) n(text);
      return { type: "delivered" };
    }
    if (!this.#mailbox || meta?.keep === false) throw new NoTerminalClientError();
    this.#mailbox.keep({ from: meta?.from ?? "Hearth", at: this.#clock(), text });
    return { type: "kept" };
  }
}

/** A file on this machine that the owner attached on the terminal (`--attach`, `/attach`). */
function localAttachment(file: string): Attachment {
  const name = basename(file);
  const ext = extname(file).slice(1).toLowerCase();
  const mime = LOCAL_MIME[ext] ?? "";
  let size: number | undefined;
  try {
    size = statSync(file).size;
  } catch {
    size = undefined; // gone since the client checked it: the download says so
  }
  return {
    kind: mime.startsWith("image/") ? "image" : mime.startsWith("audio/") ? "audio" : mime.startsWith("video/") ? "video" : "document",
    name,
    mime,
    ...(size !== undefined ? { size } : {}),
    fetch: async (maxBytes) => {
      const size = (await stat(file)).size;
      if (size > maxBytes) throw new TooLargeError(maxBytes);
      return new Uint8Array(await readFile(file));
    },
  };
}

const LOCAL_MIME: Record<string, string> = {
  jpg: "image/jpeg", jpeg: "image/jpeg", png: "image/png", gif: "image/gif", webp: "image/webp", heic: "image/heic",
  pdf: "application/pdf", txt: "text/plain", md: "text/markdown", csv: "text/csv", json: "application/json",
  ogg: "audio/ogg", oga: "audio/ogg", mp3: "audio/mpeg", m4a: "audio/mp4", wav: "audio/wav", mp4: "video/mp4", mov: "video/quicktime",
};
