// The size of one model call. What a call can cost is bounded by what it asks for: its input
// (estimated before it is sent), its `max_tokens` of output, and what the provider's web tools
// may bring in — `max_uses` of each, each fetched page cut at `max_content_tokens`, each search's
// results at an estimate (pricing.ts serverContentTokens). The request is sent with those bounds
// set, so the reservation holds the most the call can cost. When the whole does not fit what the
// limits leave, the call asks for less instead of being refused: the web tools get at most half
// of what is left after the input and a short answer, and the answer the rest. It is refused only
// when not even its input and a short answer fit.
import type { ModelRequest, ServerToolDefinition } from "../agent/providers/model.ts";
import { worstCallUsd, type CallBound, type PricingTable } from "./pricing.ts";

/** The shortest answer a call is worth making for, in output tokens (or `maxTokens`, if smaller). */
export const SHORT_ANSWER_TOKENS = 1_024;
/** A fetched page is not cut shorter than this; below it the fetch tool is left out. */
export const MIN_FETCH_TOKENS = 1_024;
/** A fetch tool defined without `max_content_tokens` is sent with this (100,000 characters). */
export const DEFAULT_FETCH_TOKENS = 25_000;
/** A server tool defined without `max_uses` is counted, and sent, with the most config allows. */
const MOST_USES = 50;

/** The models a call may reach (its own, its fallbacks) and their prices. */
export interface CallPrice {
  models: readonly string[];
  pricing: PricingTable;
}

/** What `req` asks for as it is: its `max_tokens`, its input (`inputTokens`, estimated) and its web tools' bounds. */
export function boundOf(req: ModelRequest, inputTokens: number): CallBound {
  const fetch = serverTool(req, "web_fetch");
  const search = serverTool(req, "web_search");
  return {
    inputTokens,
    maxTokens: req.maxTokens,
    cache: req.cache === false ? false : (req.cacheTtl ?? "5m"),
    webSearches: search ? usesOf(search) : 0,
    ...(fetch ? { webFetches: usesOf(fetch), fetchTokens: positive(fetch.max_content_tokens) ?? DEFAULT_FETCH_TOKENS } : {}),
  };
}

/** Its input and a short answer, no web tools: the least a call is made with. */
export function leastBound(full: CallBound): CallBound {
  return { inputTokens: full.inputTokens, maxTokens: Math.min(full.maxTokens, SHORT_ANSWER_TOKENS), cache: full.cache, webSearches: 0 };
}

/**
 * The most of `full` whose worst case (pricing.ts worstCallUsd) is at most `usd`: `full` itself
 * when it fits; else web tools cut down (fewer uses, then no search, then shorter pages, then no
 * fetch) to half of what is left after the input and a short answer, and the longest answer that
 * fits beside them. null when not even leastBound fits.
 */
export function fitBound(full: CallBound, usd: number, price: CallPrice): CallBound | null {
  const cost = (b: CallBound) => worstCallUsd(price.models, b, price.pricing);
  if (cost(full) <= usd) return full;
  const least = leastBound(full);
  if (cost(least) > usd) return null;
  const toolsUsd = cost(least) + (usd - cost(least)) / 2;
  const tools = shrinkTools({ ...full, maxTokens: least.maxTokens }, (b) => cost(b) <= toolsUsd);
  // The longest answer beside them: cost grows with maxTokens, so a binary search finds it.
  let lo = least.maxTokens;
  let hi = full.maxTokens;
  while (lo < hi) {
    const mid = Math.ceil((lo + hi) / 2);
    if (cost({ ...tools, maxTokens: mid }) <= usd) lo = mid;
    else hi = mid - 1;
  }
  return { ...tools, maxTokens: lo };
}

function shrinkTools(b: CallBound, fits: (b: CallBound) => boolean): CallBound {
  let fetches = b.webFetches ?? 0;
  let tokens = b.fetchTokens ?? 0;
  let searches = b.webSearches;
  const now = (): CallBound => ({ ...b, webSearches: searches, ...(fetches > 0 ? { webFetches: fetches, fetchTokens: tokens } : { webFetches: 0 }) });
  while (!fits(now()) && (fetches > 1 || searches > 1)) {
    if (searches >= fetches) searches--;
    else fetches--;
  }
  if (!fits(now())) searches = 0;
  // Pages shorter by powers of two: a few sizes only, so the tool definitions (part of the cached
  // prefix) change rarely as the day's spending grows.
  while (!fits(now()) && fetches > 0 && tokens > MIN_FETCH_TOKENS) tokens = Math.max(MIN_FETCH_TOKENS, 2 ** Math.floor(Math.log2(tokens - 1)));
  if (!fits(now())) fetches = 0;
  return now();
}

/**
 * `req` asking for `bound`: its `max_tokens`, and its web tools' `max_uses` (and the fetch's
 * `max_content_tokens`) set to it, a tool with no use left out. Other server tools are unchanged.
 */
export function withBound(req: ModelRequest, bound: CallBound): ModelRequest {
  const { serverTools, ...rest } = req;
  const tools: ServerToolDefinition[] = [];
  for (const t of serverTools ?? []) {
    if (t.name === "web_fetch") {
      if ((bound.webFetches ?? 0) > 0) tools.push({ ...t, max_uses: bound.webFetches, max_content_tokens: bound.fetchTokens ?? DEFAULT_FETCH_TOKENS });
    } else if (t.name === "web_search") {
      if (bound.webSearches > 0) tools.push({ ...t, max_uses: bound.webSearches });
    } else tools.push(t);
  }
  return { ...rest, maxTokens: bound.maxTokens, ...(tools.length > 0 ? { serverTools: tools } : {}) };
}

const serverTool = (req: ModelRequest, name: string) => req.serverTools?.find((t) => t.name === name);
const usesOf = (t: ServerToolDefinition): number => Math.min(positive(t.max_uses) ?? MOST_USES, MOST_USES);
const positive = (v: unknown): number | undefined => (typeof v === "number" && Number.isInteger(v) && v > 0 ? v : undefined);
