// Hearth's own conversation records. They are what transcripts store and what the agent loop
// works on; each provider has exactly one function (providers/<name>/request.ts) that turns them
// into its API's messages.

export type Scope = "main" | "shared";

export interface Usage {
  inputTokens: number;
  outputTokens: number;
  cacheReadTokens: number;
  /** All cache writes, whatever their TTL. */
  cacheCreationTokens: number;
  /**
   * The part of `cacheCreationTokens` written with the 5-minute / 1-hour TTL, when the API
   * reports the split (`usage.cache_creation`). Absent: all of it counts as 5-minute writes.
   */
  cacheCreation5mTokens?: number;
  cacheCreation1hTokens?: number;
  /** Server-side web searches the call made (`usage.server_tool_use.web_search_requests`). */
  webSearchRequests?: number;
  /** Server-side web fetches (`usage.server_tool_use.web_fetch_requests`); no fee beyond tokens. */
  webFetchRequests?: number;
  /** Hearth's own web_search / web_fetch uses (no model call; a search API may bill the owner itself). */
  localWebSearches?: number;
  localWebFetches?: number;
}

export const emptyUsage = (): Usage => ({ inputTokens: 0, outputTokens: 0, cacheReadTokens: 0, cacheCreationTokens: 0 });

export function addUsage(a: Usage, b: Usage): Usage {
  const sum: Usage = {
    inputTokens: a.inputTokens + b.inputTokens,
    outputTokens: a.outputTokens + b.outputTokens,
    cacheReadTokens: a.cacheReadTokens + b.cacheReadTokens,
    cacheCreationTokens: a.cacheCreationTokens + b.cacheCreationTokens,
  };
  for (const k of ["cacheCreation5mTokens", "cacheCreation1hTokens", "webSearchRequests", "webFetchRequests", "localWebSearches", "localWebFetches"] as const) {
    if (a[k] !== undefined || b[k] !== undefined) sum[k] = (a[k] ?? 0) + (b[k] ?? 0);
  }
  return sum;
}

/** Tokens the model had in its context for one request: fresh input plus cached input. */
export const contextTokens = (u: Usage): number => u.inputTokens + u.cacheReadTokens + u.cacheCreationTokens;

export interface TextBlock {
  type: "text";
  text: string;
  /** The API's citations of server-tool results (web search), kept verbatim to be sent back. */
  citations?: unknown[];
}

export interface ToolCallBlock {
  type: "tool_call";
  id: string;
  name: string;
  input: unknown;
}

/** Extended thinking, kept verbatim (with its signature) so it can be sent back unchanged. */
export interface ThinkingBlock {
  type: "thinking";
  thinking: string;
  signature: string;
}

/**
 * A block of a provider-side ("server") tool: `server_tool_use`, `web_search_tool_result`,
 * `web_fetch_tool_result`. Opaque to Hearth: `raw` is the API's block, stored and sent back unchanged.
 */
export interface ServerBlock {
  type: "server";
  raw: { type: string; [field: string]: unknown };
}

export type AssistantBlock = TextBlock | ToolCallBlock | ThinkingBlock | ServerBlock;

/**
 * Why a user-role message exists. `message` is someone talking to Hearth; the others are
 * written by Hearth itself and are rendered to the model as such.
 */
export type UserMessageKind = "message" | "steer" | "nudge" | "system";

export interface UserMessage {
  role: "user";
  kind: UserMessageKind;
  text: string;
  /** Files that came with the message, by reference (the request builder loads the bytes). */
  media?: MediaRef[];
  /** Set by a compaction: user turns are counted from here for which attachments are shown (media-view.ts). */
  mediaOrigin?: true;
  /** The inbox entry this turn carries (a chat message), so it can be marked given up later. */
  entry?: string;
  /**
   * Set when the turn carries outside content (outside-content.ts), in words for an approval
   * question: "a message from Bob". Stored with the turn, so the session stays tainted while the
   * turn is in the model's view, also after a restart. Never sent to the model.
   */
  outside?: string;
  ts: number;
}

/**
 * An attachment as the transcript keeps it: where the stored file is, never its bytes.
 * `image`: a JPEG/PNG/GIF/WebP the API accepts as is; `document`: a PDF within the API's limits;
 * `text`: a file read inline as text (a text file, or a PDF's extracted text).
 */
export interface MediaRef {
  kind: "image" | "document" | "text";
  /** The stored file, relative to the workspace (forward slashes): what placeholders and tools name. */
  path: string;
  /** Absolute path of the bytes the model gets (the stored file, or a scaled or extracted copy). */
  file: string;
  mime: string;
  /** The file name the sender gave (or one made up for a photo). */
  name: string;
  /** A line for the model about a conversion (a scaled picture, a PDF sent as text). */
  note?: string;
}

/** How an assistant message ended, from Hearth's point of view. */
export type AssistantStop =
  | "end_turn"
  | "tool_use"
  | "max_tokens"
  | "refusal"
  | "pause_turn"
  | "stop_sequence"
  | "context_window"
  | "aborted";

export interface AssistantMessage {
  role: "assistant";
  content: AssistantBlock[];
  stop: AssistantStop;
  model: string;
  usage: Usage;
  ts: number;
}

/** An image a tool returned (an MCP server's image content), base64 as the API takes it. */
export interface ImageBlock {
  type: "image";
  mediaType: string;
  data: string;
}

export interface ToolResultMessage {
  role: "tool_result";
  toolCallId: string;
  toolName: string;
  content: string;
  /** Images that follow `content` in the result; absent when there are none. */
  images?: ImageBlock[];
  isError: boolean;
  /**
   * Set when the call brought outside content in (ToolContext.tookIn), in words for an approval
   * question: "a response from evil.example:443". Stored with the result, so the session stays
   * tainted while it is in the model's view. Never sent to the model.
   */
  outside?: string;
  ts: number;
}

export type Message = UserMessage | AssistantMessage | ToolResultMessage;

export const textOf = (m: AssistantMessage): string =>
  m.content
    .filter((b): b is TextBlock => b.type === "text")
    .map((b) => b.text)
    .join("");

export const toolCallsOf = (m: AssistantMessage): ToolCallBlock[] =>
  m.content.filter((b): b is ToolCallBlock => b.type === "tool_call");
