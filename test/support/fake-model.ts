/**
 * A fake Anthropic Messages API on 127.0.0.1 for tests. The real `@anthropic-ai/sdk` talks to it
 * through `baseURL`; each `POST /v1/messages` takes the next scripted reply from a FIFO queue and
 * answers with SSE (`stream: true`) or a plain JSON message (otherwise). Auth is never checked.
 */
import { createServer, type IncomingMessage, type ServerResponse } from "node:http";
import { PromptCache, type PromptCacheOptions, type CacheUsage } from "./fake-prompt-cache.ts";
import type { AddressInfo } from "node:net";
import { text as readText } from "node:stream/consumers";
import { setTimeout as sleep } from "node:timers/promises";
import { E2E_WAIT_MS } from "./limits.ts";
import { webInputTokens, webRequests, webUse, type FetchBlock, type SearchBlock, type WebUse } from "./fake-web-tools.ts";

/** One request the fake received; `body` is the parsed JSON (null when it was not JSON). */
export interface RecordedRequest {
  method: string;
  path: string;
  headers: Record<string, string | string[] | undefined>;
  body: any;
  rawBody: string;
  at: number;
  /** The usage the fake reported for this request (absent for errors and hangs). */
  usage?: ReportedUsage;
}

/** Usage as the API reports it, including the split of cache writes by TTL. */
export type ReportedUsage = UsageTotals & { cache_creation: { ephemeral_5m_input_tokens: number; ephemeral_1h_input_tokens: number } | null };

export interface FakeModelOptions {
  /**
   * Simulate the provider's prompt cache: usage then reports cache writes and reads computed
   * from the request's cache_control breakpoints (5-minute or 1-hour TTL, refreshed on every
   * hit, a minimum prefix per model, about 4 characters a token). Without it, usage is the
   * scripted figures (input 10, no cache).
   */
  promptCache?: PromptCacheOptions;
}

/** One content block of a scripted reply. A tool block's id defaults to `toolu_<n>` (n counts per server). */
export type FakeBlock =
  /** `citations` stream as citations_delta events before the text. */
  | { text: string; citations?: unknown[] }
  /**
   * A server tool block exactly as the API returns it: `server_tool_use` streams its input as
   * input_json_delta after a start with `input: {}`; result blocks arrive whole in their start.
   */
  | { server: ServerContentBlock }
  /**
   * A provider web fetch as the API makes it: a `server_tool_use` and its `web_fetch_tool_result`,
   * the page cut to the request's web_fetch `max_content_tokens` (4 characters a token). Past the
   * tool's `max_uses` the result is a `max_uses_exceeded` error; a request without a web_fetch
   * tool gets neither block (the model cannot call a tool it was not given).
   */
  | FetchBlock
  /** A provider web search, likewise: its results whole (no parameter bounds them), `max_uses` as for a fetch. */
  | SearchBlock
  | { tool: string; input: unknown; id?: string }
  | { thinking: string; signature?: string };

/** A scripted assistant message; see each field for its default. */
export interface ScriptedMessage {
  type: "message";
  blocks: FakeBlock[];
  /** Default "tool_use" if any block is a tool call, else "end_turn". */
  stopReason?: string;
  /**
   * Defaults: input_tokens 10, cache counters 0, output_tokens about (streamed chars / 4), at least 1.
   * `cache_creation` is the API's TTL split of the cache writes (null, as the API sends it for
   * requests without cache_control, when absent). As the API bills them: output_tokens never
   * exceeds the request's max_tokens (the model stops there), and the `fetch` and `search`
   * blocks' results (4 characters a token) are input tokens on top, each billed once for every
   * later step of the message (a step ends at each use; the last one answers), with
   * server_tool_use counting the uses made.
   */
  usage?: {
    input_tokens?: number;
    output_tokens?: number;
    cache_read_input_tokens?: number;
    cache_creation_input_tokens?: number;
    cache_creation?: { ephemeral_5m_input_tokens: number; ephemeral_1h_input_tokens: number } | null;
    /** Reported in message_delta (null when absent, as the API sends it without server tools). */
    server_tool_use?: { web_search_requests: number; web_fetch_requests?: number };
  };
  /** Characters per text/thinking/input_json delta; default: each block in one delta. */
  chunkSize?: number;
  /** Delay before every delta but the first. */
  chunkDelayMs?: number;
  /** Delay before the first byte of the response. */
  headDelayMs?: number;
  /** Delay after the last delta, before the message ends: its text is complete, its run not yet. */
  tailDelayMs?: number;
  /** After this many streamed text chars (or before message_delta if the script has fewer), send `event: error`
   * and end the response. Without streaming: HTTP 529 for overloaded_error, else 500, instead of the message. */
  failAfterChars?: { chars: number; errorType?: string; message?: string };
  /** After this many streamed text chars, reset the connection; 0 resets before the response head, so `fetch`
   * itself fails. Without streaming: reset instead of answering. */
  dropAfterChars?: number;
}

/** What the fake does with one `/v1/messages` request. */
export type Scripted =
  | ScriptedMessage
  /** JSON body `{"type":"error","error":{"type","message"}}`; errorType defaults from the status. */
  | { type: "http_error"; status: number; errorType?: string; message?: string; headers?: Record<string, string> }
  /** Never answers; the request ends when the client aborts or the server closes. */
  | { type: "hang" }
  /** Decides at request time; `fn` must not throw (if it does, the fake answers 500 api_error). */
  | { type: "respond"; fn: (req: RecordedRequest) => Scripted };

export interface FakeModel {
  /** e.g. "http://127.0.0.1:43121"; give it to the SDK as `baseURL`. */
  readonly url: string;
  /** Every request to /v1/messages in arrival order (count_tokens excluded). */
  readonly requests: RecordedRequest[];
  /** Appends replies; each /v1/messages request takes the next one (FIFO). */
  enqueue(...replies: Scripted[]): void;
  /** Used when the queue is empty. null (the default) answers HTTP 500 "fake model: no scripted reply left". */
  setDefault(reply: Scripted | null): void;
  /** Scripted replies not yet consumed (the default reply is not counted). */
  pending(): number;
  /** Resolves once requests.length >= n; rejects after timeoutMs (default E2E_WAIT_MS) saying how many arrived. */
  waitForRequests(n: number, timeoutMs?: number): Promise<void>;
  /** Closes the server and every open connection, hanging ones too. Safe to call twice. */
  close(): Promise<void>;
}

/** Optional fields of a scripted message, for the builders. */
export type MessageExtras = Partial<Omit<ScriptedMessage, "type" | "blocks">>;

/** Content blocks exactly as the API returns them. */
export type ServerContentBlock = { type: string; [field: string]: unknown };

type ContentBlock =
  | { type: "text"; text: string; citations: unknown[] | null }
  | { type: "server"; block: ServerContentBlock }
  | { type: "tool_use"; id: string; name: string; input: unknown; caller: { type: "direct" } }
  | { type: "thinking"; thinking: string; signature: string };

/** A scripted reply once `respond` functions have run. */
type FinalReply = Exclude<Scripted, { type: "respond" }>;

type Delta =
  | { type: "text_delta"; text: string }
  | { type: "input_json_delta"; partial_json: string }
  | { type: "thinking_delta"; thinking: string }
  | { type: "signature_delta"; signature: string }
  | { type: "citations_delta"; citation: unknown };

/** A request in flight: its response, the per-server id counter and a signal for "stop writing". */
interface Exchange {
  res: ServerResponse;
  signal: AbortSignal;
  nextId: (prefix: string) => string;
  recorded: RecordedRequest;
  /** The simulated cache's account of this request; null without a simulated cache. */
  cacheUsage: (() => CacheUsage) | null;
}

const SSE_HEADERS = { "content-type": "text/event-stream; charset=utf-8", "cache-control": "no-cache" };

/** Starts a fake on a free port of 127.0.0.1; call `close()` when the test ends. */
export async function startFakeModel(opts: FakeModelOptions = {}): Promise<FakeModel> {
  const cache = opts.promptCache ? new PromptCache(opts.promptCache) : null;
  const requests: RecordedRequest[] = [];
  const queue: Scripted[] = [];
  const closing = new AbortController();
  const counters = new Map<string, number>();
  let fallback: Scripted | null = null;

  const nextId = (prefix: string): string => {
    const n = (counters.get(prefix) ?? 0) + 1;
    counters.set(prefix, n);
    return `${prefix}_${n}`;
  };

  const handle = async (req: IncomingMessage, res: ServerResponse): Promise<void> => {
    res.setHeader("request-id", nextId("req"));
    const path = new URL(req.url ?? "/", "http://127.0.0.1").pathname;
    const rawBody = await readText(req);
    if (req.method === "POST" && path === "/v1/messages/count_tokens") {
      return sendJson(res, 200, { input_tokens: Math.max(1, Math.round(rawBody.length / 4)) });
    }
    if (req.method === "GET" && path === "/v1/models") {
      // The models endpoint (hearth doctor --online): the model names this fake answers to.
      const data = ["claude-sonnet-5-5", "claude-haiku-5"].map((id) => ({ id, type: "model", display_name: id, created_at: "2026-01-01T00:00:00Z" }));
      return sendJson(res, 200, { data, has_more: false, first_id: data[0]!.id, last_id: data.at(-1)!.id });
    }
    if (req.method !== "POST" || path !== "/v1/messages") {
      return sendError(res, 404, "not_found_error", `fake model: no route for ${req.method} ${path}`);
    }
    const recorded: RecordedRequest = { method: "POST", path, headers: { ...req.headers }, body: parseJson(rawBody), rawBody, at: Date.now() };
    requests.push(recorded);
    if (recorded.body === null) return sendError(res, 400, "invalid_request_error", "fake model: body is not JSON");
    const reply = queue.shift() ?? fallback;
    if (reply === null) return sendError(res, 500, "api_error", "fake model: no scripted reply left");
    const closed = new AbortController();
    res.on("close", () => closed.abort());
    const exchange: Exchange = { res, signal: AbortSignal.any([closing.signal, closed.signal]), nextId, recorded, cacheUsage: cache ? () => cache.use(recorded.body) : null };
    await serve(exchange, resolveScript(reply, recorded), recorded.body);
  };

  const server = createServer((req, res) => {
    handle(req, res).catch((error: unknown) => {
      if (res.headersSent) res.destroy();
      else sendError(res, 500, "api_error", `fake model: ${error instanceof Error ? error.message : String(error)}`);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;
  let closed: Promise<void> | undefined;

  return {
    url: `http://127.0.0.1:${port}`,
    requests,
    enqueue: (...replies) => void queue.push(...replies),
    setDefault: (reply) => void (fallback = reply),
    pending: () => queue.length,
    waitForRequests: async (n, timeoutMs = E2E_WAIT_MS) => {
      const deadline = Date.now() + timeoutMs;
      while (requests.length < n) {
        if (Date.now() >= deadline) throw new Error(`fake model: waited ${timeoutMs} ms for ${n} request(s) to /v1/messages, got ${requests.length}`);
        await sleep(5);
      }
    },
    close: () =>
      (closed ??= new Promise<void>((resolve) => {
        closing.abort();
        server.close(() => resolve());
        server.closeAllConnections();
      })),
  };
}

/** Follows `respond` scripts until a concrete reply; a chain longer than 10 is a test bug. */
function resolveScript(reply: Scripted, req: RecordedRequest): FinalReply {
  for (let depth = 0; depth < 10; depth++) {
    if (reply.type !== "respond") return reply;
    reply = reply.fn(req);
  }
  throw new Error("respond scripts nested more than 10 deep");
}

async function serve(ex: Exchange, reply: FinalReply, body: { stream?: unknown; model?: unknown }): Promise<void> {
  switch (reply.type) {
    case "message": {
      if (!(await pause(ex, reply.headDelayMs))) return;
      const model = typeof body.model === "string" ? body.model : "fake-model";
      return body.stream === true ? streamMessage(ex, reply, model) : answerMessage(ex, reply, model);
    }
    case "http_error":
      return sendError(ex.res, reply.status, reply.errorType ?? errorTypeFor(reply.status), reply.message ?? `fake model: scripted HTTP ${reply.status}`, reply.headers);
    case "hang":
      // Resolves when the client aborts (the response closes) or the server closes.
      if (!ex.signal.aborted) await new Promise((resolve) => ex.signal.addEventListener("abort", resolve, { once: true }));
      return;
    default:
      return reply satisfies never;
  }
}

function answerMessage(ex: Exchange, msg: ScriptedMessage, model: string): void {
  if (msg.dropAfterChars !== undefined) return void ex.res.socket?.resetAndDestroy();
  if (msg.failAfterChars) {
    const type = msg.failAfterChars.errorType ?? "overloaded_error";
    return sendError(ex.res, type === "overloaded_error" ? 529 : 500, type, msg.failAfterChars.message ?? "Overloaded");
  }
  const { content, uses } = contentOf(msg, ex);
  const usage = usageFor(msg, content, uses, ex);
  const apiContent = content.map((c) => (c.type === "server" ? c.block : c)) as ContentBlock[];
  sendJson(ex.res, 200, messageHead(ex, model, apiContent, stopReasonFor(msg), usage, serverToolUse(msg, uses)));
}

async function streamMessage(ex: Exchange, msg: ScriptedMessage, model: string): Promise<void> {
  const { res } = ex;
  const { content, uses } = contentOf(msg, ex);
  const usage = usageFor(msg, content, uses, ex);
  const cutAt = Math.min(msg.failAfterChars?.chars ?? Infinity, msg.dropAfterChars ?? Infinity);
  const cut = (): void => {
    // The earlier of the two limits wins; a drop wins a tie because it is the harsher failure.
    // Reset only once the kernel has the bytes written so far, else the reset discards them.
    if (msg.dropAfterChars === cutAt && !res.headersSent) return void res.socket?.resetAndDestroy();
    if (msg.dropAfterChars === cutAt) return void res.write("", () => res.socket?.resetAndDestroy());
    if (!res.headersSent) res.writeHead(200, SSE_HEADERS);
    const { errorType = "overloaded_error", message = "Overloaded" } = msg.failAfterChars ?? {};
    writeEvent(res, "error", { error: { type: errorType, message } });
    res.end();
  };
  let textSent = 0;
  if (cutAt === 0) return cut();
  res.writeHead(200, SSE_HEADERS);
  writeEvent(res, "message_start", { message: messageHead(ex, model, [], null, { ...usage, output_tokens: 0 }) });
  writeEvent(res, "ping", {});
  let first = true;
  for (const [index, block] of content.entries()) {
    writeEvent(res, "content_block_start", { index, content_block: block.type === "server" ? emptyServer(block.block) : emptyOf(block) });
    for (const delta of deltasOf(block, msg.chunkSize)) {
      if (!first && !(await pause(ex, msg.chunkDelayMs))) return;
      first = false;
      if (delta.type === "text_delta" && textSent + delta.text.length >= cutAt) {
        const room = cutAt - textSent;
        if (room > 0) writeEvent(res, "content_block_delta", { index, delta: { ...delta, text: delta.text.slice(0, room) } });
        return cut();
      }
      writeEvent(res, "content_block_delta", { index, delta });
      if (delta.type === "text_delta") textSent += delta.text.length;
    }
    writeEvent(res, "content_block_stop", { index });
  }
  if (cutAt !== Infinity) return cut();
  if (msg.tailDelayMs && !(await pause(ex, msg.tailDelayMs))) return;
  const delta = { stop_reason: stopReasonFor(msg), stop_sequence: null, stop_details: null, container: null };
  const { cache_creation: _split, ...totals } = usage;
  writeEvent(res, "message_delta", { delta, usage: { ...totals, output_tokens_details: null, server_tool_use: serverToolUse(msg, uses) } });
  writeEvent(res, "message_stop", {});
  res.end();
}

/** The message's blocks as the API sends them, the fetch and search blocks made against the request's tool definitions. */
function contentOf(msg: ScriptedMessage, ex: Exchange): { content: ContentBlock[]; uses: WebUse[] } {
  const content: ContentBlock[] = [];
  const uses: WebUse[] = [];
  for (const block of msg.blocks) {
    if (!("fetch" in block) && !("search" in block)) {
      content.push(toContent(block, ex.nextId));
      continue;
    }
    const made = webUse(block, ex.recorded.body, uses, ex.nextId);
    if (!made) continue;
    for (const b of made.blocks) content.push({ type: "server", block: b });
    uses.push(made.use);
  }
  return { content, uses };
}

/** Scripted, else the uses made (null, as the API sends it, without any). */
function serverToolUse(msg: ScriptedMessage, uses: WebUse[]): { web_search_requests: number; web_fetch_requests?: number } | null {
  return msg.usage?.server_tool_use ?? webRequests(uses);
}

function toContent(block: Exclude<FakeBlock, FetchBlock | SearchBlock>, nextId: (prefix: string) => string): ContentBlock {
  if ("text" in block) return { type: "text", text: block.text, citations: block.citations ?? null };
  if ("server" in block) return { type: "server", block: block.server };
  if ("tool" in block) return { type: "tool_use", id: block.id ?? nextId("toolu"), name: block.tool, input: block.input ?? {}, caller: { type: "direct" } };
  return { type: "thinking", thinking: block.thinking, signature: block.signature ?? "fake-signature" };
}

/** A server_tool_use starts with empty input (it streams); a result block starts whole. */
const emptyServer = (b: ServerContentBlock): ServerContentBlock => (b.type === "server_tool_use" ? { ...b, input: {} } : b);

/** The block as `content_block_start` announces it, before any delta. */
function emptyOf(block: Exclude<ContentBlock, { type: "server" }>): ContentBlock {
  if (block.type === "text") return { ...block, text: "", citations: block.citations ? [] : null };
  if (block.type === "tool_use") return { ...block, input: {} };
  return { ...block, thinking: "", signature: "" };
}

/** Tool input streams as `partial_json` pieces; a thinking block ends with its signature. */
function deltasOf(block: ContentBlock, chunkSize: number | undefined): Delta[] {
  if (block.type === "server") {
    return block.block.type === "server_tool_use" ? split(JSON.stringify(block.block.input ?? {}), chunkSize).map((partial_json) => ({ type: "input_json_delta", partial_json })) : [];
  }
  if (block.type === "text") {
    const cites = (block.citations ?? []).map((citation): Delta => ({ type: "citations_delta", citation }));
    return [...cites, ...split(block.text, chunkSize).map((text): Delta => ({ type: "text_delta", text }))];
  }
  if (block.type === "tool_use") return split(JSON.stringify(block.input), chunkSize).map((partial_json) => ({ type: "input_json_delta", partial_json }));
  const thinking = split(block.thinking, chunkSize).map((piece): Delta => ({ type: "thinking_delta", thinking: piece }));
  return [...thinking, { type: "signature_delta", signature: block.signature }];
}

function split(s: string, size: number | undefined): string[] {
  if (s === "") return [];
  if (!size || size <= 0) return [s];
  const parts: string[] = [];
  for (let i = 0; i < s.length; i += size) parts.push(s.slice(i, i + size));
  return parts;
}

type UsageTotals = Required<Omit<NonNullable<ScriptedMessage["usage"]>, "server_tool_use">>;

/**
 * Scripted figures win; then the simulated cache's account; then the defaults. The web tools'
 * results are added to the input, the output is cut at max_tokens. Recorded on the request.
 */
function usageFor(msg: ScriptedMessage, content: ContentBlock[], uses: WebUse[], ex: Exchange): ReportedUsage {
  const texts = content.map((block) => (block.type === "text" ? block.text : block.type === "thinking" ? block.thinking : block.type === "server" ? "" : JSON.stringify(block.input)));
  const chars = texts.join("").length;
  const cached = ex.cacheUsage?.() ?? null;
  const webTokens = webInputTokens(uses);
  const maxTokens: unknown = asRecord(ex.recorded.body).max_tokens;
  const output = msg.usage?.output_tokens ?? Math.max(1, Math.round(chars / 4));
  const usage: ReportedUsage = {
    input_tokens: (msg.usage?.input_tokens ?? cached?.input ?? 10) + webTokens,
    output_tokens: typeof maxTokens === "number" ? Math.min(output, maxTokens) : output,
    cache_read_input_tokens: msg.usage?.cache_read_input_tokens ?? cached?.read ?? 0,
    cache_creation_input_tokens: msg.usage?.cache_creation_input_tokens ?? (cached ? cached.write5m + cached.write1h : 0),
    cache_creation: msg.usage?.cache_creation ?? (cached ? { ephemeral_5m_input_tokens: cached.write5m, ephemeral_1h_input_tokens: cached.write1h } : null),
  };
  ex.recorded.usage = usage;
  return usage;
}

function stopReasonFor(msg: ScriptedMessage): string {
  return msg.stopReason ?? (msg.blocks.some((block) => "tool" in block) ? "tool_use" : "end_turn");
}

function messageHead(ex: Exchange, model: string, content: ContentBlock[], stopReason: string | null, usage: ReportedUsage, serverToolUse: object | null = null) {
  const nulls = { stop_sequence: null, stop_details: null, container: null, diagnostics: null };
  const usageNulls = { inference_geo: null, output_tokens_details: null, server_tool_use: serverToolUse, speed: null };
  const fullUsage = { ...usage, ...usageNulls, service_tier: "standard" };
  return { id: ex.nextId("msg"), type: "message", role: "assistant", model, content, stop_reason: stopReason, ...nulls, usage: fullUsage };
}

function writeEvent(res: ServerResponse, type: string, payload: object): void {
  if (!res.destroyed) res.write(`event: ${type}\ndata: ${JSON.stringify({ type, ...payload })}\n\n`);
}

/** Waits `ms`; false when the client went away or the server is closing, so the caller stops writing. */
async function pause(ex: Exchange, ms: number | undefined): Promise<boolean> {
  if (ms && ms > 0) await sleep(ms, undefined, { signal: ex.signal }).catch(() => undefined);
  return !ex.signal.aborted && !ex.res.destroyed;
}

const ERROR_TYPES: Record<number, string> = {
  400: "invalid_request_error", 401: "authentication_error", 402: "billing_error", 403: "permission_error",
  404: "not_found_error", 408: "timeout_error", 409: "conflict_error", 413: "request_too_large",
  429: "rate_limit_error", 504: "timeout_error", 529: "overloaded_error",
};

function errorTypeFor(status: number): string {
  return ERROR_TYPES[status] ?? (status >= 500 ? "api_error" : "invalid_request_error");
}

function sendError(res: ServerResponse, status: number, type: string, message: string, headers: Record<string, string> = {}): void {
  sendJson(res, status, { type: "error", error: { type, message } }, headers);
}

function sendJson(res: ServerResponse, status: number, body: object, headers: Record<string, string> = {}): void {
  res.writeHead(status, { ...headers, "content-type": "application/json" });
  res.end(JSON.stringify(body));
}

function parseJson(raw: string): unknown {
  try {
    return JSON.parse(raw) as unknown;
  } catch {
    return null;
  }
}

/** A content block of a request, loosely typed: tests read `type` and whatever else they expect. */
export type RequestBlock = { type: string; [field: string]: unknown };

/** Every text and tool_result text in the request's system and messages, joined by newlines. */
export function requestText(req: RecordedRequest): string {
  const body = asRecord(req.body);
  const parts = [...textsOf(body.system)];
  for (const message of Array.isArray(body.messages) ? body.messages : []) parts.push(...textsOf(asRecord(message).content));
  return parts.join("\n");
}

/** The content of the request's last message as blocks (a string content becomes one text block); [] when none. */
export function lastUserContent(req: RecordedRequest): RequestBlock[] {
  const messages: unknown = asRecord(req.body).messages;
  const content = Array.isArray(messages) ? asRecord(messages.at(-1)).content : undefined;
  if (typeof content === "string") return [{ type: "text", text: content }];
  return Array.isArray(content) ? content.map((block) => asRecord(block) as RequestBlock) : [];
}

function textsOf(content: unknown): string[] {
  if (typeof content === "string") return [content];
  if (!Array.isArray(content)) return [];
  return content.flatMap((item) => {
    const block = asRecord(item);
    if (block.type === "text" && typeof block.text === "string") return [block.text];
    if (block.type === "tool_result") return textsOf(block.content);
    return [];
  });
}

function asRecord(value: unknown): Record<string, unknown> {
  return typeof value === "object" && value !== null ? (value as Record<string, unknown>) : {};
}

/** One text block, e.g. `text("Hi", { chunkSize: 2 })`. */
export const text = (t: string, extra: MessageExtras = {}): Scripted => ({ type: "message", blocks: [{ text: t }], ...extra });

/** One tool_use block, e.g. `toolCall("read_file", { path: "a.md" })`; stop reason "tool_use". */
export const toolCall = (name: string, input: unknown, extra: MessageExtras & { id?: string } = {}): Scripted => {
  const { id, ...rest } = extra;
  return { type: "message", blocks: [id === undefined ? { tool: name, input } : { tool: name, input, id }], ...rest };
};
