// Streams one model response over the Anthropic SDK. Hearth owns the retry policy (the SDK's
// own retries are off): it must also retry failures that happen mid-stream, after text has
// already reached the user, without showing that text twice.
import type Anthropic from "@anthropic-ai/sdk";
import type { Logger } from "../log.ts";
import type { AssistantBlock, AssistantMessage, AssistantStop, Usage } from "./messages.ts";
import { allowsFallback, classifyModelError, displayUrl, isRetryable, type ModelError, type SdkErrors } from "./model-errors.ts";
import { toApiParams, type ModelRequest } from "./model-request.ts";

export type ModelEvent =
  | { type: "text_delta"; text: string }
  /** The text streamed so far for this call is void; `text` replaces all of it. */
  | { type: "text_reset"; text: string }
  | { type: "retry"; attempt: number; delayMs: number; error: ModelError }
  | { type: "fallback"; from: string; to: string; error: ModelError }
  /** A provider-side tool (web search / fetch) was called, and later answered. */
  | { type: "server_tool_start"; id: string; name: string; input: unknown }
  | { type: "server_tool_end"; id: string; name: string; ok: boolean };

export type ModelResult =
  | { type: "ok"; message: AssistantMessage }
  /** `partial` holds what the caller was already shown (text), for an interrupted record. */
  | { type: "error"; error: ModelError; partial: AssistantBlock[] };

export interface ModelCallOptions {
  signal: AbortSignal;
  /** Called synchronously for every event; must not throw. */
  onEvent: (e: ModelEvent) => void;
}

export interface ModelClient {
  /** The primary model's name (for status and cost display). */
  readonly model: string;
  /** Streams one response. Never throws: failures and aborts are returned as error values. */
  stream(req: ModelRequest, opts: ModelCallOptions): Promise<ModelResult>;
}

export interface RetryPolicy {
  /** Attempts per model, the first included. */
  maxAttempts: number;
  baseDelayMs: number;
  maxDelayMs: number;
  /** A `retry-after` longer than this is not waited for: the next model is tried instead. */
  maxRetryAfterMs: number;
  /** A stream with no event for this long has stalled. */
  idleTimeoutMs: number;
  /**
   * Stalled attempts per `stream` call, over all models: reaching it ends the call (no further
   * retry, no fallback), so a silent model costs the user about this many idle timeouts.
   */
  maxStalls: number;
}

export const defaultRetryPolicy: RetryPolicy = {
  maxAttempts: 5,
  baseDelayMs: 2_000,
  maxDelayMs: 30_000,
  maxRetryAfterMs: 60_000,
  idleTimeoutMs: 60_000,
  maxStalls: 2,
};

export interface AnthropicModelOptions {
  /** The primary model, then the fallbacks in order. */
  models: string[];
  apiKey?: string | undefined;
  baseURL?: string | undefined;
  retry?: Partial<RetryPolicy>;
  log: Logger;
  /** Waits `ms`; resolves early (without throwing) when `signal` aborts. Injected by tests. */
  sleep?: (ms: number, signal: AbortSignal) => Promise<void>;
  /** Returns a number in [0, 1) for jitter. */
  random?: () => number;
}

/** The delay before retry number `attempt` (1 = first retry): 2 s doubling to 30 s, ±20 % jitter. */
export function backoffDelay(policy: RetryPolicy, attempt: number, random: () => number): number {
  const exp = Math.min(policy.maxDelayMs, policy.baseDelayMs * 2 ** (attempt - 1));
  return Math.min(policy.maxDelayMs, Math.round(exp * (0.8 + 0.4 * random())));
}

export function createAnthropicModelClient(opts: AnthropicModelOptions): ModelClient {
  if (opts.models.length === 0) throw new Error("createAnthropicModelClient needs at least one model name.");
  const policy = { ...defaultRetryPolicy, ...opts.retry };
  const sleep = opts.sleep ?? abortableSleep;
  const random = opts.random ?? Math.random;
  // The SDK loads with the first request: a daemon that has not talked to the model yet starts
  // faster and smaller (the SDK is ~0.1 s and ~15 MB to load).
  let loaded: Promise<{ client: Anthropic; sdk: SdkErrors }> | null = null;
  const load = () =>
    (loaded ??= import("@anthropic-ai/sdk").then((sdk) => ({
      sdk,
      client: new sdk.default({
        // A local proxy given by base URL may need no key; the SDK insists on one.
        apiKey: opts.apiKey ?? "hearth-no-key",
        ...(opts.baseURL ? { baseURL: opts.baseURL } : {}),
        maxRetries: 0,
      }),
    })));

  return {
    model: opts.models[0]!,
    async stream(req, { signal, onEvent }) {
      const { client, sdk } = await load();
      const shown = new ShownText(onEvent);
      let last: ModelError | undefined;
      let stalls = 0;
      const models = req.model ? [req.model, ...opts.models.filter((m) => m !== req.model)] : opts.models;
      models: for (const [i, model] of models.entries()) {
        if (i > 0 && last) {
          opts.log.warn("model.fallback", { from: models[i - 1], to: model, kind: last.kind });
          onEvent({ type: "fallback", from: models[i - 1]!, to: model, error: last });
        }
        const params = toApiParams(req, model);
        for (let attempt = 1; attempt <= policy.maxAttempts; attempt++) {
          if (signal.aborted) return aborted(model, shown);
          const result = await streamAttempt(client, sdk, params, model, policy.idleTimeoutMs, signal, shown, onEvent);
          if (result.type === "ok") return result;
          last = result.error;
          if (last.kind === "aborted") return aborted(model, shown);
          if (last.kind === "stalled" && ++stalls >= policy.maxStalls) {
            last = { ...last, message: stalledMessage(policy.idleTimeoutMs, stalls) };
            break models;
          }
          if (!isRetryable(last)) break;
          if (attempt === policy.maxAttempts) break;
          if (last.retryAfterMs !== undefined && last.retryAfterMs > policy.maxRetryAfterMs) break;
          const delayMs = last.retryAfterMs ?? backoffDelay(policy, attempt, random);
          opts.log.warn("model.retry", { model, attempt, delayMs, kind: last.kind, status: last.status });
          onEvent({ type: "retry", attempt, delayMs, error: last });
          await sleep(delayMs, signal);
        }
        if (!allowsFallback(last!)) break;
      }
      opts.log.error("model.failed", { kind: last!.kind, status: last!.status, message: last!.message });
      return { type: "error", error: last!, partial: shown.asBlocks() };
    },
  };
}

const stalledMessage = (idleTimeoutMs: number, tries: number): string =>
  `The model stopped responding: nothing arrived for ${formatSeconds(idleTimeoutMs)}${tries > 1 ? `, on ${tries} tries` : ""}.`;

const formatSeconds = (ms: number): string => `${Math.round(ms / 100) / 10} s`;

const aborted = (model: string, shown: ShownText): ModelResult => ({
  type: "error",
  error: { kind: "aborted", model, message: "The request was stopped." },
  partial: shown.asBlocks(),
});

/**
 * Tracks the text the caller has been shown during one `stream` call, across attempts.
 * A retried attempt that repeats the shown text stays silent until it passes it; one that
 * says something else replaces the shown text with a single `text_reset`.
 */
class ShownText {
  #shown = "";
  #seen = "";
  #diverged = false;
  readonly #emit: (e: ModelEvent) => void;

  constructor(emit: (e: ModelEvent) => void) {
    this.#emit = emit;
  }

  startAttempt(): void {
    this.#seen = "";
    this.#diverged = false;
  }

  add(delta: string): void {
    this.#seen += delta;
    const seen = this.#seen;
    const shown = this.#shown;
    if (this.#diverged) {
      this.#shown = seen;
      this.#emit({ type: "text_delta", text: delta });
    } else if (seen.length <= shown.length) {
      if (!shown.startsWith(seen)) this.#replace();
    } else if (seen.startsWith(shown)) {
      this.#shown = seen;
      this.#emit({ type: "text_delta", text: seen.slice(shown.length) });
    } else {
      this.#replace();
    }
  }

  /** At the end of a successful attempt: its text may be a strict prefix of what was shown. */
  finishAttempt(): void {
    if (this.#seen !== this.#shown) this.#replace();
  }

  asBlocks(): AssistantBlock[] {
    return this.#shown ? [{ type: "text", text: this.#shown }] : [];
  }

  #replace(): void {
    this.#diverged = true;
    this.#shown = this.#seen;
    this.#emit({ type: "text_reset", text: this.#seen });
  }
}

type AttemptResult = { type: "ok"; message: AssistantMessage } | { type: "error"; error: ModelError };

type BlockDraft =
  | { type: "text"; text: string; citations?: unknown[] }
  | { type: "tool_call"; id: string; name: string; json: string }
  | { type: "thinking"; thinking: string; signature: string }
  | { type: "server"; raw: { type: string; [field: string]: unknown }; json: string };

async function streamAttempt(
  client: Anthropic,
  sdk: SdkErrors,
  params: Anthropic.MessageCreateParamsNonStreaming,
  model: string,
  idleTimeoutMs: number,
  signal: AbortSignal,
  shown: ShownText,
  onEvent: (e: ModelEvent) => void,
): Promise<AttemptResult> {
  const controller = new AbortController();
  const onAbort = () => controller.abort();
  signal.addEventListener("abort", onAbort, { once: true });
  let stalled = false;
  let idle: NodeJS.Timeout | undefined;
  const touch = () => {
    clearTimeout(idle);
    idle = setTimeout(() => {
      stalled = true;
      controller.abort();
    }, idleTimeoutMs);
  };

  shown.startAttempt();
  const serverNames = new Map<string, string>();
  const drafts: (BlockDraft | undefined)[] = [];
  const usage: Usage = { inputTokens: 0, outputTokens: 0, cacheReadTokens: 0, cacheCreationTokens: 0 };
  let answeredBy = model;
  let stopReason: string | null = null;
  let complete = false;
  try {
    touch();
    const stream = await client.messages.create({ ...params, stream: true }, { signal: controller.signal });
    for await (const ev of stream) {
      touch();
      switch (ev.type) {
        case "message_start":
          answeredBy = ev.message.model || model;
          readUsage(usage, ev.message.usage);
          break;
        case "content_block_start":
          drafts[ev.index] = startDraft(ev.content_block);
          break;
        case "content_block_delta":
          applyDelta(drafts[ev.index], ev.delta, shown);
          break;
        case "message_delta":
          stopReason = ev.delta.stop_reason ?? stopReason;
          readUsage(usage, ev.usage);
          break;
        case "message_stop":
          complete = true;
          break;
        case "content_block_stop":
          announceServerBlock(drafts[ev.index], onEvent, serverNames);
          break;
      }
    }
  } catch (err) {
    if (!stalled && !signal.aborted) return { type: "error", error: classifyModelError(err, model, sdk, client.baseURL) };
  } finally {
    clearTimeout(idle);
    signal.removeEventListener("abort", onAbort);
  }
  // The SDK ends the iteration quietly on abort, so the reason is decided here.
  if (signal.aborted) return { type: "error", error: { kind: "aborted", model, message: "The request was stopped." } };
  if (stalled) return { type: "error", error: { kind: "stalled", model, message: stalledMessage(idleTimeoutMs, 1) } };
  if (!complete) {
    return { type: "error", error: { kind: "connection", model, message: `The model stream from ${displayUrl(client.baseURL)} ended before the message was complete.` } };
  }
  shown.finishAttempt();
  return {
    type: "ok",
    message: {
      role: "assistant",
      content: drafts.filter((d): d is BlockDraft => d !== undefined).map(finishDraft),
      stop: toStop(stopReason),
      model: answeredBy,
      usage,
      ts: Date.now(),
    },
  };
}

interface ApiUsage {
  input_tokens?: number | null;
  output_tokens?: number | null;
  cache_read_input_tokens?: number | null;
  cache_creation_input_tokens?: number | null;
  cache_creation?: { ephemeral_5m_input_tokens?: number | null; ephemeral_1h_input_tokens?: number | null } | null;
  server_tool_use?: { web_search_requests?: number | null; web_fetch_requests?: number | null } | null;
}

function readUsage(usage: Usage, u: ApiUsage): void {
  // message_delta repeats the cumulative counts; a missing or null field keeps what we had.
  if (u.input_tokens != null) usage.inputTokens = u.input_tokens;
  if (u.output_tokens != null) usage.outputTokens = u.output_tokens;
  if (u.cache_read_input_tokens != null) usage.cacheReadTokens = u.cache_read_input_tokens;
  if (u.cache_creation_input_tokens != null) usage.cacheCreationTokens = u.cache_creation_input_tokens;
  // The TTL split is priced differently (1 h writes cost 2× input, 5 min writes 1.25×).
  if (u.cache_creation?.ephemeral_5m_input_tokens != null) usage.cacheCreation5mTokens = u.cache_creation.ephemeral_5m_input_tokens;
  if (u.cache_creation?.ephemeral_1h_input_tokens != null) usage.cacheCreation1hTokens = u.cache_creation.ephemeral_1h_input_tokens;
  if (u.server_tool_use?.web_search_requests) usage.webSearchRequests = u.server_tool_use.web_search_requests;
  if (u.server_tool_use?.web_fetch_requests) usage.webFetchRequests = u.server_tool_use.web_fetch_requests;
}

function startDraft(block: Anthropic.ContentBlock): BlockDraft | undefined {
  switch (block.type) {
    case "text":
      return { type: "text", text: "" };
    case "tool_use":
      return { type: "tool_call", id: block.id, name: block.name, json: "" };
    case "thinking":
      return { type: "thinking", thinking: "", signature: "" };
    case "server_tool_use":
      return { type: "server", raw: { ...block }, json: "" };
    default:
      // Server tool results arrive whole; redacted thinking is not used by Hearth.
      return block.type.endsWith("_tool_result") ? { type: "server", raw: { ...block }, json: "" } : undefined;
  }
}

/** Progress for server tools: a call once its input is complete, an end when its result block is. */
function announceServerBlock(d: BlockDraft | undefined, onEvent: (e: ModelEvent) => void, names: Map<string, string>): void {
  if (d?.type !== "server") return;
  const raw = finishDraft(d) as { raw: Record<string, unknown> };
  const id = String(raw.raw.id ?? raw.raw.tool_use_id ?? "");
  if (d.raw.type === "server_tool_use") {
    const name = String(raw.raw.name ?? "server_tool");
    names.set(id, name);
    onEvent({ type: "server_tool_start", id, name, input: raw.raw.input });
  } else {
    const content = raw.raw.content as { type?: string } | undefined;
    const ok = !(content && !Array.isArray(content) && typeof content.type === "string" && content.type.endsWith("_error"));
    onEvent({ type: "server_tool_end", id, name: names.get(id) ?? d.raw.type.replace(/_tool_result$/, ""), ok });
  }
}

function applyDelta(draft: BlockDraft | undefined, delta: Anthropic.RawContentBlockDelta, shown: ShownText): void {
  if (!draft) return;
  if (delta.type === "text_delta" && draft.type === "text") {
    draft.text += delta.text;
    shown.add(delta.text);
  } else if (delta.type === "citations_delta" && draft.type === "text") {
    (draft.citations ??= []).push(delta.citation);
  } else if (delta.type === "input_json_delta" && (draft.type === "tool_call" || draft.type === "server")) {
    draft.json += delta.partial_json;
  } else if (delta.type === "thinking_delta" && draft.type === "thinking") {
    draft.thinking += delta.thinking;
  } else if (delta.type === "signature_delta" && draft.type === "thinking") {
    draft.signature += delta.signature;
  }
}

function finishDraft(d: BlockDraft): AssistantBlock {
  if (d.type === "server") return { type: "server", raw: d.json.trim() ? { ...d.raw, input: parseJson(d.json) } : d.raw };
  if (d.type !== "tool_call") return d;
  let input: unknown = {};
  if (d.json.trim()) {
    try {
      input = JSON.parse(d.json);
    } catch {
      // Cut off by max_tokens: validation reports it to the model as invalid input.
      input = { _unparsed: d.json };
    }
  }
  return { type: "tool_call", id: d.id, name: d.name, input };
}

function parseJson(json: string): unknown {
  try {
    return JSON.parse(json);
  } catch {
    return { _unparsed: json };
  }
}

function toStop(reason: string | null): AssistantStop {
  switch (reason) {
    case "tool_use":
    case "max_tokens":
    case "refusal":
    case "pause_turn":
    case "stop_sequence":
      return reason;
    case "model_context_window_exceeded":
      return "context_window";
    default:
      return "end_turn";
  }
}

export function abortableSleep(ms: number, signal: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    if (signal.aborted) return resolve();
    const timer = setTimeout(done, ms);
    function done() {
      clearTimeout(timer);
      signal.removeEventListener("abort", done);
      resolve();
    }
    signal.addEventListener("abort", done, { once: true });
  });
}
