// The Telegram channel (DESIGN §8): grammY over long polling with @grammyjs/runner (chats in
// parallel, order kept per chat), auto-retry on 429, replies streamed by editing one message.
//
// The channel describes messages and renders replies; the gateway decides who may talk and
// about what, and answers everything (even the polite note for a photo it cannot read): a
// refused sender gets no reply of any kind.
//
// Lifecycle: stopped → starting → running ⇄ reconnecting (network trouble, a 409 conflict) →
// stopped; a rejected token (401) is `failed` for good: start() rejects with what to fix, or,
// when the token is revoked while running, polling stops and status() says why.
import { Agent as HttpAgent } from "node:http";
import { Agent as HttpsAgent } from "node:https";
import { autoRetry } from "@grammyjs/auto-retry";
import { createConcurrentSink, createRunner, createSource, sequentialize, type RunnerHandle } from "@grammyjs/runner";
import { Api, Bot, InputFile, type ApiClientOptions, type Context } from "grammy";
import type { Message, Update, UserFromGetMe } from "grammy/types";
import type { Logger } from "../../process/log.ts";
import { fetchBounded, TooLargeError } from "../../media/download.ts";
import type { Attachment, Channel, ChannelStatus, ChatActivity, ChoiceHandler, ChoiceQuestion, OutboundFile, DeliveryTarget, InboundMessage, ReplyJournal, ReplySink } from "../channel.ts";
import { isDeliveryTarget } from "../channel.ts";
import { splitMessage } from "../chunk.ts";
import { PREVIEW_PLACEHOLDER, StreamingReply } from "../streaming-reply.ts";
import { setCommandMenus, withWorkingReaction, type CommandMenus, type ReactionMode } from "./chat-signs.ts";
import { handleCallback, sendQuestion, settleQuestion } from "./choices.ts";
import { describeError, errorCode, TelegramAuthError } from "./errors.ts";
import { normalizeMessage, type InboundRules, type TelegramFile, type TelegramRaw } from "./inbound.ts";
import { UpdatePoller, type Backoff } from "./polling.ts";
import { deliveryTargetOf, parseRaw, replyTargetOf } from "./targets.ts";
import { createTelegramTransport, requestTimeout, showChatAction, TelegramReplyState, type TelegramTransportDeps } from "./transport.ts";

export interface TelegramChannelOptions {
  /** Without one, start() rejects saying where to put it. */
  token?: string | undefined;
  /** Default Bot API server: https://api.telegram.org (no trailing slash). */
  apiRoot: string;
  ownerIds: string[];
  /** channels.telegram.namePattern: a case-insensitive regex that addresses the bot in groups. */
  namePattern: string | null;
  /** channels.telegram.reactions: where a message shows 👀 while it is answered. Absent: nowhere. */
  reactions?: ReactionMode;
  /** The command menus to set at start (setMyCommands); absent: the menus are left as they are. */
  commandMenus?: CommandMenus;
  /** Tuning for tests and benchmarks; the defaults suit api.telegram.org. */
  polling?: {
    /** Seconds a getUpdates call waits for news (long polling). Default 30. */
    longPollSeconds?: number;
    /**
     * Pause after an early empty answer (a server that does not long-poll, e.g. an emulator):
     * idlePollMs at first, doubling while nothing arrives up to idlePollMaxMs. Default 10 → 100.
     */
    idlePollMs?: number;
    idlePollMaxMs?: number;
    /** Waits between failed getUpdates/getMe calls. Default 1 s doubling to 30 s. */
    backoff?: Backoff;
  };
}

const MAX_MESSAGE_LENGTH = 4000;
const EDIT_INTERVAL_MS = 1000;
/** Every call but getUpdates: a reply waits for the request in flight, so it must not hang. */
const REQUEST_TIMEOUT_MS = 20_000;
const DEFAULT_BACKOFF: Backoff = { initialMs: 1000, maxMs: 30_000 };

export function createTelegramChannel(options: TelegramChannelOptions, deps: { log: Logger }): Channel {
  return new TelegramChannel(options, deps.log);
}

class TelegramChannel implements Channel {
  readonly id = "telegram" as const;
  readonly #o: TelegramChannelOptions;
  readonly #log: Logger;
  readonly #token: string;
  readonly #longPollSeconds: number;
  readonly #backoff: Backoff;
  readonly #agent: HttpAgent;
  readonly #bot: Bot | undefined;
  readonly #replyDeps: TelegramTransportDeps | undefined;
  readonly #namePattern: RegExp | null;

  #status: ChannelStatus = { state: "stopped" };
  #onMessage: ((m: InboundMessage) => void | Promise<void>) | undefined;
  readonly #albums = new Map<string, Album>();
  /** Updates handed to the bot whose handling has not finished (a message's files still downloading), by id. */
  readonly #unsettled = new Map<number, Promise<unknown>>();
  /** Album parts' updates, by id, until the merged message is accepted (their handlers return at once). */
  readonly #albumParts = new Map<number, Promise<void>>();
  #rules: InboundRules | undefined;
  #onChoice: ChoiceHandler | undefined;
  #runner: RunnerHandle | undefined;
  /** Aborted by stop(): ends background reconnects and their waits. */
  #lifetime = new AbortController();

  constructor(options: TelegramChannelOptions, log: Logger) {
    this.#o = options;
    this.#log = log;
    this.#token = options.token?.trim() ?? "";
    this.#longPollSeconds = options.polling?.longPollSeconds ?? 30;
    this.#backoff = options.polling?.backoff ?? DEFAULT_BACKOFF;
    this.#namePattern = compilePattern(options.namePattern, log);
    // An agent of our own, so that stop() can close its keep-alive sockets.
    this.#agent = options.apiRoot.startsWith("https:") ? new HttpsAgent({ keepAlive: true }) : new HttpAgent({ keepAlive: true });
    if (!this.#token) return;

    const client: ApiClientOptions = {
      apiRoot: options.apiRoot,
      timeoutSeconds: this.#longPollSeconds + 15,
      baseFetchConfig: { agent: this.#agent },
    };
    this.#bot = new Bot(this.#token, { client });
    this.#bot.api.config.use(requestTimeout(REQUEST_TIMEOUT_MS));
    // Only rate limits are retried here; other failures go back to the caller, which knows
    // whether a retry could duplicate a message (StreamingReply retries final sends itself).
    this.#bot.api.config.use(autoRetry({ maxRetryAttempts: 3, maxDelaySeconds: 120, rethrowInternalServerErrors: true, rethrowHttpErrors: true }));
    const previewApi = new Api(this.#token, client);
    previewApi.config.use(requestTimeout(REQUEST_TIMEOUT_MS));
    this.#replyDeps = { api: this.#bot.api, previewApi, state: new TelegramReplyState(), log };

    this.#bot.use(sequentialize((ctx: Context) => ctx.chat?.id.toString()));
    this.#bot.on("message", (ctx) => this.#receive(ctx.message, ctx.update.update_id));
    this.#bot.on("callback_query", (ctx) =>
      handleCallback(ctx.callbackQuery, this.#o.ownerIds, this.#onChoice, (text) => ctx.answerCallbackQuery(text ? { text } : {})).catch((err: unknown) =>
        this.#log.warn("telegram.callback_failed", { error: describeError(err, this.#token) }),
      ),
    );
  }

  status(): ChannelStatus {
    return this.#status;
  }

  async start(onMessage: (m: InboundMessage) => void | Promise<void>): Promise<void> {
    if (this.#status.state !== "stopped" && this.#status.state !== "failed") {
      throw new Error("The Telegram channel is already started; stop() it first.");
    }
    if (!this.#bot) {
      const reason = "No Telegram bot token: set TELEGRAM_BOT_TOKEN or channels.telegram.token.";
      this.#status = { state: "failed", reason };
      throw new Error(reason);
    }
    this.#onMessage = onMessage;
    this.#lifetime = new AbortController();
    this.#status = { state: "starting" };
    let me: UserFromGetMe;
    try {
      me = await this.#bot.api.getMe();
    } catch (err) {
      if (errorCode(err) === 401) throw this.#authFailed();
      // Telegram unreachable at boot (the network comes up after the daemon): the channel keeps
      // trying in the background instead of staying dead until a restart.
      this.#log.warn("telegram.unreachable", { error: describeError(err, this.#token) });
      void this.#connectInBackground();
      return;
    }
    await this.#startPolling(me);
  }

  async stop(): Promise<void> {
    this.#lifetime.abort();
    const runner = this.#runner;
    this.#runner = undefined;
    if (runner?.isRunning()) await runner.stop();
    this.#onMessage = undefined;
    this.#agent.destroy();
    if (this.#status.state !== "failed") this.#status = { state: "stopped" };
  }

  openReply(to: InboundMessage | DeliveryTarget, journal?: ReplyJournal): ReplySink {
    const deps = this.#replyDeps;
    if (!deps) return failingSink("the Telegram channel has no bot token");
    const target = isDeliveryTarget(to) ? deliveryTargetOf(to) : replyTargetOf(to);
    // A resumed reply already quoted the question in its first message.
    if (journal?.messageIds[0] !== undefined) delete target.replyToMessageId;
    const reply = new StreamingReply(createTelegramTransport(target, deps), {
      maxLength: MAX_MESSAGE_LENGTH,
      editIntervalMs: EDIT_INTERVAL_MS,
      log: this.#log,
      // The Bot API has no idempotent send: a preview Telegram creates in the instant before
      // its id is on disk cannot be found again after a crash. It is created with a neutral text,
      // so such a message is never a half-written answer.
      ...(journal ? { journal, previewPlaceholder: PREVIEW_PLACEHOLDER } : {}),
    });
    // Only answers (a journal: a run answers an inbox message) show 👀; a command's or a
    // refusal's one-line reply is there before the sign would be.
    const asked = journal && !isDeliveryTarget(to) ? parseRaw(to.raw) : undefined;
    if (!asked || !this.#reactsIn(asked)) return reply;
    return withWorkingReaction(reply, this.#bot!.api, asked, this.#log, this.#token);
  }

  #reactsIn(raw: TelegramRaw): boolean {
    const mode = this.#o.reactions ?? "off";
    return mode === "all" || (mode === "private" && !raw.group);
  }

  async send(to: DeliveryTarget, text: string): Promise<void> {
    const deps = this.#replyDeps;
    if (!deps) throw new Error("The Telegram channel has no bot token.");
    const transport = createTelegramTransport(deliveryTargetOf(to), deps);
    for (const chunk of splitMessage(text, MAX_MESSAGE_LENGTH)) await transport.send(chunk, { final: true });
  }

  async sendFile(to: InboundMessage | DeliveryTarget, file: OutboundFile): Promise<string> {
    const bot = this.#bot;
    if (!bot) throw new Error("The Telegram channel has no bot token.");
    const target = isDeliveryTarget(to) ? deliveryTargetOf(to) : replyTargetOf(to);
    const input = new InputFile(file.data, file.name);
    const extra = {
      ...(file.caption ? { caption: file.caption.slice(0, 1024) } : {}),
      ...(target.threadId !== undefined ? { message_thread_id: target.threadId } : {}),
    };
    const sent = file.voice
      ? await bot.api.sendVoice(target.chatId, input, extra)
      : file.asPhoto
        ? await bot.api.sendPhoto(target.chatId, input, extra)
        : await bot.api.sendDocument(target.chatId, input, extra);
    return String(sent.message_id);
  }

  onChoice(handler: ChoiceHandler): void {
    this.#onChoice = handler;
  }

  async askChoices(to: DeliveryTarget, question: ChoiceQuestion): Promise<string> {
    if (!this.#bot) throw new Error("The Telegram channel has no bot token.");
    return sendQuestion(this.#bot.api, deliveryTargetOf(to), question);
  }

  async settleChoices(to: DeliveryTarget, messageId: string, text: string): Promise<void> {
    if (!this.#bot) throw new Error("The Telegram channel has no bot token.");
    await settleQuestion(this.#bot.api, deliveryTargetOf(to), messageId, text);
  }

  async showActivity(to: InboundMessage | DeliveryTarget, activity: ChatActivity): Promise<void> {
    const deps = this.#replyDeps;
    if (!deps) throw new Error("The Telegram channel has no bot token.");
    await showChatAction(isDeliveryTarget(to) ? deliveryTargetOf(to) : replyTargetOf(to), deps, activity);
  }

  // ── connecting and polling ─────────────────────────────────────────────────────────────────

  async #connectInBackground(): Promise<void> {
    const signal = this.#lifetime.signal;
    for (let failures = 1; !signal.aborted; failures++) {
      const delayMs = Math.min(this.#backoff.maxMs, this.#backoff.initialMs * 2 ** Math.min(failures - 1, 30));
      this.#status = { state: "reconnecting", detail: `cannot reach Telegram at ${this.#o.apiRoot}; retrying in ${Math.max(1, Math.round(delayMs / 1000))} s` };
      if (!(await pause(delayMs, signal))) return;
      try {
        const me = await this.#bot!.api.getMe();
        if (signal.aborted) return;
        await this.#startPolling(me);
        return;
      } catch (err) {
        if (errorCode(err) === 401) {
          this.#authFailed();
          return;
        }
        this.#log.debug("telegram.unreachable", { error: describeError(err, this.#token), failures });
      }
    }
  }

  async #startPolling(me: UserFromGetMe): Promise<void> {
    const bot = this.#bot!;
    bot.botInfo = me;
    this.#rules = { me: { id: me.id, username: me.username }, ownerIds: this.#o.ownerIds, namePattern: this.#namePattern };
    // A webhook left from another deployment would make every getUpdates a 409.
    await bot.api.deleteWebhook().catch((err: unknown) => this.#log.debug("telegram.delete_webhook_failed", { error: describeError(err, this.#token) }));
    if (this.#lifetime.signal.aborted) return;
    if (this.#o.commandMenus) void setCommandMenus(bot.api, this.#o.commandMenus, this.#o.ownerIds, this.#log, this.#token);

    const poller = new UpdatePoller({
      api: { getUpdates: (params, signal) => this.#fetchUpdates(params, signal) },
      longPollSeconds: this.#longPollSeconds,
      idlePollMs: this.#o.polling?.idlePollMs ?? 10,
      idlePollMaxMs: Math.max(this.#o.polling?.idlePollMs ?? 10, this.#o.polling?.idlePollMaxMs ?? 100),
      backoff: this.#backoff,
      log: this.#log,
      token: this.#token,
      onStatus: (status) => {
        if (this.#runner) this.#status = status.state === "running" ? this.#runningStatus() : status;
      },
    });
    const sink = createConcurrentSink<Parameters<Bot["handleUpdate"]>[0]>(
      { consume: (update) => this.#track(update.update_id, bot.handleUpdate(update)) },
      async (error) => this.#log.error("telegram.update_failed", { error: describeError(error, this.#token) }),
    );
    const runner = createRunner(createSource(poller), sink);
    this.#runner = runner;
    runner.start();
    runner.task()?.catch((err: unknown) => this.#pollingEnded(runner, err));
    this.#status = this.#runningStatus();
    this.#log.info("telegram.polling", { bot: `@${me.username}`, apiRoot: this.#o.apiRoot });
  }

  #pollingEnded(runner: RunnerHandle, err: unknown): void {
    if (this.#runner !== runner) return;
    this.#runner = undefined;
    if (err instanceof TelegramAuthError) {
      this.#authFailed();
      return;
    }
    // The poller only throws for a bad token; anything else is a bug somewhere below it.
    this.#log.error("telegram.polling_crashed", { error: describeError(err, this.#token) });
    this.#status = { state: "reconnecting", detail: "polling stopped unexpectedly; restarting" };
    void pause(this.#backoff.initialMs, this.#lifetime.signal).then((ok) => {
      if (ok && this.#bot?.botInfo) void this.#startPolling(this.#bot.botInfo);
    });
  }

  #authFailed(): TelegramAuthError {
    const error = new TelegramAuthError();
    this.#status = { state: "failed", reason: error.message };
    this.#log.error("telegram.token_rejected", { hint: error.message });
    return error;
  }

  #runningStatus(): ChannelStatus {
    return { state: "running", detail: `@${this.#rules?.me.username ?? "?"}` };
  }

  // ── incoming messages ──────────────────────────────────────────────────────────────────────

  /**
   * Returns the gateway's promise for a message: until it settles (the message and its files
   * are on disk) the update stays unconfirmed (#fetchUpdates) and the chat's next update waits.
   * Album parts are collected instead (see below).
   */
  #receive(msg: Message, updateId: number): void | Promise<void> {
    const rules = this.#rules;
    if (!rules) return;
    const result = normalizeMessage(msg, rules);
    switch (result.type) {
      case "message": {
        const m = result.files.length > 0 ? { ...result.message, attachments: result.files.map((f) => this.#attachment(f)) } : result.message;
        if (result.mediaGroupId !== undefined) return this.#collectAlbum(`${msg.chat.id}:${result.mediaGroupId}`, m, updateId);
        return this.#onMessage?.(m);
      }
      case "ignored":
        this.#log.debug("telegram.ignored", { reason: result.reason, chat: String(msg.chat.id) });
        return;
      default:
        result satisfies never;
    }
  }

  #track<T>(updateId: number, handling: Promise<T>): Promise<T> {
    const settled = handling.finally(() => this.#unsettled.delete(updateId));
    this.#unsettled.set(updateId, settled.catch(() => {}));
    return settled;
  }

  /**
   * getUpdates for the poller. Asking from an offset confirms every update below it to Telegram,
   * so an update not handled yet (a message whose files are still on their way to disk) must
   * not be passed: while one is, updates are asked for from it, without long polling, and only
   * the new ones go on. Other chats keep flowing; a crash meanwhile gets it delivered again.
   */
  async #fetchUpdates(params: Parameters<Api["getUpdates"]>[0], signal: Parameters<Api["getUpdates"]>[1]): Promise<Update[]> {
    const api = this.#bot!.api;
    const offset = params?.offset ?? 0;
    const floor = Math.min(...this.#unsettled.keys(), ...this.#albumParts.keys());
    if (!(floor < offset)) return api.getUpdates(params, signal);
    const updates = await api.getUpdates({ ...params, offset: floor, limit: 100, timeout: 0 }, signal);
    const fresh = updates.filter((u) => u.update_id >= offset);
    if (fresh.length > 0) return fresh;
    // Nothing new: wait a little (or until the pending one settles) instead of asking in a hot
    // loop — unless it settled while this request was out: then the usual polling goes on at once.
    const pending = [...this.#unsettled.values(), ...this.#albumParts.values()];
    if (pending.length === 0) return [];
    let timer: NodeJS.Timeout | undefined;
    await Promise.race([new Promise<void>((resolve) => (timer = setTimeout(resolve, PENDING_POLL_MS))), ...pending]);
    clearTimeout(timer);
    return [];
  }

  /**
   * An album arrives as one message per picture with the same media_group_id, one after the
   * other in the chat: they are merged into one message (the first's id, the caption that has
   * text, every file) once no part came for ALBUM_QUIET_MS. Not awaited: the chat's later
   * updates must be able to arrive meanwhile.
   *
   * Until the merged message is accepted (its files stored, the inbox record on disk), every
   * part's update stays unconfirmed (#albumParts, read by #fetchUpdates): a crash inside the
   * window gets them all again at the next start, and they are merged again into one message.
   */
  #collectAlbum(key: string, m: InboundMessage, updateId: number): void {
    const open = this.#albums.get(key);
    if (open) {
      clearTimeout(open.timer);
      open.message = {
        ...open.message,
        text: open.message.text || m.text,
        addressed: open.message.addressed || m.addressed,
        attachments: [...(open.message.attachments ?? []), ...(m.attachments ?? [])],
      };
    }
    const album = open ?? newAlbum(m);
    this.#albumParts.set(updateId, album.accepted);
    void album.accepted.then(() => this.#albumParts.delete(updateId));
    album.timer = setTimeout(() => {
      this.#albums.delete(key);
      try {
        void Promise.resolve(this.#onMessage?.(album.message)).catch(() => {}).finally(album.confirm);
      } catch (err) {
        album.confirm();
        this.#log.error("telegram.album_failed", { error: describeError(err, this.#token) });
      }
    }, ALBUM_QUIET_MS);
    this.#albums.set(key, album);
    this.#log.debug("telegram.album_part", { album: key, update: updateId, files: album.message.attachments?.length ?? 0 });
  }

  /** A file's download: getFile, then the Bot API's file route on the configured server only. */
  #attachment(f: TelegramFile): Attachment {
    const bot = this.#bot!;
    const base = `${this.#o.apiRoot}/file/bot${this.#token}/`;
    return {
      kind: f.kind,
      name: f.name,
      mime: f.mime,
      ...(f.size !== undefined ? { size: f.size } : {}),
      ...(f.durationSeconds !== undefined ? { durationSeconds: f.durationSeconds } : {}),
      fetch: async (maxBytes, signal) => {
        const file = await bot.api.getFile(f.fileId, signal as never);
        if (file.file_size !== undefined && file.file_size > maxBytes) throw new TooLargeError(maxBytes);
        const path = file.file_path;
        if (!path || path.split("/").some((p) => p === ".." || p === "") || /^[a-z]+:/i.test(path)) throw new Error("Telegram gave no usable file path.");
        return fetchBounded(`${base}${path.split("/").map(encodeURIComponent).join("/")}`, maxBytes, signal);
      },
    };
  }
}

/** An album being collected: the merged message so far, and its acceptance, which its parts' updates wait for. */
interface Album {
  message: InboundMessage;
  timer: NodeJS.Timeout | undefined;
  accepted: Promise<void>;
  confirm: () => void;
}

/** How often updates are asked for while one is not handled yet (no long polling then). */
const PENDING_POLL_MS = 500;

function newAlbum(m: InboundMessage): Album {
  const { promise: accepted, resolve: confirm } = Promise.withResolvers<void>();
  return { message: m, timer: undefined, accepted, confirm };
}

/** An album's parts come within milliseconds of each other; this much quiet ends it. */
const ALBUM_QUIET_MS = 800;

// ── helpers ──────────────────────────────────────────────────────────────────────────────────

function compilePattern(source: string | null, log: Logger): RegExp | null {
  if (source === null) return null;
  try {
    return new RegExp(source, "i");
  } catch (err) {
    log.warn("telegram.bad_name_pattern", { error: err instanceof Error ? err.message : String(err) });
    return null;
  }
}

/** Resolves true after `ms`, or false as soon as `signal` aborts. */
function pause(ms: number, signal: AbortSignal): Promise<boolean> {
  if (signal.aborted) return Promise.resolve(false);
  return new Promise((resolve) => {
    const timer = setTimeout(() => {
      signal.removeEventListener("abort", onAbort);
      resolve(true);
    }, ms);
    const onAbort = () => {
      clearTimeout(timer);
      resolve(false);
    };
    signal.addEventListener("abort", onAbort, { once: true });
  });
}

function failingSink(reason: string): ReplySink {
  const fail = async () => {
    throw new Error(`The reply could not be sent: ${reason}.`);
  };
  return { textDelta: () => {}, textReset: () => {}, toolStarted: () => {}, toolFinished: () => {}, finish: fail, fail };
}
