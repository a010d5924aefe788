// The Slack channel on @slack/bolt in Socket Mode: one WebSocket for events and button presses
// (connection.ts, which acks each envelope once the inbox has the message), the Web API for
// everything the bot does. Access, pairing, sessions and commands are the gateway's; this file
// connects, keeps the connection's state visible (`hearth status`), turns message events into
// InboundMessages (inbound.ts), streams replies by editing the posted answer (reply.ts), asks
// with Block Kit buttons (choices.ts), shows 👀 on a message while it is answered, and moves
// files both ways (url_private with the bot token in; the external upload flow out).
//
// The Socket Mode client reconnects on its own after a dropped connection (a fresh
// apps.connections.open each time); we follow its events to report starting → running ⇄
// reconnecting. What Slack could not deliver meanwhile it delivers again on the new connection.
import { withWorkingSign } from "../working-sign.ts";
import type { Logger } from "../../process/log.ts";
import { fetchBounded } from "../../media/download.ts";
import type { Attachment, Channel, ChannelStatus, ChoiceHandler, ChoiceQuestion, DeliveryTarget, InboundMessage, OutboundFile, ReplyJournal, ReplySink } from "../channel.ts";
import { isDeliveryTarget, logStateChange } from "../channel.ts";
import { PREVIEW_PLACEHOLDER, StreamingReply, type StreamingReplyOptions } from "../streaming-reply.ts";
import { handlePress, sendQuestion, settleQuestion, type BlockActionsBody } from "./choices.ts";
import { connectSlack, disconnectSlack, prepareSlackApp, SlackConnectError, type SlackConnection } from "./connection.ts";
import { fileKind, isReplyRef, normalizeSlackMessage, type SlackMessageEvent } from "./inbound.ts";
import { slackTransport, type SlackTarget, type SlackWeb } from "./reply.ts";

export interface SlackChannelOptions {
  botToken: string;
  appToken: string;
  apiUrl: string;
  ownerIds: string[];
  /** A regular expression (case-insensitive) that addresses the bot in a channel, or null. */
  namePattern: string | null;
}

export interface SlackChannelDeps {
  log: Logger;
  /** How long `start` waits for Socket Mode's hello. Default 30 s. */
  connectTimeoutMs?: number;
}

const MAX_MESSAGE = 4000;
/** chat.update is a Tier 3 method (about 50 a minute): one edit per 1.5 s stays well inside it. */
const EDIT_INTERVAL_MS = 1500;
const DEFAULT_CONNECT_TIMEOUT_MS = 30_000;
const WORKING = "eyes";
/** Where Slack serves files. */
const SLACK_FILE_HOSTS = new Set(["files.slack.com"]);

export function createSlackChannel(options: SlackChannelOptions, deps: SlackChannelDeps): Channel {
  return new SlackChannel(options, deps);
}

class SlackChannel implements Channel {
  readonly id = "slack" as const;
  readonly #o: SlackChannelOptions;
  readonly #log: Logger;
  readonly #connectTimeoutMs: number;
  readonly #namePattern: RegExp | null;
  #conn: SlackConnection | null = null;
  #onChoice: ChoiceHandler | undefined;
  #status: ChannelStatus = { state: "stopped" };
  /** People's names by user id, as users.info said. */
  readonly #names = new Map<string, string>();

  constructor(options: SlackChannelOptions, deps: SlackChannelDeps) {
    this.#o = options;
    this.#log = deps.log;
    this.#connectTimeoutMs = deps.connectTimeoutMs ?? DEFAULT_CONNECT_TIMEOUT_MS;
    this.#namePattern = options.namePattern === null ? null : new RegExp(options.namePattern, "i");
  }

  status(): ChannelStatus {
    return this.#status;
  }

  // ── lifecycle ─────────────────────────────────────────────────────────────────────────────

  async start(onMessage: (m: InboundMessage) => void | Promise<void>): Promise<void> {
    if (this.#conn) throw new Error("The Slack channel is already started; stop() it before starting it again.");
    if (!this.#o.botToken || !this.#o.appToken) throw this.#fail(new SlackConnectError("Slack needs two tokens: set SLACK_BOT_TOKEN (xoxb-…) and SLACK_APP_TOKEN (xapp-…)", false));
    this.#setStatus({ state: "starting" });
    let conn: SlackConnection;
    try {
      conn = await prepareSlackApp({ botToken: this.#o.botToken, appToken: this.#o.appToken, apiUrl: this.#o.apiUrl, log: this.#log });
    } catch (err) {
      throw this.#fail(err);
    }
    this.#conn = conn;
    const { app, receiver } = conn;
    // Bolt runs the listeners of several envelopes at once; a chat's messages must still reach the
    // gateway in the order they were written (a remark, then the mention that asks about it), so
    // each chat's are handled one after another.
    app.event("message", async ({ event }) => {
      const e = event as unknown as SlackMessageEvent;
      await this.#inOrder(e.channel, () => this.#receive(conn, e, onMessage));
    });
    app.action(/^q:/, async ({ ack, body }) => {
      await ack();
      await handlePress(app.client as unknown as SlackWeb, body as unknown as BlockActionsBody, this.#o.ownerIds, this.#onChoice).catch((error: unknown) => this.#log.warn("slack.press_failed", { error }));
    });
    app.error(async (error) => this.#log.warn("slack.listener_failed", { error }));
    app.client.on("rate_limited" as Parameters<typeof app.client.on>[0], (retryAfterSeconds: number, info: { url?: string }) => this.#log.info("slack.rate_limited", { retryAfterSeconds, method: info?.url?.split("/").pop() }));
    const current = () => this.#conn === conn && this.#status.state !== "starting";
    receiver.client.on("reconnecting", () => {
      if (current()) this.#setStatus({ state: "reconnecting", detail: "lost the connection to Slack; reconnecting" });
    });
    receiver.client.on("connected", () => {
      if (current()) this.#setStatus({ state: "running", detail: `as @${conn.bot.name}` });
    });
    try {
      await connectSlack(conn, this.#o.apiUrl, this.#connectTimeoutMs);
    } catch (err) {
      if (this.#conn === conn) this.#conn = null;
      await disconnectSlack(conn);
      throw this.#fail(err);
    }
    this.#setStatus({ state: "running", detail: `as @${conn.bot.name}` });
  }

  async stop(): Promise<void> {
    const conn = this.#conn;
    this.#conn = null;
    if (!conn) return;
    await disconnectSlack(conn);
    this.#setStatus({ state: "stopped" });
  }

  #fail(err: unknown): SlackConnectError {
    const e = err instanceof SlackConnectError ? err : new SlackConnectError(`could not start Slack: ${err instanceof Error ? err.message : String(err)}`, true, err);
    this.#setStatus({ state: "failed", reason: e.message });
    return e;
  }

  #setStatus(next: ChannelStatus): void {
    const prev = this.#status;
    this.#status = next;
    logStateChange(this.#log, "slack", prev, next);
  }

  // ── inbound ───────────────────────────────────────────────────────────────────────────────

  /** The tail of each chat's messages being handled; a chat's next waits for it. */
  readonly #chains = new Map<string, Promise<void>>();

  #inOrder(chat: string, handle: () => Promise<void>): Promise<void> {
    const next = (this.#chains.get(chat) ?? Promise.resolve()).catch(() => {}).then(handle);
    this.#chains.set(chat, next);
    const forget = () => {
      if (this.#chains.get(chat) === next) this.#chains.delete(chat);
    };
    next.then(forget, forget);
    return next;
  }

  /** Resolves once `onMessage` has the message: only then is the envelope acked (connection.ts). */
  async #receive(conn: SlackConnection, event: SlackMessageEvent, onMessage: (m: InboundMessage) => void | Promise<void>): Promise<void> {
    if (event.user && !this.#names.has(event.user)) await this.#lookUpName(conn, event.user);
    const result = normalizeSlackMessage(event, { bot: conn.bot, ownerIds: this.#o.ownerIds, namePattern: this.#namePattern }, (id) => this.#names.get(id) ?? id);
    if (result.kind === "ignored") {
      this.#log.debug("slack.ignored", { msg: event.ts, reason: result.reason });
      return;
    }
    const attachments = (event.files ?? []).flatMap((f): Attachment[] => {
      const url = f.url_private_download ?? f.url_private;
      if (!url) return [];
      const seconds = typeof f.duration_ms === "number" && f.duration_ms >= 0 ? { durationSeconds: f.duration_ms / 1000 } : {};
      return [{ kind: fileKind(f), name: f.name ?? f.title ?? "file", mime: f.mimetype ?? "", ...(f.size !== undefined ? { size: f.size } : {}), ...seconds, fetch: (max, signal) => this.#fetchFile(url, max, signal) }];
    });
    await onMessage(attachments.length > 0 ? { ...result.message, attachments } : result.message);
  }

  async #lookUpName(conn: SlackConnection, userId: string): Promise<void> {
    try {
      const r = (await conn.app.client.users.info({ user: userId })) as { user?: { name?: string; real_name?: string; profile?: { display_name?: string } } };
      const name = r.user?.profile?.display_name || r.user?.real_name || r.user?.name;
      if (name) this.#names.set(userId, name);
    } catch (error) {
      this.#log.debug("slack.user_lookup_failed", { user: userId, error });
    }
  }

  /** Downloads a file from Slack (or the configured API's host, for a test server) with the bot token; never another address. */
  #fetchFile(url: string, maxBytes: number, signal: AbortSignal): Promise<Uint8Array> {
    const at = new URL(url);
    const own = new URL(this.#o.apiUrl);
    const allowed = (at.protocol === "https:" && SLACK_FILE_HOSTS.has(at.hostname)) || at.origin === own.origin;
    if (!allowed) return Promise.reject(new Error(`refused to fetch a file from ${at.origin}: not Slack's file endpoint`));
    return fetchBounded(url, maxBytes, signal, { headers: { Authorization: `Bearer ${this.#o.botToken}` } });
  }

  // ── outbound ──────────────────────────────────────────────────────────────────────────────

  openReply(to: InboundMessage | DeliveryTarget, journal?: ReplyJournal): ReplySink {
    const reply = new StreamingReply(slackTransport(this.#web, targetOf(to), this.#conn?.bot.id), {
      ...this.#replyOptions(),
      // chat.postMessage has no idempotency key: a preview Slack creates in the instant before
      // its id is on disk is found again after a crash only by a look-up (reply.ts), so it starts
      // as a neutral text, and never shows a half-written answer should the look-up miss it.
      ...(journal ? { journal, previewPlaceholder: PREVIEW_PLACEHOLDER } : {}),
    });
    // Only answers (a journal: a run answers an inbox message) show 👀.
    const asked = journal && !isDeliveryTarget(to) && isReplyRef(to.raw) ? to.raw : undefined;
    return asked ? this.#withWorkingReaction(reply, asked.channel, asked.ts) : reply;
  }

  /**
   * 👀 goes on the message now and comes off before the final delivery resolves, so the reply
   * is recorded as delivered only after the sign is gone. A refused reaction is logged, never
   * fatal to the answer.
   */
  #withWorkingReaction(sink: ReplySink, channel: string, ts: string): ReplySink {
    const react = (on: boolean) => {
      const a = { channel, timestamp: ts, name: WORKING };
      return (on ? this.#web().reactions.add(a) : this.#web().reactions.remove(a)).then(
        () => {},
        (error: unknown) => this.#log.debug("slack.reaction_failed", { on, error }),
      );
    };
    return withWorkingSign(sink, react);
  }

  async send(to: DeliveryTarget, text: string): Promise<void> {
    this.#web(); // fails fast when not running
    await new StreamingReply(slackTransport(this.#web, targetOf(to)), this.#replyOptions()).finish(text);
  }

  /**
   * The external upload flow: files.getUploadURLExternal, the bytes to its URL,
   * files.completeUploadExternal. Slack shares the file into the chat after completing it and
   * names no message then: the id returned is the file's.
   */
  async sendFile(to: InboundMessage | DeliveryTarget, file: OutboundFile): Promise<string> {
    const target = targetOf(to);
    const client = this.#conn?.app.client;
    if (!client) throw new Error("the Slack channel is not running");
    const r = (await client.filesUploadV2({
      channel_id: target.channel,
      file: Buffer.from(file.data.buffer, file.data.byteOffset, file.data.byteLength),
      filename: file.name,
      title: file.name,
      ...(file.caption ? { initial_comment: file.caption } : {}),
      ...(target.threadTs ? { thread_ts: target.threadTs } : {}),
    } as Parameters<typeof client.filesUploadV2>[0])) as { files?: Array<{ files?: Array<{ id?: string }> }> };
    return r.files?.[0]?.files?.[0]?.id ?? "";
  }

  onChoice(handler: ChoiceHandler): void {
    this.#onChoice = handler;
  }

  askChoices(to: DeliveryTarget, question: ChoiceQuestion): Promise<string> {
    return sendQuestion(this.#web(), targetOf(to), question);
  }

  settleChoices(to: DeliveryTarget, messageId: string, text: string): Promise<void> {
    return settleQuestion(this.#web(), targetOf(to).channel, messageId, text);
  }

  #replyOptions(): StreamingReplyOptions {
    return { maxLength: MAX_MESSAGE, editIntervalMs: EDIT_INTERVAL_MS, reopenCodeBlocks: true, log: this.#log };
  }

  readonly #web = (): SlackWeb => {
    const conn = this.#conn;
    if (!conn) throw new Error("the Slack channel is not running");
    return conn.app.client as unknown as SlackWeb;
  };
}

/** A reply to a message answers in its thread (a thread reply stays in the thread); a delivery target posts to its thread, else the chat. */
function targetOf(to: InboundMessage | DeliveryTarget): SlackTarget {
  if (isDeliveryTarget(to)) return { channel: to.chatId, ...(to.threadId ? { threadTs: to.threadId } : {}) };
  const ref = isReplyRef(to.raw) ? to.raw : { channel: to.chat.id, ...(to.chat.threadId ? { threadTs: to.chat.threadId } : {}) };
  return { channel: ref.channel, ...(ref.threadTs ? { threadTs: ref.threadTs } : {}) };
}
