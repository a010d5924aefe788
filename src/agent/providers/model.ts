// The provider boundary (DESIGN §6): what the agent loop sends to a model and gets back,
// whatever the provider. The loop sees only `ModelClient`; each provider converts a
// `ModelRequest` to its own API in exactly one function (providers/<name>/request.ts).
import type { AssistantBlock, AssistantMessage, Message, Usage } from "../messages.ts";
import type { ModelError } from "../model-errors.ts";
import type { ToolSpec } from "../tool.ts";

/** A piece of the system prompt. `cacheBreakpoint` marks the end of a byte-stable prefix. */
export interface SystemBlock {
  text: string;
  cacheBreakpoint?: boolean;
}

/** How long the provider keeps a cached prefix: "5m" (the API's default) or "1h" (writes cost 2× input instead of 1.25×). */
export type CacheTtl = "5m" | "1h";

export interface ModelRequest {
  system: SystemBlock[];
  /** Empty: the request offers no tools (a summary, or a model that cannot call tools). */
  tools: ToolSpec[];
  messages: Message[];
  maxTokens: number;
  /**
   * TTL of the system breakpoints (the stable prefix), for providers that cache. Absent: the
   * API's 5 minutes. The breakpoint on the last message always keeps 5 minutes: it moves every
   * request, and the API wants 1-hour entries before 5-minute ones.
   */
  cacheTtl?: CacheTtl;
  /**
   * false: a request that will never be sent again (a compaction summary) carries no
   * cache_control at all: writing a cache entry costs 1.25× input for nothing.
   */
  cache?: false;
  /** Provider-side tools (web search / fetch definitions, `{ type: "web_search_20260318", name, … }`), sent after `tools`. */
  serverTools?: ServerToolDefinition[];
  /** User turns whose images and documents are still shown (media-view.ts); absent: the default 3. */
  mediaKeepTurns?: number;
}

/** A server tool's definition exactly as the API takes it. */
export interface ServerToolDefinition {
  type: string;
  name: string;
  [field: string]: unknown;
}

/** The synthetic result of a tool call that never got one (a crash or abort). */
export const MISSING_RESULT = "No result: the run was interrupted before this tool finished.";

export type ModelEvent =
  | { type: "text_delta"; text: string }
  /** The text streamed so far for this call is void; `text` replaces all of it. */
  | { type: "text_reset"; text: string }
  | { type: "retry"; attempt: number; delayMs: number; error: ModelError }
  | { type: "fallback"; from: string; to: string; error: ModelError }
  /** A provider-side tool (web search / fetch) was called, and later answered. */
  | { type: "server_tool_start"; id: string; name: string; input: unknown }
  | { type: "server_tool_end"; id: string; name: string; ok: boolean };

/**
 * What an attempt that did not finish was still billed for: the API charges its input (and the
 * output generated so far) once the stream started, also when it is stopped or cut off.
 */
export interface Unfinished {
  model: string;
  usage: Usage;
}

/**
 * `unfinished`: attempts of this call that started and then failed (stopped, stalled, cut off)
 * before the one that decided the result; they are billed all the same.
 */
export type ModelResult =
  | { type: "ok"; message: AssistantMessage; unfinished?: Unfinished[] }
  /** `partial` holds what the caller was already shown (text), for an interrupted record. */
  | { type: "error"; error: ModelError; partial: AssistantBlock[]; unfinished?: Unfinished[] };

export interface ModelCallOptions {
  signal: AbortSignal;
  /** Called synchronously for every event; must not throw. */
  onEvent: (e: ModelEvent) => void;
}

/** What a model can take besides text, from config or learned from its first refusal. */
export interface ModelCapabilities {
  tools: boolean;
  vision: boolean;
  /** Why tools are off, for /status: "config" (`tools: false`) or what the API said. */
  toolsOffReason?: string;
}

export interface ModelClient {
  /** The primary model's name (for status and cost display). */
  readonly model: string;
  /** Streams one response. Never throws: failures and aborts are returned as error values. */
  stream(req: ModelRequest, opts: ModelCallOptions): Promise<ModelResult>;
  /** The primary model's capabilities now; absent for clients that do not know (test fakes). */
  capabilities?(): ModelCapabilities;
}
