/**
 * A Telegram Bot API for tests: telegram-test-api (an emulator) on a free 127.0.0.1 port, with
 * a small recording proxy in front of it. The bot under test gets `apiRoot` (the proxy), which
 * records every Bot API call and can answer chosen calls with an error (a 429 with retry_after,
 * a 401, a 409, "can't parse entities", a dropped connection) instead of forwarding them.
 *
 * Users write through `user(...)`; what the bot has in each chat (its messages, with every edit)
 * is read from the emulator itself, so it is what a person would see.
 *
 * Emulator quirks handled here: `port: 0` silently becomes 9000 (a free port is picked first),
 * old messages are purged after `storeTimeout` (set to an hour), the emulator never sets
 * `entities` (added here the way Telegram's server does: @mentions and a leading /command).
 *
 * Where the emulator is kinder than Telegram, the proxy behaves like Telegram, because crash
 * tests depend on it: `getUpdates` honours `offset` (an update is re-delivered until a later
 * call confirms it, so a bot killed right after fetching gets it again), an edit to the same
 * text is a 400 "message is not modified", and an edit or delete of a message the bot does not
 * have (any more) is a 400. `setMessageReaction` and `setMyCommands`, which the emulator lacks,
 * are answered `true` here and recorded like every call.
 */
import { PREVIEW_PLACEHOLDER } from "../../src/channels/streaming-reply.ts";
import { createServer, type IncomingMessage, type ServerResponse } from "node:http";
import { createServer as createNetServer, type AddressInfo } from "node:net";
import { buffer as readBuffer } from "node:stream/consumers";
import type { MessageEntity } from "grammy/types";
import TelegramServerClass from "telegram-test-api";
import type { TelegramServer } from "telegram-test-api/lib/telegramServer.js";
import { waitFor } from "./daemon.ts";

/** A file the bot uploaded with sendPhoto, sendDocument or sendVoice. */
export interface SentBotFile {
  method: string;
  chatId: string;
  caption: string | undefined;
  threadId: number | undefined;
  name: string;
  bytes: Uint8Array;
}

interface UploadedFile {
  field: string;
  name: string;
  bytes: Uint8Array;
}

async function filesOf(form: FormData): Promise<UploadedFile[]> {
  const out: UploadedFile[] = [];
  for (const [field, value] of form.entries()) {
    if (typeof value !== "string") out.push({ field, name: value.name, bytes: new Uint8Array(await value.arrayBuffer()) });
  }
  return out;
}

/** What the emulator's getMe answers. */
export const EMULATED_BOT = { id: 666, username: "TestNameBot", firstName: "Test First name" } as const;

/** One Bot API call the proxy saw, answered by the emulator or by an injected fault. */
export interface BotApiCall {
  method: string;
  body: Record<string, any>;
  status: number;
  response: any;
  injected: boolean;
  at: number;
}

/** A fault the proxy serves instead of forwarding; `times` calls matching `method` (and `when`). */
export interface Fault {
  method: string;
  when?: (body: Record<string, any>) => boolean;
  /** Default 1. */
  times?: number;
  /**
   * An HTTP status and Bot API error body, or a reset connection (a network error), or
   * "apply-then-hang": the call is applied by the emulator but its answer never comes back (the
   * bot dies before it hears that the platform did it); "hang": never applied, never answered
   * (the bot dies while the request is on its way).
   */
  reply: { status: number; body: object } | "reset" | "apply-then-hang" | "hang";
}

/** A message the bot has in a chat, as it looks now, with how it got there. */
export interface BotMessage {
  chatId: string;
  messageId: number;
  text: string;
  parseMode: string | undefined;
  threadId: number | undefined;
  replyToMessageId: number | undefined;
  /** Successful edits after the first send. */
  edits: number;
  /** Its inline keyboard now (rows of buttons); undefined when it never had one, [] once removed. */
  keyboard: Array<Array<{ text: string; callback_data: string }>> | undefined;
  /** Every text it showed, first to last. */
  history: string[];
  sentAt: number;
  updatedAt: number;
}

export type BotActivity = { kind: "sent" | "edited"; message: BotMessage; at: number };

export interface EmulatedUserOptions {
  userId: number;
  firstName?: string;
  lastName?: string;
  username?: string;
  /** Default: the user's private chat with the bot. */
  chat?: { id: number; type: "group" | "supergroup"; title: string; isForum?: boolean };
}

export interface EmulatedUser {
  readonly userId: number;
  readonly chatId: number;
  /** Writes `text` (entities added like Telegram does); resolves with the new message's id. */
  send(text: string, extra?: Record<string, unknown>): Promise<number>;
  /** Writes a reply to one of the bot's messages. */
  replyToBot(botMessageId: number, text: string): Promise<number>;
  /** Sends a message without text (a photo, a sticker…): `fields` are its Bot API fields. */
  sendMedia(fields: Record<string, unknown>): Promise<number>;
  /**
   * Presses the button labelled `label` under the bot's message (a callback query, as Telegram
   * sends it: the message, its chat, this user as `from`); throws when there is no such button.
   */
  press(botMessageId: number, label: string): Promise<void>;
}

export interface TelegramEmulator {
  /** Give this to the bot as apiRoot: the recording proxy. */
  readonly apiRoot: string;
  /** The emulator itself, without the proxy (no recording, no faults): for benchmarks. */
  readonly directApiRoot: string;
  readonly token: string;
  readonly server: TelegramServer;
  /** Every Bot API call through the proxy, in order. */
  readonly calls: BotApiCall[];
  inject(fault: Fault): void;
  user(opts: EmulatedUserOptions): EmulatedUser;
  /** The bot's messages in a chat (all chats without an id), oldest first; deleted ones are gone. */
  botMessages(chatId?: number | string): BotMessage[];
  /** Messages the bot deleted, in the order it deleted them. */
  deletedBotMessages(): BotMessage[];
  /** Called for every message the bot sends or edits; returns an unsubscribe function. */
  onBotActivity(listener: (a: BotActivity) => void): () => void;
  /** Resolves once the chat has `count` bot messages; rejects after timeoutMs. */
  waitForBotMessages(chatId: number | string, count: number, timeoutMs?: number): Promise<BotMessage[]>;
  callsTo(method: string): BotApiCall[];
  /**
   * Puts a file on the emulated file server: getFile answers for it and the download route
   * `/file/bot<token>/<path>` serves it. `statedSize` overrides the size getFile reports;
   * `filePath` the `file_path` it reports (a hostile path: an attack on the download); with
   * `gate`, a download answers only once the gate resolves (a slow download).
   */
  addFile(bytes: Uint8Array, opts?: { statedSize?: number; filePath?: string; gate?: Promise<void> }): { file_id: string; file_unique_id: string; file_size: number };
  /** sendChatAction calls that were answered (see `chatActions` option), in order. */
  chatActions(chatId?: number | string): Array<{ chatId: string; action: string; at: number }>;
  /** Every request to the file download route, with the bytes served. */
  readonly fileDownloads: Array<{ path: string; bytes: number }>;
  /** Files the bot sent (sendPhoto, sendDocument, sendVoice: multipart uploads), in order. */
  readonly sentFiles: SentBotFile[];
  stop(): Promise<void>;
}

/** Binds port 0 on 127.0.0.1, reads the port and releases it (the emulator cannot take 0). */
export async function freePort(): Promise<number> {
  const probe = createNetServer();
  await new Promise<void>((resolve) => probe.listen(0, "127.0.0.1", resolve));
  const { port } = probe.address() as AddressInfo;
  await new Promise<void>((resolve) => probe.close(() => resolve()));
  return port;
}

/**
 * `chatActions`: answer sendChatAction like Telegram (`true`) instead of the emulator's HTTP 500,
 * so a bot shows its typing and upload indicators; off by default, as the emulator is.
 */
/**
 * `botId`: the bot getMe names (default EMULATED_BOT's id, the emulator's own): another bot, as
 * after a token change in BotFather. A new emulator numbers messages from 1 again, as Telegram
 * does for each bot's chats.
 */
export async function startTelegramEmulator(opts: { token?: string; chatActions?: boolean; botId?: number } = {}): Promise<TelegramEmulator> {
  const token = opts.token ?? "123456789:AAE_TEST-token-for-the-emulator-0123";
  const ServerClass = TelegramServerClass as unknown as new (config: { port: number; host: string; storeTimeout: number }) => TelegramServer;
  const server = new ServerClass({ port: await freePort(), host: "127.0.0.1", storeTimeout: 3600 });
  await server.start();
  const emulatorUrl = server.config.apiURL;

  const messages: BotMessage[] = [];
  const deleted: BotMessage[] = [];
  const listeners = new Set<(a: BotActivity) => void>();
  const notify = (a: BotActivity) => listeners.forEach((l) => l(a));
  recordBotMessages(server, messages, notify);

  const files = new Map<string, { bytes: Uint8Array; path: string; statedSize: number; gate?: Promise<void> }>();
  const sentFiles: SentBotFile[] = [];
  const fileDownloads: Array<{ path: string; bytes: number }> = [];
  const calls: BotApiCall[] = [];
  const faults: Array<Fault & { left: number }> = [];
  const proxy = createServer((req, res) => {
    forward(req, res).catch((error: unknown) => {
      if (!res.headersSent) res.writeHead(502, { "content-type": "application/json" });
      res.end(JSON.stringify({ ok: false, error_code: 502, description: `proxy: ${String(error)}` }));
    });
  });

  async function forward(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const path = new URL(req.url ?? "/", "http://127.0.0.1").pathname;
    const download = /^\/file\/bot([^/]+)\/(.+)$/.exec(path);
    if (download) {
      const file = download[1] === token ? [...files.values()].find((f) => f.path === decodeURIComponent(download[2]!)) : undefined;
      if (file?.gate) await file.gate;
      fileDownloads.push({ path: download[2]!, bytes: file?.bytes.length ?? 0 });
      if (!file) {
        res.writeHead(404, { "content-type": "application/json" });
        res.end(JSON.stringify({ ok: false, error_code: 404, description: "Not Found" }));
        return;
      }
      res.writeHead(200, { "content-type": "application/octet-stream", "content-length": String(file.bytes.length) });
      res.end(file.bytes);
      return;
    }
    const bytes = await readBuffer(req);
    const raw = bytes.toString("utf8");
    const method = /^\/bot[^/]+\/([A-Za-z]+)$/.exec(path)?.[1] ?? path;
    const multipart = (req.headers["content-type"] ?? "").startsWith("multipart/form-data");
    const form = multipart ? await new Request("http://x/", { method: "POST", headers: { "content-type": req.headers["content-type"]! }, body: bytes }).formData() : undefined;
    const body: Record<string, any> = form ? Object.fromEntries([...form.entries()].filter(([, v]) => typeof v === "string")) : parseBody(raw);
    if (form) body.__files = await filesOf(form);
    const at = Date.now();
    const fault = faults.find((f) => f.left > 0 && f.method === method && (!f.when || f.when(body)));
    if (fault && fault.reply !== "apply-then-hang") {
      fault.left--;
      if (fault.reply === "hang") {
        calls.push({ method, body, status: 0, response: null, injected: true, at });
        return;
      }
      if (fault.reply === "reset") {
        calls.push({ method, body, status: 0, response: null, injected: true, at });
        req.socket.resetAndDestroy();
        return;
      }
      calls.push({ method, body, status: fault.reply.status, response: fault.reply.body, injected: true, at });
      res.writeHead(fault.reply.status, { "content-type": "application/json" });
      res.end(JSON.stringify(fault.reply.body));
      return;
    }
    if (fault) fault.left--;
    const own = answerLikeTelegram(method, body);
    if (own) {
      calls.push({ method, body, status: own.status, response: own.body, injected: false, at });
      if (fault) return; // applied (nothing to apply), never answered
      res.writeHead(own.status, { "content-type": "application/json" });
      res.end(JSON.stringify(own.body));
      return;
    }
    const upstream = await fetch(`${emulatorUrl}${req.url ?? "/"}`, {
      method: req.method ?? "POST",
      headers: { "content-type": req.headers["content-type"] ?? "application/json" },
      ...(req.method === "GET" || req.method === "HEAD" ? {} : { body: raw }),
    });
    const text = await upstream.text();
    calls.push({ method, body, status: upstream.status, response: parseBody(text), injected: fault !== undefined, at });
    if (fault) return; // "apply-then-hang": the emulator applied it; the answer never leaves
    res.writeHead(upstream.status, { "content-type": upstream.headers.get("content-type") ?? "application/json" });
    res.end(text);
  }

  /** Calls the proxy answers itself (see the header); undefined forwards to the emulator. */
  function answerLikeTelegram(method: string, body: Record<string, any>): { status: number; body: object } | undefined {
    switch (method) {
      case "getUpdates": {
        const offset = Number(body.offset ?? 0);
        const limit = Number(body.limit ?? 100) || 100;
        const pending = server.storage.userMessages.filter((u) => u.botToken === token);
        for (const u of pending) if (offset > 0 && u.updateId < offset) u.isRead = true;
        const format = (ServerClass as unknown as { formatUpdate(u: unknown): object }).formatUpdate;
        return { status: 200, body: { ok: true, result: pending.filter((u) => !u.isRead).slice(0, limit).map((u) => format(u)) } };
      }
      case "editMessageText": {
        const message = messages.find((m) => m.chatId === String(body.chat_id) && m.messageId === Number(body.message_id));
        if (!message) return telegramErrors.messageNotFound();
        if (message.text === String(body.text ?? "") && message.parseMode === body.parse_mode) return telegramErrors.notModified();
        return undefined;
      }
      case "sendPhoto":
      case "sendDocument":
      case "sendVoice": {
        const field = method === "sendPhoto" ? "photo" : method === "sendVoice" ? "voice" : "document";
        // grammY sends the file under a random field and `photo: "attach://<field>"`.
        const ref = String(body[field] ?? "");
        const key = ref.startsWith("attach://") ? ref.slice("attach://".length) : field;
        const file = (body.__files as UploadedFile[] | undefined)?.find((f) => f.field === key);
        if (!file) return { status: 400, body: { ok: false, error_code: 400, description: `Bad Request: there is no ${field} in the request` } };
        const messageId = 900_000 + sentFiles.length + 1;
        sentFiles.push({ method, chatId: String(body.chat_id), caption: body.caption, threadId: body.message_thread_id === undefined ? undefined : Number(body.message_thread_id), name: file.name, bytes: file.bytes });
        const chat = { id: Number(body.chat_id), type: Number(body.chat_id) < 0 ? "supergroup" : "private" };
        const media =
          method === "sendPhoto"
            ? { photo: [{ file_id: `sent-${messageId}`, file_unique_id: `u-${messageId}`, width: 1, height: 1 }] }
            : method === "sendVoice"
              ? { voice: { file_id: `sent-${messageId}`, file_unique_id: `u-${messageId}`, duration: 1 } }
              : { document: { file_id: `sent-${messageId}`, file_unique_id: `u-${messageId}`, file_name: file.name } };
        return { status: 200, body: { ok: true, result: { message_id: messageId, date: Math.floor(Date.now() / 1000), chat, ...(body.caption ? { caption: body.caption } : {}), ...media } } };
      }
      case "getMe":
        if (opts.botId === undefined) return undefined;
        return { status: 200, body: { ok: true, result: { id: opts.botId, is_bot: true, first_name: EMULATED_BOT.firstName, username: EMULATED_BOT.username, can_join_groups: true, can_read_all_group_messages: false, supports_inline_queries: false } } };
      // Not in the emulator: answered as Telegram does, and recorded in `calls` for the tests.
      case "setMessageReaction":
      case "setMyCommands":
        return { status: 200, body: { ok: true, result: true } };
      case "sendChatAction":
        if (!opts.chatActions) return undefined;
        return { status: 200, body: { ok: true, result: true } };
      case "getFile": {
        const file = files.get(String(body.file_id ?? ""));
        if (!file) return { status: 400, body: { ok: false, error_code: 400, description: "Bad Request: invalid file_id" } };
        return { status: 200, body: { ok: true, result: { file_id: body.file_id, file_unique_id: `u${body.file_id}`, file_size: file.statedSize, file_path: file.path } } };
      }
      case "deleteMessage": {
        const index = messages.findIndex((m) => m.chatId === String(body.chat_id) && m.messageId === Number(body.message_id));
        if (index < 0) return telegramErrors.messageNotFound();
        const [gone] = messages.splice(index, 1);
        deleted.push(gone!);
        return undefined;
      }
      default:
        return undefined;
    }
  }

  await new Promise<void>((resolve) => proxy.listen(0, "127.0.0.1", resolve));
  const proxyPort = (proxy.address() as AddressInfo).port;
  let stopped: Promise<void> | undefined;

  const botMessages = (chatId?: number | string) => (chatId === undefined ? [...messages] : messages.filter((m) => m.chatId === String(chatId)));

  return {
    apiRoot: `http://127.0.0.1:${proxyPort}`,
    directApiRoot: emulatorUrl,
    token,
    server,
    calls,
    inject: (fault) => void faults.push({ ...fault, left: fault.times ?? 1 }),
    user: (o) => emulatedUser(server, token, o, messages),
    botMessages,
    deletedBotMessages: () => [...deleted],
    onBotActivity: (listener) => {
      listeners.add(listener);
      return () => listeners.delete(listener);
    },
    waitForBotMessages: async (chatId, count, timeoutMs) => {
      // A streamed reply's message is created as the placeholder "…" and edited at once: wait for its text.
      const ready = () => botMessages(chatId).length >= count && botMessages(chatId).every((m) => m.text !== PREVIEW_PLACEHOLDER);
      await waitFor(`${count} bot message(s) in chat ${chatId} (have ${botMessages(chatId).length})`, ready, timeoutMs);
      return botMessages(chatId);
    },
    callsTo: (method) => calls.filter((c) => c.method === method),
    addFile: (bytes, o = {}) => {
      const n = files.size + 1;
      const id = `file-${n}`;
      files.set(id, { bytes, path: o.filePath ?? `documents/file_${n}.bin`, statedSize: o.statedSize ?? bytes.length, ...(o.gate ? { gate: o.gate } : {}) });
      return { file_id: id, file_unique_id: `u${id}`, file_size: o.statedSize ?? bytes.length };
    },
    fileDownloads,
    sentFiles,
    chatActions: (chatId) =>
      calls
        .filter((c) => c.method === "sendChatAction" && c.status === 200 && (chatId === undefined || String(c.body.chat_id) === String(chatId)))
        .map((c) => ({ chatId: String(c.body.chat_id), action: String(c.body.action), at: c.at })),
    stop: () =>
      (stopped ??= (async () => {
        await new Promise<void>((resolve) => {
          proxy.close(() => resolve());
          proxy.closeAllConnections();
        });
        await server.stop();
      })()),
  };
}

/** Wraps the emulator's own handlers, so every send and edit the bot makes is seen, in order. */
function recordBotMessages(server: TelegramServer, messages: BotMessage[], notify: (a: BotActivity) => void): void {
  const addBotMessage = server.addBotMessage.bind(server);
  server.addBotMessage = (raw, botToken) => {
    const sent = addBotMessage(raw, botToken);
    const body = raw as Record<string, any>;
    const at = performance.now();
    const message: BotMessage = {
      chatId: String(body.chat_id),
      messageId: sent.message_id,
      text: String(body.text ?? ""),
      parseMode: body.parse_mode,
      threadId: body.message_thread_id === undefined ? undefined : Number(body.message_thread_id),
      replyToMessageId: body.reply_parameters?.message_id === undefined ? undefined : Number(body.reply_parameters.message_id),
      edits: 0,
      keyboard: keyboardOf(body.reply_markup),
      history: [String(body.text ?? "")],
      sentAt: at,
      updatedAt: at,
    };
    messages.push(message);
    notify({ kind: "sent", message, at });
    return sent;
  };
  const editMessageText = server.editMessageText.bind(server);
  server.editMessageText = (raw) => {
    editMessageText(raw);
    const body = raw as Record<string, any>;
    const message = messages.find((m) => m.chatId === String(body.chat_id) && m.messageId === Number(body.message_id));
    if (!message) return;
    const at = performance.now();
    message.text = String(body.text ?? "");
    message.parseMode = body.parse_mode;
    message.edits++;
    if (body.reply_markup !== undefined) message.keyboard = keyboardOf(body.reply_markup);
    message.history.push(message.text);
    message.updatedAt = at;
    notify({ kind: "edited", message, at });
  };
}

function emulatedUser(server: TelegramServer, token: string, o: EmulatedUserOptions, botMessages: BotMessage[]): EmulatedUser {
  const from = { id: o.userId, is_bot: false, first_name: o.firstName ?? `User${o.userId}`, ...(o.lastName ? { last_name: o.lastName } : {}), ...(o.username ? { username: o.username } : {}) };
  const chat = o.chat
    ? { id: o.chat.id, type: o.chat.type, title: o.chat.title, ...(o.chat.isForum ? { is_forum: true } : {}) }
    : { id: o.userId, type: "private", first_name: from.first_name, ...(o.username ? { username: o.username } : {}) };

  const post = async (fields: Record<string, unknown>): Promise<number> => {
    const message = { botToken: token, date: Math.floor(Date.now() / 1000), from, chat, ...fields };
    await server.addUserMessage(message as never);
    // The emulator stores the update synchronously and numbers it from one shared counter.
    return server.storage.userMessages.at(-1)!.messageId;
  };

  return {
    userId: o.userId,
    chatId: chat.id,
    send: (text, extra = {}) => {
      const entities = entitiesOf(text);
      return post({ text, ...(entities.length ? { entities } : {}), ...extra });
    },
    replyToBot: (botMessageId, text) => {
      const original = botMessages.find((m) => m.messageId === botMessageId);
      const entities = entitiesOf(text);
      return post({
        text,
        ...(entities.length ? { entities } : {}),
        reply_to_message: {
          message_id: botMessageId,
          date: Math.floor(Date.now() / 1000),
          chat,
          from: { id: EMULATED_BOT.id, is_bot: true, first_name: EMULATED_BOT.firstName, username: EMULATED_BOT.username },
          text: original?.text ?? "",
        },
      });
    },
    sendMedia: (fields) => post(fields),
    press: async (botMessageId, label) => {
      const original = botMessages.find((m) => m.messageId === botMessageId);
      const button = original?.keyboard?.flat().find((b) => b.text === label);
      if (!original || !button) throw new Error(`no button "${label}" under bot message ${botMessageId}`);
      const message = { message_id: botMessageId, date: Math.floor(Date.now() / 1000), chat: { id: Number(original.chatId), type: Number(original.chatId) < 0 ? "supergroup" : "private" }, from: { id: EMULATED_BOT.id, is_bot: true, first_name: EMULATED_BOT.firstName, username: EMULATED_BOT.username }, text: original.text };
      await server.addUserCallback({ botToken: token, from, message, data: button.callback_data, date: Math.floor(Date.now() / 1000) } as never);
    },
  };
}

function keyboardOf(markup: unknown): BotMessage["keyboard"] {
  const parsed = typeof markup === "string" ? (JSON.parse(markup) as unknown) : markup;
  const rows = (parsed as { inline_keyboard?: unknown } | undefined)?.inline_keyboard;
  return Array.isArray(rows) ? (rows as NonNullable<BotMessage["keyboard"]>) : undefined;
}

/** The entities Telegram's server would attach: @mentions anywhere, a /command at the start. */
export function entitiesOf(text: string): MessageEntity[] {
  const entities: MessageEntity[] = [];
  const command = /^\/[A-Za-z0-9_]+(?:@[A-Za-z0-9_]+)?/.exec(text);
  if (command) entities.push({ type: "bot_command", offset: 0, length: command[0].length });
  for (const m of text.matchAll(/(?<![\w@])@[A-Za-z0-9_]{5,32}/g)) {
    if (command && m.index < command[0].length) continue;
    entities.push({ type: "mention", offset: m.index, length: m[0].length });
  }
  return entities;
}

function parseBody(raw: string): Record<string, any> {
  if (!raw) return {};
  try {
    const parsed = JSON.parse(raw) as unknown;
    return typeof parsed === "object" && parsed !== null ? (parsed as Record<string, any>) : {};
  } catch {
    return Object.fromEntries(new URLSearchParams(raw));
  }
}

/** Bot API error bodies, as Telegram sends them. */
export const telegramErrors = {
  tooManyRequests: (retryAfter: number) => ({ status: 429, body: { ok: false, error_code: 429, description: `Too Many Requests: retry after ${retryAfter}`, parameters: { retry_after: retryAfter } } }),
  unauthorized: () => ({ status: 401, body: { ok: false, error_code: 401, description: "Unauthorized" } }),
  conflict: () => ({
    status: 409,
    body: { ok: false, error_code: 409, description: "Conflict: terminated by other getUpdates request; make sure that only one bot instance is running" },
  }),
  cantParseEntities: () => ({ status: 400, body: { ok: false, error_code: 400, description: "Bad Request: can't parse entities: Unsupported start tag \"x\" at byte offset 0" } }),
  notModified: () => ({
    status: 400,
    body: { ok: false, error_code: 400, description: "Bad Request: message is not modified: specified new message content and reply markup are exactly the same as a current content and reply markup of the message" },
  }),
  messageNotFound: () => ({ status: 400, body: { ok: false, error_code: 400, description: "Bad Request: message to edit not found" } }),
  badGateway: () => ({ status: 502, body: { ok: false, error_code: 502, description: "Bad Gateway" } }),
} satisfies Record<string, (...args: any[]) => Fault["reply"]>;

