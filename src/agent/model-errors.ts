// What went wrong talking to the model, as a value: its kind decides retry and fallback, its
// message is safe to show the user (no secrets, says what to do).
import type * as AnthropicSdk from "@anthropic-ai/sdk";
import { redact } from "../log.ts";

/** The SDK's error classes (the SDK module itself, loaded when the first request is made). */
export type SdkErrors = Pick<typeof AnthropicSdk, "APIError" | "APIConnectionError" | "APIUserAbortError">;

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
  | "unknown";

export interface ModelError {
  kind: ModelErrorKind;
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

export function classifyModelError(err: unknown, model: string, sdk: SdkErrors): ModelError {
  const { APIConnectionError, APIError, APIUserAbortError } = sdk;
  if (err instanceof APIUserAbortError) return { kind: "aborted", model, message: "The request was stopped." };
  if (err instanceof APIConnectionError) {
    return { kind: "connection", model, message: `Could not reach the model API (${err.message}).` };
  }
  if (err instanceof APIError) {
    const status = err.status;
    // The API's own words reach logs and the user's chat: never with a secret in them.
    const apiMessage = redact(err.apiMessage ?? err.message);
    const retryAfterMs = parseRetryAfter(err.headers);
    const base = { model, ...(status !== undefined ? { status } : {}), ...(retryAfterMs !== undefined ? { retryAfterMs } : {}) };
    if (status === undefined) return { ...base, ...midStreamKind(err.type), message: `The model stream failed: ${apiMessage}` };
    if (status === 401 || status === 403) {
      return {
        ...base,
        kind: "auth",
        message: `The model API refused the credentials (HTTP ${status}). Check ANTHROPIC_API_KEY or model.apiKey in config.json.`,
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
  const text = redact(err instanceof Error ? err.message : String(err));
  return { kind: "connection", model, message: `The connection to the model API broke (${text}).` };
}

function midStreamKind(type: string | null): Pick<ModelError, "kind"> {
  switch (type) {
    case "overloaded_error":
      return { kind: "overloaded" };
    case "rate_limit_error":
      return { kind: "rate_limited" };
    case "api_error":
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
