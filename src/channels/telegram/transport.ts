// The Telegram side of a streamed reply (a ReplyTransport for StreamingReply): previews go out
// as plain text, final text as Telegram HTML with a plain-text fallback, and the first message
// of a group reply quotes the message that asked.
//
// Previews and final text travel on two API clients. The final one retries 429s (auto-retry
// honours retry_after): the reply must arrive. The preview one fails fast: a preview stuck for
// 30 s in a rate-limit wait would hold back the final text (StreamingReply waits for the request
// in flight), and a skipped preview costs nothing because the next one shows the latest text.
import type { Api, Transformer } from "grammy";
import type { Logger } from "../../process/log.ts";
import type { ChatActivity } from "../channel.ts";
import type { ReplyTransport } from "../streaming-reply.ts";
import { describeError, errorCode, isEntityError, isNotModified, isUnsupportedMethod, retryAfterSeconds } from "./errors.ts";
import { markdownToTelegramHtml, stripMarkdown } from "./html.ts";

/** The Bot API calls a reply makes. */
export type TelegramReplyApi = Pick<Api, "sendMessage" | "editMessageText" | "sendChatAction" | "deleteMessage">;

export interface ReplyTarget {
  chatId: number | string;
  /** A forum topic: every message of the reply goes into it. */
  threadId?: number;
  /** Quoted by the first message of the reply (group replies). */
  replyToMessageId?: number;
}

/** What replies share across a channel: rate-limit windows per chat, and whether typing works. */
export class TelegramReplyState {
  readonly #limitedUntil = new Map<string, number>();
  #typingSupported = true;
  readonly #clock: () => number;

  constructor(clock: () => number = Date.now) {
    this.#clock = clock;
  }

  get typingSupported(): boolean {
    return this.#typingSupported;
  }

  typingUnsupported(): void {
    this.#typingSupported = false;
  }

  rateLimited(chatId: number | string, seconds: number): void {
    this.#limitedUntil.set(String(chatId), this.#clock() + seconds * 1000);
  }

  /** True while Telegram's last 429 for this chat still applies. */
  isLimited(chatId: number | string): boolean {
    const until = this.#limitedUntil.get(String(chatId));
    if (until === undefined) return false;
    if (until > this.#clock()) return true;
    this.#limitedUntil.delete(String(chatId));
    return false;
  }
}

export interface TelegramTransportDeps {
  /** Retries 429s: for final text. */
  api: TelegramReplyApi;
  /** Fails fast: for previews and the typing indicator. */
  previewApi: TelegramReplyApi;
  state: TelegramReplyState;
  log: Logger;
}

export class PreviewSkippedError extends Error {
  override name = "PreviewSkippedError";
}

export function createTelegramTransport(target: ReplyTarget, deps: TelegramTransportDeps): ReplyTransport {
  const { api, previewApi, state, log } = deps;
  const thread = target.threadId !== undefined ? { message_thread_id: target.threadId } : {};
  let quoted = target.replyToMessageId === undefined;

  /** Final text as HTML; when Telegram rejects the entities, the same text as plain text. */
  async function deliver<T>(text: string, final: boolean, call: (client: TelegramReplyApi, body: string, html: boolean) => Promise<T>): Promise<T> {
    if (!final) {
      if (state.isLimited(target.chatId)) throw new PreviewSkippedError("preview skipped: the chat is rate-limited");
      try {
        return await call(previewApi, text, false);
      } catch (err) {
        const wait = retryAfterSeconds(err);
        if (errorCode(err) === 429 && wait !== undefined) state.rateLimited(target.chatId, wait);
        throw err;
      }
    }
    const html = markdownToTelegramHtml(text);
    if (!html.trim()) return call(api, text, false);
    try {
      return await call(api, html, true);
    } catch (err) {
      if (!isEntityError(err)) throw err;
      log.warn("telegram.html_rejected", { error: describeError(err) });
      return call(api, stripMarkdown(text).trim() || text, false);
    }
  }

  const transport: ReplyTransport = {
    async send(text, { final }) {
      const message = await deliver(text, final, (client, body, html) =>
        client.sendMessage(target.chatId, body, {
          ...thread,
          ...(html ? { parse_mode: "HTML" as const } : {}),
          ...(final ? {} : { link_preview_options: { is_disabled: true } }),
          ...(!quoted && target.replyToMessageId !== undefined
            ? { reply_parameters: { message_id: target.replyToMessageId, allow_sending_without_reply: true } }
            : {}),
        }),
      );
      quoted = true;
      return String(message.message_id);
    },

    async edit(id, text, { final }) {
      try {
        await deliver(text, final, (client, body, html) =>
          client.editMessageText(target.chatId, Number(id), body, {
            ...(html ? { parse_mode: "HTML" as const } : {}),
            ...(final ? {} : { link_preview_options: { is_disabled: true } }),
          }),
        );
      } catch (err) {
        if (!isNotModified(err)) throw err;
      }
    },

    async delete(id) {
      await api.deleteMessage(target.chatId, Number(id));
    },
  };
  if (state.typingSupported) transport.typing = () => showChatAction(target, deps, "typing");
  return transport;
}

/**
 * One chat action (it shows for about 5 s), on the fail-fast client. Rejects when it was not
 * shown; a server without sendChatAction (a Bot API emulator) is not asked again.
 */
export async function showChatAction(target: ReplyTarget, deps: TelegramTransportDeps, action: ChatActivity): Promise<void> {
  const { previewApi, state, log } = deps;
  if (!state.typingSupported) throw new Error("this Bot API server has no sendChatAction");
  try {
    await previewApi.sendChatAction(target.chatId, action, target.threadId !== undefined ? { message_thread_id: target.threadId } : {});
  } catch (err) {
    if (isUnsupportedMethod(err) && state.typingSupported) {
      state.typingUnsupported();
      log.info("telegram.typing_unsupported", { error: describeError(err) });
    }
    throw err;
  }
}

/** Per-attempt timeout for every call but getUpdates (which long-polls under the client timeout). */
export function requestTimeout(ms: number): Transformer {
  return (prev, method, payload, signal) => {
    if (method === "getUpdates") return prev(method, payload, signal);
    // grammY types signals as the abort-controller polyfill; at runtime it takes any signal.
    const timeout = AbortSignal.timeout(ms) as unknown as NonNullable<typeof signal>;
    if (!signal) return prev(method, payload, timeout);
    const either = new AbortController();
    for (const s of [signal, timeout]) {
      if (s.aborted) either.abort();
      else s.addEventListener("abort", () => either.abort(), { once: true });
    }
    return prev(method, payload, either.signal as unknown as typeof signal);
  };
}
