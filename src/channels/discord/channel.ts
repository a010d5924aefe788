// The Discord channel (DESIGN §8) on discord.js: one gateway connection for messages, REST for
// replies. Access, pairing, sessions and commands are the gateway's; this file connects, keeps
// the connection's state visible (`hearth status`), turns messages into InboundMessages
// (inbound.ts) and streams replies through StreamingReply (reply.ts).
//
// discord.js resumes or reconnects on its own after a dropped connection; we only follow its
// shard events to report starting → running ⇄ reconnecting, and failed when Discord will not
// take the bot back (a revoked token, refused intents).
import { createHash } from "node:crypto";
import { Client, DiscordjsErrorCodes, Events, GatewayIntentBits, Partials, Routes, type Message } from "discord.js";
import type { Logger } from "../../process/log.ts";
import { fetchBounded } from "../../media/download.ts";
import type { Attachment, Channel, ChannelStatus, ChoiceHandler, ChoiceQuestion, OutboundFile, DeliveryTarget, InboundMessage, MenuCommand, PlatformCommand, ReplyJournal, ReplySink } from "../channel.ts";
import { isDeliveryTarget, logStateChange } from "../channel.ts";
import { attachmentKind, factsOf, normalizeMessage, type DiscordInboundRules, type DiscordReplyRef } from "./inbound.ts";
import { discordTransport, type DiscordReplyTarget, type DiscordRest } from "./reply.ts";
import { handleSlashCommand, registerSlashCommands } from "./slash-commands.ts";
import { handleComponentInteraction, sendQuestion, settleQuestion } from "./choices.ts";
import { StreamingReply, type StreamingReplyOptions } from "../streaming-reply.ts";

export interface DiscordChannelOptions {
  /** The bot token; DISCORD_BOT_TOKEN when absent. */
  token?: string | undefined;
  /** Discord's REST base without the version ("https://discord.com/api"); the gateway URL comes from `GET /gateway/bot`. */
  apiBase: string;
  ownerIds: string[];
  /** A regular expression (case-insensitive) that addresses the bot in a guild channel, or null. */
  namePattern: string | null;
  /** Registered as the application's slash commands once connected; absent: registration is left as it is. */
  slashCommands?: MenuCommand[];
}

export interface DiscordChannelDeps {
  log: Logger;
  /** How long `start` waits for the connection before giving up. Default 30 s. */
  connectTimeoutMs?: number;
  /** Where DISCORD_BOT_TOKEN is read when options.token is absent. Default process.env. */
  env?: Record<string, string | undefined>;
}

/** Discord's limit per message, and the pacing of streamed edits (§8). */
const MAX_MESSAGE = 2000;
/** Discord's limit on a message nonce. */
const NONCE_LENGTH = 25;
const EDIT_INTERVAL_MS = 1200;
/** Discord shows "typing…" for about 10 s after each request. */
const TYPING_INTERVAL_MS = 8000;
const DEFAULT_CONNECT_TIMEOUT_MS = 30_000;

/** Gateway close codes after which discord.js gives up, and what the owner should do about each. */
const FATAL_CLOSE_CODES: Record<number, FailureKind> = {
  4004: "bad_token",
  4010: "unreachable",
  4011: "unreachable",
  4012: "unreachable",
  4013: "intents",
  4014: "intents",
};

type FailureKind = "no_token" | "bad_token" | "intents" | "unreachable" | "timeout";

/** The channel could not connect (or lost the connection for good); `kind` says why. */
export class DiscordConnectError extends Error {
  override name = "DiscordConnectError";
  readonly kind: FailureKind;
  constructor(kind: FailureKind, message: string, cause?: unknown) {
    super(message, cause === undefined ? undefined : { cause });
    this.kind = kind;
  }

  /** Discord was out of reach: worth another try later (see Channel.start). */
  get retryable(): boolean {
    return this.kind === "unreachable" || this.kind === "timeout";
  }
}

/** Where Discord serves attachments. */
const DISCORD_FILE_HOSTS = new Set(["cdn.discordapp.com", "media.discordapp.net"]);

export function createDiscordChannel(options: DiscordChannelOptions, deps: DiscordChannelDeps): Channel {
  return new DiscordChannel(options, deps);
}

class DiscordChannel implements Channel {
  readonly id = "discord" as const;
  readonly #options: DiscordChannelOptions;
  readonly #token: string | undefined;
  readonly #log: Logger;
  readonly #connectTimeoutMs: number;
  readonly #namePattern: RegExp | null;
  #client: Client | null = null;
  #onChoice: ChoiceHandler | undefined;
  #status: ChannelStatus = { state: "stopped" };
  /** Set once the first READY arrived: later shard events are reconnections. */
  #connected = false;
  /** The close code of the last connection that Discord refused for good. */
  #fatalClose: number | null = null;
  /** Ends a `start` still waiting for READY (stop() during start). */
  #abortStart: ((reason: Error) => void) | null = null;

  constructor(options: DiscordChannelOptions, deps: DiscordChannelDeps) {
    this.#options = options;
    this.#token = options.token ?? ((deps.env ?? process.env).DISCORD_BOT_TOKEN?.trim() || undefined);
    this.#log = deps.log;
    this.#connectTimeoutMs = deps.connectTimeoutMs ?? DEFAULT_CONNECT_TIMEOUT_MS;
    this.#namePattern = options.namePattern === null ? null : new RegExp(options.namePattern, "i");
  }

  status(): ChannelStatus {
    return this.#status;
  }

  // ── lifecycle ─────────────────────────────────────────────────────────────────────────────

  async start(onMessage: (m: InboundMessage) => void | Promise<void>, onCommand?: (c: PlatformCommand) => void): Promise<void> {
    if (this.#client) throw new Error("The Discord channel is already started; stop() it before starting it again.");
    if (!this.#token) {
      throw this.#failStart(new DiscordConnectError("no_token", "no bot token: set DISCORD_BOT_TOKEN or channels.discord.token"));
    }
    this.#setStatus({ state: "starting" });
    this.#connected = false;
    this.#fatalClose = null;
    const client = new Client({
      intents: [GatewayIntentBits.Guilds, GatewayIntentBits.GuildMessages, GatewayIntentBits.MessageContent, GatewayIntentBits.DirectMessages],
      // Without it discord.js drops messages in DM channels it has not cached, i.e. every first DM.
      partials: [Partials.Channel],
      rest: { api: this.#options.apiBase },
      allowedMentions: { parse: [], repliedUser: false },
    });
    this.#client = client;
    this.#watchConnection(client);
    client.on(Events.MessageCreate, (message) => this.#receive(client, message, onMessage));
    client.on(Events.InteractionCreate, (interaction) => {
      if (interaction.isChatInputCommand()) {
        const commands = this.#options.slashCommands ?? [];
        handleSlashCommand(client, interaction, { commands, ownerIds: this.#options.ownerIds, onCommand, log: this.#log });
        return;
      }
      void handleComponentInteraction(interaction, this.#options.ownerIds, this.#onChoice).catch((error: unknown) => this.#log.warn("discord.interaction_failed", { error }));
    });

    try {
      await this.#connect(client, this.#token);
    } catch (err) {
      if (this.#client === client) this.#client = null;
      await destroyClient(client).catch(() => {});
      throw this.#failStart(this.#explain(err));
    }
    this.#connected = true;
    this.#setStatus({ state: "running", detail: this.#describe(client) });
    if (this.#options.slashCommands) void registerSlashCommands(client, this.#options.slashCommands, this.#log);
  }

  async stop(): Promise<void> {
    const client = this.#client;
    this.#client = null;
    this.#abortStart?.(new Error("the Discord channel was stopped while connecting"));
    if (!client) return;
    // Detached first: destroying reports the closed connection as "reconnecting".
    client.removeAllListeners();
    client.on(Events.Error, () => {});
    await destroyClient(client);
    this.#setStatus({ state: "stopped" });
  }

  /** Logs in and waits for READY (every guild received), a refusal, a timeout or stop(). */
  async #connect(client: Client, token: string): Promise<void> {
    let timer: NodeJS.Timeout | undefined;
    const ready = new Promise<void>((resolve) => client.once(Events.ClientReady, () => resolve()));
    const abort = new Promise<never>((_, reject) => {
      this.#abortStart = reject;
      timer = setTimeout(() => {
        reject(new DiscordConnectError("timeout", `Discord did not answer within ${Math.round(this.#connectTimeoutMs / 1000)} s (${this.#options.apiBase}); check the network and restart`));
      }, this.#connectTimeoutMs);
    });
    try {
      await Promise.race([client.login(token).then(() => ready), abort]);
    } finally {
      clearTimeout(timer);
      this.#abortStart = null;
    }
  }

  /** Follows discord.js's shard events into the channel status, with one log line per change. */
  #watchConnection(client: Client): void {
    const current = () => this.#client === client && this.#connected;
    client.on(Events.ShardReconnecting, () => {
      if (current()) this.#setStatus({ state: "reconnecting", detail: "lost the connection to Discord; reconnecting" });
    });
    client.on(Events.ShardResume, () => {
      if (!current()) return;
      this.#log.info("discord.resumed");
      this.#setStatus({ state: "running", detail: this.#describe(client) });
    });
    client.on(Events.ShardReady, () => {
      if (current()) this.#setStatus({ state: "running", detail: this.#describe(client) });
    });
    client.on(Events.ShardDisconnect, (event) => {
      if (!(event.code in FATAL_CLOSE_CODES)) return;
      this.#fatalClose = event.code;
      // Before READY the failure surfaces through start(); after it, this is the only notice.
      if (current()) this.#setStatus({ state: "failed", reason: this.#explain(new Error(`gateway closed with ${event.code}`)).message });
    });
    client.on(Events.ShardError, (error) => this.#log.warn("discord.connection_error", { error }));
    client.on(Events.Error, (error) => this.#log.error("discord.client_error", { error }));
    client.on(Events.Warn, (message) => this.#log.warn("discord.warning", { message }));
    client.rest.on("rateLimited", (info) => this.#log.info("discord.rate_limited", { route: info.route, retryAfterMs: info.retryAfter }));
  }

  #setStatus(next: ChannelStatus): void {
    const prev = this.#status;
    this.#status = next;
    logStateChange(this.#log, "discord", prev, next);
  }

  #failStart(error: DiscordConnectError): DiscordConnectError {
    this.#setStatus({ state: "failed", reason: error.message });
    return error;
  }

  /** Turns whatever discord.js threw into a reason that says what to fix. Never includes the token. */
  #explain(err: unknown): DiscordConnectError {
    if (err instanceof DiscordConnectError) return err;
    const code = (err as { code?: unknown }).code;
    const status = (err as { status?: unknown }).status;
    const kind: FailureKind =
      code === DiscordjsErrorCodes.TokenInvalid || status === 401 ? "bad_token" : this.#fatalClose !== null ? FATAL_CLOSE_CODES[this.#fatalClose]! : "unreachable";
    const detail = err instanceof Error ? err.message : String(err);
    switch (kind) {
      case "bad_token": {
        const how = this.#fatalClose === 4004 ? "the gateway closed with 4004 Authentication failed" : "401 Unauthorized";
        return new DiscordConnectError(kind, `Discord rejected the bot token (${how}): set a valid DISCORD_BOT_TOKEN or channels.discord.token (Developer Portal → your app → Bot → Reset Token)`, err);
      }
      case "intents":
        return new DiscordConnectError(kind, `Discord refused the gateway intents (${detail}): enable "Message Content Intent" on the Developer Portal's Bot page`, err);
      default:
        return new DiscordConnectError(kind, `could not connect to Discord at ${this.#options.apiBase}: ${detail}`, err);
    }
  }

  #describe(client: Client): string {
    const user = client.user;
    const guilds = client.guilds.cache.size;
    return `${user ? `as ${user.tag}` : "connected"} · ${guilds} guild${guilds === 1 ? "" : "s"}`;
  }

  // ── inbound ───────────────────────────────────────────────────────────────────────────────

  #receive(client: Client, message: Message, onMessage: (m: InboundMessage) => void | Promise<void>): void {
    try {
      const user = client.user;
      if (!user) return;
      const rules: DiscordInboundRules = { bot: { id: user.id, name: user.displayName }, ownerIds: this.#options.ownerIds, namePattern: this.#namePattern };
      const facts = factsOf(message);
      const result = normalizeMessage(facts, rules);
      if (result.kind === "ignored") {
        this.#log.debug("discord.ignored", { msg: message.id, reason: result.reason });
        return;
      }
      const attachments = facts.attachments.map((a): Attachment => ({
        kind: attachmentKind(a.contentType, facts.voice),
        name: a.name,
        mime: a.contentType ?? "",
        ...(a.size !== undefined ? { size: a.size } : {}),
        ...(a.durationSeconds !== undefined ? { durationSeconds: a.durationSeconds } : {}),
        fetch: (maxBytes, signal) => this.#fetchAttachment(a.url, maxBytes, signal),
      }));
      void onMessage(attachments.length > 0 ? { ...result.message, attachments } : result.message);
    } catch (err) {
      this.#log.error("discord.inbound_failed", { msg: message.id, error: err });
    }
  }

  /** Downloads an attachment from Discord's CDN (or the configured API's host, for a test server); never another address. */
  #fetchAttachment(url: string, maxBytes: number, signal: AbortSignal): Promise<Uint8Array> {
    const at = new URL(url);
    const own = new URL(this.#options.apiBase);
    const allowed = (at.protocol === "https:" && DISCORD_FILE_HOSTS.has(at.hostname)) || at.origin === own.origin;
    if (!allowed) return Promise.reject(new Error(`refused to fetch an attachment from ${at.origin}: not Discord's file endpoint`));
    return fetchBounded(url, maxBytes, signal);
  }

  // ── outbound ──────────────────────────────────────────────────────────────────────────────

  /**
   * Uploads a file as one message. Its nonce is derived from where it goes and what it is, with
   * `enforce_nonce`: an upload retried after a lost response (by @discordjs/rest on a 5xx, or a
   * replay after a crash within Discord's few minutes of nonce memory) returns the message
   * already made instead of posting the file twice. The gateway's outbox keeps it once beyond that.
   */
  async sendFile(to: InboundMessage | DeliveryTarget, file: OutboundFile): Promise<string> {
    const target = replyTarget(to);
    const data = Buffer.from(file.data.buffer, file.data.byteOffset, file.data.byteLength);
    const nonce = createHash("sha256")
      .update(`file\0${target.channelId}\0${target.replyTo ?? ""}\0${file.name}\0${file.caption ?? ""}\0`)
      .update(data)
      .digest("base64url")
      .slice(0, NONCE_LENGTH);
    const body = {
      content: file.caption ?? "",
      nonce,
      enforce_nonce: true,
      allowed_mentions: { parse: [] },
      attachments: [{ id: 0, filename: file.name }],
      ...(target.replyTo ? { message_reference: { message_id: target.replyTo, fail_if_not_exists: false } } : {}),
    };
    const sent = (await this.#rest().post(Routes.channelMessages(target.channelId), { body, files: [{ name: file.name, data }] })) as { id: string };
    return sent.id;
  }

  /** Discord has one indicator for every kind of work: typing (it shows for about 10 s). */
  async showActivity(to: InboundMessage | DeliveryTarget): Promise<void> {
    await this.#rest().post(Routes.channelTyping(replyTarget(to).channelId));
  }

  openReply(to: InboundMessage | DeliveryTarget, journal?: ReplyJournal): ReplySink {
    const target = replyTarget(to);
    // A resumed reply already answered the question with its first message.
    if (journal?.messageIds[0] !== undefined) delete target.replyTo;
    const transport = discordTransport(this.#rest, target, { typing: true, ...(journal ? { nonceSeed: journal.key } : {}) });
    return new StreamingReply(transport, { ...this.#replyOptions(), ...(journal ? { journal } : {}) });
  }

  onChoice(handler: ChoiceHandler): void {
    this.#onChoice = handler;
  }

  askChoices(to: DeliveryTarget, question: ChoiceQuestion): Promise<string> {
    return sendQuestion(this.#rest(), replyTarget(to).channelId, question);
  }

  settleChoices(to: DeliveryTarget, messageId: string, text: string): Promise<void> {
    return settleQuestion(this.#rest(), replyTarget(to).channelId, messageId, text);
  }

  async send(to: DeliveryTarget, text: string): Promise<void> {
    this.#rest(); // fails fast when not running, rather than through the retries below
    // The same path as a reply's final text: split at 2,000, retried, each part exactly once.
    await new StreamingReply(discordTransport(this.#rest, replyTarget(to), { typing: false }), this.#replyOptions()).finish(text);
  }

  #replyOptions(): StreamingReplyOptions {
    return { maxLength: MAX_MESSAGE, editIntervalMs: EDIT_INTERVAL_MS, typingIntervalMs: TYPING_INTERVAL_MS, reopenCodeBlocks: true, log: this.#log };
  }

  readonly #rest = (): DiscordRest => {
    const client = this.#client;
    if (!client) throw new Error("the Discord channel is not running");
    return client.rest;
  };
}

/**
 * Destroys the client, including a gateway socket that is still connecting. @discordjs/ws 1.2
 * leaves such a socket alone on destroy (it only closes open ones) and drops its error handler,
 * so it later either opens (a handle that keeps the daemon from exiting) or fails (an uncaught
 * "socket hang up"). It happens when Hearth stops while Discord is slow to accept a connection.
 */
export async function destroyClient(client: Client): Promise<void> {
  const sockets = connectingSockets(client);
  await client.destroy();
  for (const socket of sockets) {
    if (socket.readyState !== CONNECTING) continue;
    socket.on("error", () => {});
    socket.terminate();
  }
}

const CONNECTING = 0;

interface PendingSocket {
  readyState: number;
  on(event: "error", listener: () => void): unknown;
  terminate(): void;
}

/** The shards' sockets, reached through discord.js internals (`client.ws._ws.strategy.shards`); [] if they moved. */
function connectingSockets(client: Client): PendingSocket[] {
  type Internals = { _ws?: { strategy?: { shards?: Map<number, { connection?: Partial<PendingSocket> | null }> } } };
  const shards = (client.ws as unknown as Internals)._ws?.strategy?.shards;
  const sockets: PendingSocket[] = [];
  for (const shard of shards?.values() ?? []) {
    const socket = shard.connection;
    if (typeof socket?.terminate === "function" && typeof socket.on === "function" && typeof socket.readyState === "number") sockets.push(socket as PendingSocket);
  }
  return sockets;
}

/** A reply to a message answers it (in its thread or DM); a delivery target posts to the thread, else the chat. */
function replyTarget(to: InboundMessage | DeliveryTarget): DiscordReplyTarget {
  if (isDeliveryTarget(to)) return { channelId: to.threadId ?? to.chatId };
  const ref = isReplyRef(to.raw) ? to.raw : { channelId: to.chat.threadId ?? to.chat.id, messageId: to.id };
  return { channelId: ref.channelId, replyTo: ref.messageId };
}

function isReplyRef(raw: unknown): raw is DiscordReplyRef {
  const r = raw as Partial<DiscordReplyRef> | null | undefined;
  return typeof r?.channelId === "string" && typeof r.messageId === "string";
}
