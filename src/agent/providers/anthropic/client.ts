// The Anthropic Messages API as a model target: one streamed attempt over the official SDK.
// Retries, backoff, stalls and fallbacks are the shared policy's (../policy.ts).
import type Anthropic from "@anthropic-ai/sdk";
import type { Logger } from "../../../process/log.ts";
import type { AssistantBlock, AssistantStop, Usage } from "../../messages.ts";
import { classifyModelError, type SdkErrors } from "../../model-errors.ts";
import { AttemptWatch, type AttemptResult, type ShownText } from "../attempt.ts";
import type { ModelCapabilities, ModelClient, ModelEvent } from "../model.ts";
import { createModelClient, type ModelTarget, type RetryPolicy } from "../policy.ts";
import { toApiParams } from "./request.ts";

export interface AnthropicConnection {
  apiKey?: string | undefined;
  baseURL?: string | undefined;
  headers?: Record<string, string> | undefined;
}

export interface AnthropicModelOptions extends AnthropicConnection {
  /** The primary model, then the fallbacks in order. */
  models: string[];
  retry?: Partial<RetryPolicy>;
  log: Logger;
  /** Waits `ms`; resolves early (without throwing) when `signal` aborts. Injected by tests. */
  sleep?: (ms: number, signal: AbortSignal) => Promise<void>;
  /** Returns a number in [0, 1) for jitter. */
  random?: () => number;
}

/** A client over Anthropic models only (the registry mixes providers; this is the simple case). */
export function createAnthropicModelClient(opts: AnthropicModelOptions): ModelClient {
  if (opts.models.length === 0) throw new Error("createAnthropicModelClient needs at least one model name.");
  const connect = anthropicConnection(opts);
  return createModelClient({
    targets: opts.models.map((m) => anthropicTarget(connect, m, m)),
    log: opts.log,
    ...(opts.retry ? { retry: opts.retry } : {}),
    ...(opts.sleep ? { sleep: opts.sleep } : {}),
    ...(opts.random ? { random: opts.random } : {}),
  });
}

type Loaded = { client: Anthropic; sdk: SdkErrors };

/**
 * The SDK client for one endpoint, loaded with the first request: a daemon that has not talked
 * to the model yet starts faster and smaller (the SDK is ~0.1 s and ~15 MB to load).
 */
export function anthropicConnection(c: AnthropicConnection): () => Promise<Loaded> {
  let loaded: Promise<Loaded> | null = null;
  return () =>
    (loaded ??= import("@anthropic-ai/sdk").then((sdk) => ({
      sdk,
      client: new sdk.default({
        // A local proxy given by base URL may need no key; the SDK insists on one.
        apiKey: c.apiKey ?? "hearth-no-key",
        ...(c.baseURL ? { baseURL: c.baseURL } : {}),
        ...(c.headers ? { defaultHeaders: c.headers } : {}),
        maxRetries: 0,
      }),
    })));
}

/** `name` as config spells it; `model` the API's id. Anthropic models take tools and images. */
export function anthropicTarget(connect: () => Promise<Loaded>, name: string, model: string, caps?: Partial<ModelCapabilities>): ModelTarget {
  return {
    name,
    capabilities: { tools: true, vision: true, ...caps },
    async attempt(req, { signal, idleTimeoutMs, shown, onEvent }) {
      const { client, sdk } = await connect();
      return streamAttempt(client, sdk, toApiParams(req, model), model, idleTimeoutMs, signal, shown, onEvent);
    },
  };
}

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
  const watch = new AttemptWatch(signal, idleTimeoutMs);
  shown.startAttempt();
  const serverNames = new Map<string, string>();
  const drafts: (BlockDraft | undefined)[] = [];
  const usage: Usage = { inputTokens: 0, outputTokens: 0, cacheReadTokens: 0, cacheCreationTokens: 0 };
  let answeredBy = model;
  let stopReason: string | null = null;
  let complete = false;
  let started = false;
  let generated = 0;
  try {
    const stream = await client.messages.create({ ...params, stream: true }, { signal: watch.signal });
    for await (const ev of stream) {
      watch.touch();
      switch (ev.type) {
        case "message_start":
          answeredBy = ev.message.model || model;
          readUsage(usage, ev.message.usage);
          started = true;
          break;
        case "content_block_start":
          drafts[ev.index] = startDraft(ev.content_block);
          break;
        case "content_block_delta":
          generated += deltaChars(ev.delta);
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
    // An error the API reported mid-stream (overloaded…) is its own failure, not billed here.
    if (!watch.cancelled) return { type: "error", error: classifyModelError(err, model, sdk, client.baseURL) };
  } finally {
    watch.release();
  }
  const ended = watch.outcome(model, complete, client.baseURL);
  if (ended) {
    // Stopped, stalled or cut off after the stream started: the input was billed, and the output
    // generated so far (the API's final count never came: estimated at 4 characters a token).
    if (!started || ended.type !== "error") return ended;
    return { ...ended, billed: { model: answeredBy, usage: { ...usage, outputTokens: Math.max(usage.outputTokens, Math.ceil(generated / 4)) } } };
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

/** The characters a delta adds to the model's output (what the output tokens are estimated from). */
function deltaChars(delta: Anthropic.RawContentBlockDelta): number {
  switch (delta.type) {
    case "text_delta":
      return delta.text.length;
    case "input_json_delta":
      return delta.partial_json.length;
    case "thinking_delta":
      return delta.thinking.length;
    default:
      return 0;
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
