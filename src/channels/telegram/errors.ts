// What a failed Bot API call means for Hearth. grammY throws GrammyError when Telegram answered
// with an error (it has `error_code` and `description`) and HttpError when the request itself
// failed (network, timeout). Descriptions are Telegram's own and never contain the token; the
// network error inside an HttpError does (it quotes the URL), so it is never shown whole.
import { GrammyError, HttpError } from "grammy";

/** Telegram refused the bot token: nothing will work until the owner fixes it. */
export class TelegramAuthError extends Error {
  override name = "TelegramAuthError";

  constructor() {
    super("Telegram rejected the bot token (401 Unauthorized). Check TELEGRAM_BOT_TOKEN or channels.telegram.token.");
  }
}

/** Telegram's error code, or undefined for a network failure (or a server that sent none). */
export function errorCode(err: unknown): number | undefined {
  return err instanceof GrammyError ? err.error_code : undefined;
}

/** Seconds Telegram asked us to wait (429), if it said. */
export function retryAfterSeconds(err: unknown): number | undefined {
  return err instanceof GrammyError ? err.parameters.retry_after : undefined;
}

/** An edit whose text equals the message's current text: nothing to do. */
export function isNotModified(err: unknown): boolean {
  return err instanceof GrammyError && err.error_code === 400 && /message is not modified/i.test(err.description);
}

/** Telegram could not parse the HTML: the same text goes again as plain text. */
export function isEntityError(err: unknown): boolean {
  return err instanceof GrammyError && err.error_code === 400 && /can't parse entities|can't find end|unsupported start tag|unclosed/i.test(err.description);
}

/**
 * The server does not implement the method at all (an emulator answers without an error code; a
 * self-hosted Bot API server says 404 or 501). Transient failures (429, 5xx) do not count.
 */
export function isUnsupportedMethod(err: unknown): boolean {
  if (!(err instanceof GrammyError)) return false;
  return err.error_code === undefined || err.error_code === 404 || err.error_code === 501;
}

/** A short description that is safe to log: never the request URL (it holds the token). */
export function describeError(err: unknown, token?: string): string {
  let text: string;
  if (err instanceof GrammyError) {
    text = err.error_code === undefined ? `${err.method}: the server answered without an error code` : `${err.error_code}: ${err.description}`;
  } else if (err instanceof HttpError) {
    const cause = err.error as { code?: unknown; name?: unknown } | undefined;
    const code = typeof cause?.code === "string" ? cause.code : typeof cause?.name === "string" ? cause.name : undefined;
    text = code ? `${err.message} (${code})` : err.message;
  } else {
    text = err instanceof Error ? err.message : String(err);
  }
  return token ? text.split(token).join("[token]") : text;
}
