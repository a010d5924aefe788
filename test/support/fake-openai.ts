/**
 * A fake OpenAI-compatible Chat Completions server on 127.0.0.1 (what Ollama, LM Studio, vLLM,
 * OpenRouter and Groq speak). Hearth's client talks to it through `baseURL` (`<url>/v1`).
 * `POST /v1/chat/completions` takes the next scripted reply from a FIFO queue and streams it
 * exactly as the API does: `data: {chunk}\n\n` lines, tool-call arguments split across chunks
 * by `index`, a usage chunk (empty `choices`) when `stream_options.include_usage`, then
 * `data: [DONE]`. `GET /v1/models` lists the configured models.
 */
import { createServer, type IncomingMessage, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { text as readText } from "node:stream/consumers";
import { setTimeout as sleep } from "node:timers/promises";
import type { RecordedRequest } from "./fake-model.ts";
import { E2E_WAIT_MS } from "./limits.ts";

export type { RecordedRequest };

/** A scripted tool call; `id` defaults to `call_<n>` (n counts per server). */
export interface FakeCall {
  name: string;
  /** An object is sent as its JSON text; a string is sent as is (to script broken JSON). */
  arguments: unknown;
  id?: string;
}

export interface ScriptedCompletion {
  type: "completion";
  text?: string;
  calls?: FakeCall[];
  /** Default "tool_calls" when there are calls, else "stop". */
  finishReason?: string;
  /** Defaults: prompt 10, completion about (streamed chars / 4), at least 1, cached 0. */
  usage?: { prompt_tokens?: number; completion_tokens?: number; cached_tokens?: number };
  /** Characters per content / arguments piece; default: each in one piece. */
  chunkSize?: number;
  /** Delay before every chunk but the first. */
  chunkDelayMs?: number;
  /** After this many streamed text characters, send `data: {"error": …}` and end the response. */
  failAfterChars?: { chars: number; type?: string; message?: string };
  /** After this many streamed text characters, reset the connection. */
  dropAfterChars?: number;
  /** Each call whole in one chunk without `index`, as older Ollama versions stream them. */
  wholeCallsWithoutIndex?: boolean;
}

export type OpenAIScripted =
  | ScriptedCompletion
  /** JSON body `{"error":{"message","type","code"}}`, as OpenAI and Ollama send errors. */
  | { type: "http_error"; status: number; message?: string; errorType?: string; headers?: Record<string, string> }
  /** Never answers; the request ends when the client aborts or the server closes. */
  | { type: "hang" }
  /** Decides at request time; `fn` must not throw. */
  | { type: "respond"; fn: (req: RecordedRequest) => OpenAIScripted };

export interface FakeOpenAIOptions {
  /** Served by GET /v1/models. Default ["fake-model"]. */
  models?: string[];
  /** When set, any other bearer token gets a 401 like OpenAI's. */
  apiKey?: string;
  /** Models that answer a request with tools by HTTP 400 "… does not support tools" (Ollama's words). */
  noToolModels?: string[];
}

export interface FakeOpenAI {
  /** e.g. "http://127.0.0.1:43121/v1": the SDK's `baseURL` and a provider's `baseUrl`. */
  readonly baseUrl: string;
  /** Every POST /v1/chat/completions in arrival order. */
  readonly requests: RecordedRequest[];
  /** Every GET /v1/models. */
  readonly modelListings: RecordedRequest[];
  enqueue(...replies: OpenAIScripted[]): void;
  pending(): number;
  waitForRequests(n: number, timeoutMs?: number): Promise<void>;
  close(): Promise<void>;
}

const SSE_HEADERS = { "content-type": "text/event-stream; charset=utf-8", "cache-control": "no-cache" };

export async function startFakeOpenAI(opts: FakeOpenAIOptions = {}): Promise<FakeOpenAI> {
  const requests: RecordedRequest[] = [];
  const modelListings: RecordedRequest[] = [];
  const queue: OpenAIScripted[] = [];
  const closing = new AbortController();
  const counters = new Map<string, number>();
  const nextId = (prefix: string) => {
    const n = (counters.get(prefix) ?? 0) + 1;
    counters.set(prefix, n);
    return `${prefix}_${n}`;
  };

  const handle = async (req: IncomingMessage, res: ServerResponse): Promise<void> => {
    const path = new URL(req.url ?? "/", "http://127.0.0.1").pathname;
    const rawBody = await readText(req);
    const recorded: RecordedRequest = { method: req.method ?? "GET", path, headers: { ...req.headers }, body: parseJson(rawBody), rawBody, at: Date.now() };
    if (opts.apiKey !== undefined && req.headers.authorization !== `Bearer ${opts.apiKey}`) {
      return sendError(res, 401, "Incorrect API key provided.", "invalid_request_error", {}, "invalid_api_key");
    }
    if (req.method === "GET" && path === "/v1/models") {
      modelListings.push(recorded);
      const data = (opts.models ?? ["fake-model"]).map((id) => ({ id, object: "model", created: 1_700_000_000, owned_by: "fake" }));
      return sendJson(res, 200, { object: "list", data });
    }
    if (req.method !== "POST" || path !== "/v1/chat/completions") return sendError(res, 404, `fake openai: no route for ${req.method} ${path}`, "invalid_request_error");
    requests.push(recorded);
    const body = recorded.body as { model?: string; stream?: boolean; tools?: unknown[]; stream_options?: { include_usage?: boolean } } | null;
    if (!body) return sendError(res, 400, "fake openai: body is not JSON", "invalid_request_error");
    const model = body.model ?? "fake-model";
    if (opts.noToolModels?.includes(model) && (body.tools?.length ?? 0) > 0) {
      return sendError(res, 400, `registry.ollama.ai/library/${model}:latest does not support tools`, "api_error");
    }
    let reply = queue.shift();
    for (let depth = 0; reply?.type === "respond" && depth < 10; depth++) reply = reply.fn(recorded);
    if (!reply || reply.type === "respond") return sendError(res, 500, "fake openai: no scripted reply left", "server_error");
    const closed = new AbortController();
    res.on("close", () => closed.abort());
    const signal = AbortSignal.any([closing.signal, closed.signal]);
    switch (reply.type) {
      case "http_error":
        return sendError(res, reply.status, reply.message ?? `fake openai: scripted HTTP ${reply.status}`, reply.errorType ?? (reply.status >= 500 ? "server_error" : "invalid_request_error"), reply.headers);
      case "hang":
        if (!signal.aborted) await new Promise((resolve) => signal.addEventListener("abort", resolve, { once: true }));
        return;
      case "completion":
        if (body.stream !== true) return sendJson(res, 200, wholeCompletion(reply, model, nextId));
        return streamCompletion(res, signal, reply, model, body.stream_options?.include_usage === true, nextId);
    }
  };

  const server = createServer((req, res) => {
    handle(req, res).catch((error: unknown) => {
      if (res.headersSent) res.destroy();
      else sendError(res, 500, `fake openai: ${error instanceof Error ? error.message : String(error)}`, "server_error");
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;
  let closed: Promise<void> | undefined;
  return {
    baseUrl: `http://127.0.0.1:${port}/v1`,
    requests,
    modelListings,
    enqueue: (...replies) => void queue.push(...replies),
    pending: () => queue.length,
    waitForRequests: async (n, timeoutMs = E2E_WAIT_MS) => {
      const deadline = Date.now() + timeoutMs;
      while (requests.length < n) {
        if (Date.now() >= deadline) throw new Error(`fake openai: waited ${timeoutMs} ms for ${n} request(s), got ${requests.length}`);
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

interface Calls {
  id: string;
  name: string;
  args: string;
}

function callsOf(reply: ScriptedCompletion, nextId: (p: string) => string): Calls[] {
  return (reply.calls ?? []).map((c) => ({ id: c.id ?? nextId("call"), name: c.name, args: typeof c.arguments === "string" ? c.arguments : JSON.stringify(c.arguments ?? {}) }));
}

function usageOf(reply: ScriptedCompletion, calls: Calls[]) {
  const chars = (reply.text ?? "").length + calls.reduce((n, c) => n + c.args.length, 0);
  const prompt = reply.usage?.prompt_tokens ?? 10;
  const completion = reply.usage?.completion_tokens ?? Math.max(1, Math.round(chars / 4));
  return { prompt_tokens: prompt, completion_tokens: completion, total_tokens: prompt + completion, prompt_tokens_details: { cached_tokens: reply.usage?.cached_tokens ?? 0 } };
}

const finishOf = (reply: ScriptedCompletion) => reply.finishReason ?? ((reply.calls?.length ?? 0) > 0 ? "tool_calls" : "stop");

function wholeCompletion(reply: ScriptedCompletion, model: string, nextId: (p: string) => string) {
  const calls = callsOf(reply, nextId);
  const message = {
    role: "assistant",
    content: reply.text ?? null,
    ...(calls.length > 0 ? { tool_calls: calls.map((c) => ({ id: c.id, type: "function", function: { name: c.name, arguments: c.args } })) } : {}),
  };
  return { id: nextId("chatcmpl"), object: "chat.completion", created: now(), model, choices: [{ index: 0, message, logprobs: null, finish_reason: finishOf(reply) }], usage: usageOf(reply, calls) };
}

async function streamCompletion(res: ServerResponse, signal: AbortSignal, reply: ScriptedCompletion, model: string, includeUsage: boolean, nextId: (p: string) => string): Promise<void> {
  const id = nextId("chatcmpl");
  const created = now();
  const calls = callsOf(reply, nextId);
  const chunk = (delta: object, finish: string | null = null) => ({
    id,
    object: "chat.completion.chunk",
    created,
    model,
    system_fingerprint: null,
    choices: [{ index: 0, delta, logprobs: null, finish_reason: finish }],
    ...(includeUsage ? { usage: null } : {}),
  });
  const write = (data: object | string) => {
    if (!res.destroyed) res.write(`data: ${typeof data === "string" ? data : JSON.stringify(data)}\n\n`);
  };
  const cutAt = Math.min(reply.failAfterChars?.chars ?? Infinity, reply.dropAfterChars ?? Infinity);
  const cut = () => {
    if (reply.dropAfterChars === cutAt) return void res.write("", () => res.socket?.resetAndDestroy());
    write({ error: { message: reply.failAfterChars?.message ?? "The server had an error while processing your request.", type: reply.failAfterChars?.type ?? "server_error", param: null, code: null } });
    res.end();
  };
  res.writeHead(200, SSE_HEADERS);
  write(chunk({ role: "assistant", content: "", refusal: null }));
  let first = true;
  const pause = async () => {
    if (!first && reply.chunkDelayMs) await sleep(reply.chunkDelayMs, undefined, { signal }).catch(() => undefined);
    first = false;
    return !signal.aborted && !res.destroyed;
  };
  let sent = 0;
  for (const piece of split(reply.text ?? "", reply.chunkSize)) {
    if (!(await pause())) return;
    if (sent + piece.length >= cutAt) {
      const room = cutAt - sent;
      if (room > 0) write(chunk({ content: piece.slice(0, room) }));
      return cut();
    }
    write(chunk({ content: piece }));
    sent += piece.length;
  }
  if (cutAt !== Infinity) return cut();
  for (const [index, c] of calls.entries()) {
    if (!(await pause())) return;
    if (reply.wholeCallsWithoutIndex) {
      write(chunk({ tool_calls: [{ id: c.id, type: "function", function: { name: c.name, arguments: c.args } }] }));
      continue;
    }
    // The first piece names the call; the rest carry only its index and more arguments.
    write(chunk({ tool_calls: [{ index, id: c.id, type: "function", function: { name: c.name, arguments: "" } }] }));
    for (const piece of split(c.args, reply.chunkSize)) {
      if (!(await pause())) return;
      write(chunk({ tool_calls: [{ index, function: { arguments: piece } }] }));
    }
  }
  write(chunk({}, finishOf(reply)));
  if (includeUsage) write({ id, object: "chat.completion.chunk", created, model, system_fingerprint: null, choices: [], usage: usageOf(reply, calls) });
  write("[DONE]");
  res.end();
}

function split(s: string, size: number | undefined): string[] {
  if (s === "") return [];
  if (!size || size <= 0) return [s];
  const parts: string[] = [];
  for (let i = 0; i < s.length; i += size) parts.push(s.slice(i, i + size));
  return parts;
}

const now = () => Math.floor(Date.now() / 1000);

function sendError(res: ServerResponse, status: number, message: string, type: string, headers: Record<string, string> = {}, code: string | null = null): void {
  sendJson(res, status, { error: { message, type, param: null, code } }, headers);
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

/** A text answer, e.g. `reply("Hi", { chunkSize: 2 })`. */
export const reply = (text: string, extra: Partial<Omit<ScriptedCompletion, "type" | "text">> = {}): OpenAIScripted => ({ type: "completion", text, ...extra });

/** One or more tool calls in one turn, e.g. `calls({ name: "exec", arguments: { command: "ls" } })`. */
export const calls = (...list: FakeCall[]): OpenAIScripted => ({ type: "completion", calls: list });

/** The messages of a recorded chat request. */
export const chatMessages = (req: RecordedRequest): Array<Record<string, any>> => (req.body as { messages: Array<Record<string, any>> }).messages;
