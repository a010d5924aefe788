/**
 * The provider's web tools as the fake model makes them (fake-model.ts): a scripted fetch or
 * search becomes the `server_tool_use` block and its result block the API would send, made
 * against the request's tool definitions — a page cut at the web_fetch tool's
 * `max_content_tokens`, uses past a tool's `max_uses` answered with `max_uses_exceeded` — and
 * billed as the API bills them: each result's tokens (4 characters a token) once for every later
 * step of the message.
 */
import type { ServerContentBlock } from "./fake-model.ts";

export type FetchBlock = { fetch: { url: string; page: string } };
export type SearchBlock = { search: { query: string; results: Array<{ url: string; title: string; content: string }> } };

/** One use, in order: which tool, and the tokens its result brought (0 for an error). */
export interface WebUse {
  tool: "web_fetch" | "web_search";
  tokens: number;
}

/** The blocks of one use after `before`; null when the request offers no such tool (the model cannot call it). */
export function webUse(block: FetchBlock | SearchBlock, body: unknown, before: readonly WebUse[], nextId: (prefix: string) => string): { blocks: ServerContentBlock[]; use: WebUse } | null {
  const name = "fetch" in block ? "web_fetch" : "web_search";
  const def = toolDefinition(body, name);
  if (!def) return null;
  const id = nextId("srvtoolu");
  const input = "fetch" in block ? { url: block.fetch.url } : { query: block.search.query };
  const use: ServerContentBlock = { type: "server_tool_use", id, name, input, caller: { type: "direct" } };
  const resultType = `${name}_tool_result`;
  const result = (content: unknown): ServerContentBlock => ({ type: resultType, tool_use_id: id, caller: { type: "direct" }, content });
  const made = before.filter((u) => u.tool === name && u.tokens > 0).length;
  if (typeof def.max_uses === "number" && made >= def.max_uses) {
    return { blocks: [use, result({ type: `${resultType}_error`, error_code: "max_uses_exceeded" })], use: { tool: name, tokens: 0 } };
  }
  if ("fetch" in block) {
    const cut = typeof def.max_content_tokens === "number" ? block.fetch.page.slice(0, def.max_content_tokens * 4) : block.fetch.page;
    const document = { type: "document", source: { type: "text", media_type: "text/plain", data: cut }, title: null, citations: null };
    const fetched = { type: "web_fetch_result", url: block.fetch.url, retrieved_at: "2026-11-23T10:00:00Z", content: document };
    return { blocks: [use, result(fetched)], use: { tool: name, tokens: Math.max(1, Math.ceil(cut.length / 4)) } };
  }
  const results = block.search.results.map((r) => ({ type: "web_search_result", url: r.url, title: r.title, encrypted_content: r.content, page_age: null }));
  const chars = block.search.results.reduce((n, r) => n + r.content.length, 0);
  return { blocks: [use, result(results)], use: { tool: name, tokens: Math.max(1, Math.ceil(chars / 4)) } };
}

/** The input tokens the uses add: the k-th of n is read again by every later step, n - k + 1 of them (k from 1). */
export const webInputTokens = (uses: readonly WebUse[]): number => uses.reduce((sum, u, k) => sum + u.tokens * (uses.length - k), 0);

/** `usage.server_tool_use` for the uses made (an error is not a request); null, as the API sends it, without any. */
export function webRequests(uses: readonly WebUse[]): { web_search_requests: number; web_fetch_requests: number } | null {
  const made = uses.filter((u) => u.tokens > 0);
  if (made.length === 0) return null;
  return { web_search_requests: made.filter((u) => u.tool === "web_search").length, web_fetch_requests: made.filter((u) => u.tool === "web_fetch").length };
}

function toolDefinition(body: unknown, name: string): Record<string, unknown> | undefined {
  const tools: unknown = typeof body === "object" && body !== null ? (body as Record<string, unknown>).tools : undefined;
  if (!Array.isArray(tools)) return undefined;
  return tools.find((t): t is Record<string, unknown> => typeof t === "object" && t !== null && t.name === name && typeof t.type === "string" && t.type.startsWith(`${name}_`));
}
