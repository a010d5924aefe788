// The OpenAI Chat Completions API over fetch: the three requests Hearth makes of it (a streamed
// completion, a whole one for `hearth doctor`, the model list) and the wire types they carry.
// Hearth's own rather than the `openai` package, which installs ~35 MB for these three. Errors
// are shaped as model-errors.ts reads an SDK's (`chatApiErrors`): an HTTP error or an error
// event in the stream is a ChatApiError with the API's error object; an address that cannot be
// reached is a ChatConnectionError whose cause says why.
import type { SdkErrors } from "../../model-errors.ts";

export interface ChatToolCall {
  id: string;
  type: "function";
  function: { name: string; arguments: string };
}

export type ChatContentPart = { type: "text"; text: string } | ChatImagePart;
export type ChatImagePart = { type: "image_url"; image_url: { url: string } };

export interface ChatAssistantMessage {
  role: "assistant";
  content: string | null;
  tool_calls?: ChatToolCall[];
}

export type ChatMessage =
  | { role: "system"; content: string }
  | { role: "user"; content: string | ChatContentPart[] }
  | ChatAssistantMessage
  | { role: "tool"; tool_call_id: string; content: string };

export interface ChatTool {
  type: "function";
  function: { name: string; description?: string; parameters: unknown };
}

export interface ChatParams {
  model: string;
  messages: ChatMessage[];
  max_tokens?: number;
  max_completion_tokens?: number;
  tools?: ChatTool[];
  stream?: boolean;
  stream_options?: { include_usage: boolean };
}

export interface ChatUsage {
  prompt_tokens?: number;
  completion_tokens?: number;
  prompt_tokens_details?: { cached_tokens?: number } | null;
}

/** One streamed chunk; servers differ in what they leave out, so every field may be missing. */
export interface ChatChunk {
  model?: string;
  usage?: ChatUsage | null;
  choices?: Array<{
    delta?: { content?: string | null; tool_calls?: Array<{ index?: number; id?: string; function?: { name?: string; arguments?: string } }> } | null;
    finish_reason?: string | null;
  }>;
}

export interface ChatCompletion {
  choices: Array<{ message: { content?: string | null; tool_calls?: ChatToolCall[] | null } }>;
}

/** The API answered with an error: an HTTP status, or (status undefined) an error event mid-stream. */
export class ChatApiError extends Error {
  override name = "ChatApiError";
  readonly status: number | undefined;
  readonly headers: Headers | undefined;
  /** The body's `error` (`{message, type, code}` as OpenAI and Ollama send it), else the body. */
  readonly error: unknown;
  readonly type: string | null;
  /** The API's own words: its error's message, else the body's text (a proxy's page). */
  readonly apiMessage: string | null;
  constructor(status: number | undefined, error: unknown, headers: Headers | undefined, text?: string) {
    const said = messageOf(error) ?? (text?.trim() || null);
    super(status === undefined ? (said ?? "(no message)") : `${status} ${said ?? "(no body)"}`);
    this.apiMessage = said;
    this.status = status;
    this.headers = headers;
    this.error = error;
    const type = (error as { type?: unknown } | null)?.type;
    this.type = typeof type === "string" ? type : null;
  }
}

/** The request never got an answer (refused, DNS, reset, timed out): `cause` says why. */
export class ChatConnectionError extends Error {
  override name = "ChatConnectionError";
}

/** The caller aborted the request. */
export class ChatAbortError extends Error {
  override name = "ChatAbortError";
}

export const chatApiErrors: SdkErrors = { APIError: ChatApiError, APIConnectionError: ChatConnectionError, APIUserAbortError: ChatAbortError };

export interface ChatApiOptions {
  /** Absent: no Authorization header (Ollama, LM Studio and vLLM take no key). */
  apiKey?: string | undefined;
  /** Up to the version segment: "https://api.openai.com/v1", "http://127.0.0.1:11434/v1". */
  baseURL: string;
  /** Sent with every request, after (and so over) Hearth's own. */
  headers?: Record<string, string> | undefined;
}

export class ChatApi {
  readonly baseURL: string;
  readonly #o: ChatApiOptions;

  constructor(o: ChatApiOptions) {
    this.#o = o;
    this.baseURL = o.baseURL;
  }

  /** Streams a completion's chunks; ends at `[DONE]` or when the server closes the stream. */
  async *streamChat(params: ChatParams, signal: AbortSignal): AsyncGenerator<ChatChunk> {
    const res = await this.#request("POST", "/chat/completions", { ...params, stream: true }, signal);
    if (!res.body) return;
    for await (const event of readEvents(res.body)) {
      if (event.data.startsWith("[DONE]")) return;
      const data = parseJson(event.data);
      if (data === undefined) throw new Error(`the model stream sent an event that is not JSON: ${event.data.slice(0, 200)}`);
      const error = (data as { error?: unknown } | null)?.error;
      if (event.event === "error" || error) throw new ChatApiError(undefined, error ?? data, res.headers);
      yield data as ChatChunk;
    }
  }

  /** One whole completion. */
  async createChat(params: ChatParams, signal?: AbortSignal): Promise<ChatCompletion> {
    const res = await this.#request("POST", "/chat/completions", { ...params, stream: false }, signal);
    return (await res.json()) as ChatCompletion;
  }

  /** The ids of the models the endpoint lists. */
  async listModels(signal?: AbortSignal): Promise<string[]> {
    const res = await this.#request("GET", "/models", undefined, signal);
    const body = (await res.json()) as { data?: Array<{ id?: unknown }> };
    return (body.data ?? []).flatMap((m) => (typeof m.id === "string" ? [m.id] : []));
  }

  async #request(method: "GET" | "POST", path: string, body: unknown, signal: AbortSignal | undefined): Promise<Response> {
    const headers = new Headers({ accept: "application/json" });
    if (body !== undefined) headers.set("content-type", "application/json");
    if (this.#o.apiKey) headers.set("authorization", `Bearer ${this.#o.apiKey}`);
    for (const [k, v] of Object.entries(this.#o.headers ?? {})) headers.set(k, v);
    let res: Response;
    try {
      res = await fetch(`${this.baseURL.replace(/\/+$/, "")}${path}`, { method, headers, ...(body !== undefined ? { body: JSON.stringify(body) } : {}), ...(signal ? { signal } : {}) });
    } catch (err) {
      if (signal?.aborted) {
        if ((signal.reason as Error | undefined)?.name === "TimeoutError") throw new ChatConnectionError("Request timed out.", { cause: err });
        throw new ChatAbortError("The request was aborted.", { cause: err });
      }
      throw new ChatConnectionError("Connection error.", { cause: err });
    }
    if (!res.ok) {
      const text = await res.text().catch(() => "");
      const json = parseJson(text) as { error?: unknown } | undefined;
      throw new ChatApiError(res.status, json === undefined ? undefined : (json?.error ?? json), res.headers, text);
    }
    return res;
  }
}

/** Server-sent events: each event's `event` field and its `data` lines joined; comments skipped. */
async function* readEvents(body: ReadableStream<Uint8Array>): AsyncGenerator<{ event: string | null; data: string }> {
  const decoder = new TextDecoder();
  let buffer = "";
  let event: string | null = null;
  let data: string[] = [];
  const take = function* (line: string): Generator<{ event: string | null; data: string }> {
    if (line === "") {
      if (data.length > 0) yield { event, data: data.join("\n") };
      event = null;
      data = [];
      return;
    }
    if (line.startsWith(":")) return; // a comment: the keep-alives some servers send
    const colon = line.indexOf(":");
    const field = colon === -1 ? line : line.slice(0, colon);
    const value = colon === -1 ? "" : line.slice(colon + 1).replace(/^ /, "");
    if (field === "data") data.push(value);
    else if (field === "event") event = value;
  };
  for await (const bytes of body) {
    buffer += decoder.decode(bytes, { stream: true });
    for (let nl = buffer.indexOf("\n"); nl !== -1; nl = buffer.indexOf("\n")) {
      const line = buffer.slice(0, nl).replace(/\r$/, "");
      buffer = buffer.slice(nl + 1);
      yield* take(line);
    }
  }
  // A stream may end without the blank line after its last event.
  buffer += decoder.decode();
  if (buffer) yield* take(buffer.replace(/\r$/, ""));
  yield* take("");
}

function parseJson(text: string): unknown {
  try {
    return JSON.parse(text) as unknown;
  } catch {
    return undefined;
  }
}

function messageOf(error: unknown): string | undefined {
  if (typeof error === "string") return error;
  const message = (error as { message?: unknown } | null | undefined)?.message;
  if (typeof message === "string") return message;
  return error === undefined || error === null ? undefined : JSON.stringify(error);
}
