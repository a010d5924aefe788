// What went wrong talking to the model, as a value: its kind decides retry and fallback. Its
// message is for the owner and the log (no secrets; it may name config keys, environment
// variables and the API's address); `modelErrorNotice` decides what a chat is shown.
import { redact } from "../process/log.ts";
import type { Scope } from "./messages.ts";

/** An SDK's API error as both official SDKs (Anthropic, OpenAI) shape it. */
interface SdkApiError extends Error {
  status: number | undefined;
  headers: Headers | undefined;
  type?: string | null | undefined;
  /** Anthropic: the API's own message. */
  apiMessage?: string | null;
  /** OpenAI: the error body, whose `message` is the API's own words. */
  error?: unknown;
}

type ErrorClass<T = Error> = abstract new (...args: never[]) => T;

/** The SDK's error classes (the SDK module itself, loaded when the first request is made). */
export interface SdkErrors {
  APIError: ErrorClass<SdkApiError>;
  APIConnectionError: ErrorClass;
  APIUserAbortError: ErrorClass;
}

/** Where the key for an endpoint is set, for the 401/403 message. */
/** Keys live in the home's .env (setup writes them there; an upgrade moves one out of config.json). */
export const ANTHROPIC_KEY_HINT = "ANTHROPIC_API_KEY (in Hearth's .env, or the environment)";

export type ModelErrorKind =
  | "auth" // 401/403: not retried, not worth a fallback
  | "billing" // 402
  | "rate_limited" // 429
  | "overloaded" // 529 or a mid-stream overloaded_error
  | "server" // 5xx, 408, 409, a mid-stream api_error
  | "connection" // reset, refused, DNS, socket dropped mid-stream
  | "stalled" // no stream event within the idle timeout
  | "context_overflow" // the prompt does not fit the model's window
  | "not_found" // unknown model name
  | "bad_request" // any other 4xx
  | "aborted" // the caller aborted
  | "budget" // refused before it was sent: it did not fit the budget (paid-call.ts); the message is for the chat
  | "unknown";

export interface ModelError {
  kind: ModelErrorKind;
  /** What happened and what to fix, for the owner and the log: never shown in a shared chat. */
  message: string;
  model: string;
  status?: number;
  /** From `retry-after-ms` / `retry-after`, when the server sent one. */
  retryAfterMs?: number;
}

const RETRYABLE: ReadonlySet<ModelErrorKind> = new Set(["rate_limited", "overloaded", "server", "connection", "stalled"]);

export const isRetryable = (e: ModelError): boolean => RETRYABLE.has(e.kind);

/** Kinds after which another model may succeed where this one failed. */
export const allowsFallback = (e: ModelError): boolean => isRetryable(e) || e.kind === "not_found";

const overflowText = /prompt is too long|context window|context_length|too many tokens/i;

/** `baseURL`: the API address the request went to, named in connection errors. */
/** `keyHint`: where the key is set ("OPENROUTER_API_KEY (in Hearth's .env, or the environment)"). */
export function classifyModelError(err: unknown, model: string, sdk: SdkErrors, baseURL: string, keyHint = ANTHROPIC_KEY_HINT): ModelError {
  const { APIConnectionError, APIError, APIUserAbortError } = sdk;
  if (err instanceof APIUserAbortError) return { kind: "aborted", model, message: "The request was stopped." };
  if (err instanceof APIConnectionError) {
    return { kind: "connection", model, message: `Could not reach the model API at ${displayUrl(baseURL)} (${scrub(causeOf(err))}).` };
  }
  if (err instanceof APIError) {
    const status = err.status;
    // The API's own words reach logs and the user's chat: never with a secret in them.
    const apiMessage = redact(err.apiMessage ?? bodyMessage(err.error) ?? err.message);
    const retryAfterMs = parseRetryAfter(err.headers);
    const base = { model, ...(status !== undefined ? { status } : {}), ...(retryAfterMs !== undefined ? { retryAfterMs } : {}) };
    if (status === undefined) return { ...base, ...midStreamKind(err.type ?? null), message: `The model stream failed: ${apiMessage}` };
    if (status === 401 || status === 403) {
      return {
        ...base,
        kind: "auth",
        message: `The model API rejected the API key (HTTP ${status}). Set a valid key in ${keyHint}, then restart Hearth.`,
      };
    }
    if (status === 402) return { ...base, kind: "billing", message: `The model API refused the request for billing reasons (HTTP 402): ${apiMessage}` };
    if (status === 429) return { ...base, kind: "rate_limited", message: "The model API is rate-limiting requests (HTTP 429)." };
    if (status === 529) return { ...base, kind: "overloaded", message: "The model API is overloaded (HTTP 529)." };
    if (status >= 500 || status === 408 || status === 409) {
      return { ...base, kind: "server", message: `The model API had an error (HTTP ${status}).` };
    }
    if (status === 413 || overflowText.test(apiMessage)) {
      return { ...base, kind: "context_overflow", message: "The conversation no longer fits the model's context window." };
    }
    if (status === 404) {
      return { ...base, kind: "not_found", message: `The model API does not know model "${model}" (HTTP 404). Check model.name in config.json.` };
    }
    return { ...base, kind: "bad_request", message: `The model API rejected the request (HTTP ${status}): ${apiMessage}` };
  }
  if (err instanceof Error && err.name === "AbortError") return { kind: "aborted", model, message: "The request was stopped." };
  // Anything else thrown while reading the body is the socket going away (undici's "terminated").
  const text = scrub(err instanceof Error ? err.message : String(err));
  return { kind: "connection", model, message: `The connection to the model API at ${displayUrl(baseURL)} broke (${text}).` };
}

/** `{"message": "..."}` or `{"error": {"message": "..."}}`, as OpenAI-compatible servers send it. */
function bodyMessage(body: unknown): string | undefined {
  if (typeof body !== "object" || body === null) return undefined;
  const b = body as { message?: unknown; error?: { message?: unknown } };
  if (typeof b.message === "string") return b.message;
  return typeof b.error?.message === "string" ? b.error.message : undefined;
}

/** The API address without credentials or query: safe for the log and the owner. */
export function displayUrl(url: string): string {
  try {
    const u = new URL(url);
    return `${u.protocol}//${u.host}${u.pathname === "/" ? "" : u.pathname.replace(/\/$/, "")}`;
  } catch {
    return "(an invalid address)";
  }
}

/** Known secrets and the credentials part of any URL (`//user:password@`) removed. */
const scrub = (text: string): string => redact(text).replace(/\/\/[^/\s@]+@/g, "//");

/** The innermost reason a connection failed ("ECONNREFUSED", "getaddrinfo ENOTFOUND …"). */
function causeOf(err: Error): string {
  let reason = err.message;
  let e: unknown = err.cause;
  for (let depth = 0; e instanceof Error && depth < 5; depth++, e = e.cause) {
    const code = (e as NodeJS.ErrnoException).code;
    reason = code && !e.message.includes(code) ? `${code}: ${e.message}` : e.message;
  }
  return reason;
}

/**
 * What a chat is told when the model call failed. The owner (scope "main") gets the detail and
 * what to fix; a shared chat (a group, a paired person) only learns that the model could not
 * answer: never a configuration key, an environment variable, a file name or an address.
 */
export function modelErrorNotice(e: ModelError, scope: Scope): string {
  const later = "Please try again in a moment.";
  if (scope === "main" && e.kind !== "budget") return isRetryable(e) ? `${e.message} ${later}` : e.message;
  switch (e.kind) {
    case "stalled":
      return `Sorry, the AI model stopped responding. ${later}`;
    case "connection":
      return `Sorry, I could not reach the AI model. ${later}`;
    case "rate_limited":
    case "overloaded":
    case "server":
      return `Sorry, the AI model is busy or having trouble right now. ${later}`;
    case "context_overflow":
      return "This conversation no longer fits the AI model's memory. Start a fresh one with /new.";
    case "aborted":
      return "Stopped.";
    case "budget":
      // Written for the chat that pays (a shared chat's names no amount): "today's budget for this chat is spent".
      return `Not sent: ${e.message}.`;
    case "auth":
    case "billing":
    case "not_found":
    case "bad_request":
    case "unknown":
      return "Sorry, I can't answer right now because of a problem on my side. My owner can see what went wrong in Hearth's log.";
    default:
      return e.kind satisfies never;
  }
}

function midStreamKind(type: string | null): Pick<ModelError, "kind"> {
  switch (type) {
    case "overloaded_error":
      return { kind: "overloaded" };
    case "rate_limit_error":
      return { kind: "rate_limited" };
    case "api_error":
    case "server_error": // OpenAI-compatible servers
    case "timeout_error":
      return { kind: "server" };
    case "invalid_request_error":
      return { kind: "bad_request" };
    default:
      return { kind: "unknown" };
  }
}

export function parseRetryAfter(headers: Headers | undefined, now = Date.now()): number | undefined {
  if (!headers) return undefined;
  const ms = Number(headers.get("retry-after-ms"));
  if (headers.get("retry-after-ms") && Number.isFinite(ms) && ms >= 0) return ms;
  const raw = headers.get("retry-after");
  if (!raw) return undefined;
  const seconds = Number(raw);
  if (Number.isFinite(seconds) && seconds >= 0) return seconds * 1000;
  const date = Date.parse(raw);
  return Number.isNaN(date) ? undefined : Math.max(0, date - now);
}
