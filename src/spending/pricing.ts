// What a model call cost, in US dollars, from list prices per million tokens. Known models are
// priced by id (the longest matching prefix wins, so dated ids such as
// "claude-haiku-4-5-20251001" match "claude-haiku-4-5"); config `pricing` overrides or adds
// entries. The bill is the provider's: this is what Hearth keeps its budgets with.
import ipaddr from "ipaddr.js";
import type { Usage } from "../agent/messages.ts";
import { PROVIDER_PRESETS, splitModelName } from "../agent/providers/presets.ts";
import { heartbeatModel } from "../config/config.ts";
import type { Config } from "../config/schema.ts";

/** USD per million tokens; cache prices default from `input` as the API's list prices do. */
export interface ModelPrice {
  input: number;
  output: number;
  /** Cache write with the 5-minute TTL; default 1.25 × input. */
  cacheWrite5m?: number;
  /** Cache write with the 1-hour TTL; default 2 × input. */
  cacheWrite1h?: number;
  /** Cache read; default 0.1 × input. */
  cacheRead?: number;
}

/** Model id or id prefix → price. */
export type PricingTable = Record<string, ModelPrice>;

/** USD per web search request ($10 per 1,000). */
export const WEB_SEARCH_USD = 0.01;

/** List prices of the models Hearth knows (USD per million tokens). */
export const KNOWN_MODELS: PricingTable = {
  "claude-opus-4-5": { input: 5, output: 25 },
  "claude-opus-4-1": { input: 15, output: 75 },
  "claude-opus-4-0": { input: 15, output: 75 },
  "claude-opus-4-2025": { input: 15, output: 75 },
  "claude-3-opus": { input: 15, output: 75 },
  "claude-sonnet-4": { input: 3, output: 15 },
  "claude-3-7-sonnet": { input: 3, output: 15 },
  "claude-3-5-sonnet": { input: 3, output: 15 },
  "claude-haiku-4-5": { input: 1, output: 5 },
  "claude-3-5-haiku": { input: 0.8, output: 4 },
  "claude-3-haiku": { input: 0.25, output: 1.25 },
};

// Models newer than the table are priced like their family's current list price.
const FAMILIES: Array<[RegExp, ModelPrice]> = [
  [/opus/, { input: 5, output: 25 }],
  [/haiku/, { input: 1, output: 5 }],
  [/sonnet/, { input: 3, output: 15 }],
];
const UNKNOWN: ModelPrice = { input: 3, output: 15 };

/** The price of `model`: an override, else the known table, else its family, else Sonnet's. */
export function priceOf(model: string, overrides: PricingTable = {}): ModelPrice {
  return longestPrefix(model, overrides) ?? longestPrefix(model, KNOWN_MODELS) ?? FAMILIES.find(([re]) => re.test(model))?.[1] ?? UNKNOWN;
}

/** What one call with `usage` on `model` cost, in USD. */
export function priceUsage(model: string, usage: Usage, overrides: PricingTable = {}): number {
  const p = priceOf(model, overrides);
  const write1h = usage.cacheCreation1hTokens ?? 0;
  const write5m = usage.cacheCreation5mTokens ?? Math.max(0, usage.cacheCreationTokens - write1h);
  const perMillion =
    usage.inputTokens * p.input +
    usage.outputTokens * p.output +
    write5m * (p.cacheWrite5m ?? p.input * 1.25) +
    write1h * (p.cacheWrite1h ?? p.input * 2) +
    usage.cacheReadTokens * (p.cacheRead ?? p.input * 0.1);
  return perMillion / 1_000_000 + (usage.webSearchRequests ?? 0) * WEB_SEARCH_USD;
}

/** What a model call may use at most, as far as it is known before it is sent. */
export interface CallBound {
  /** The request's input, estimated as the context budget estimates it. */
  inputTokens: number;
  /** Its `max_tokens`: no answer (thinking included) is longer. */
  maxTokens: number;
  /** The TTL its cache breakpoints write with, or false for a request that writes no cache entry. */
  cache: "5m" | "1h" | false;
  /** The provider's web searches it may make (the search tool's `max_uses`). */
  webSearches: number;
  /** The provider's web fetches it may make (the fetch tool's `max_uses`); absent: none. */
  webFetches?: number;
  /** The most one fetch brings into the call (the fetch tool's `max_content_tokens`). */
  fetchTokens?: number;
}

/**
 * What one provider web search's results are counted as, in input tokens. No parameter of the
 * API bounds them: this is an estimate that errs high (a page of results is a few thousand).
 */
export const WEB_SEARCH_RESULT_TOKENS = 20_000;

/**
 * The most input tokens the provider's web tools can add to one call. Inside the call the model
 * may use them one after another, and each step after a result reads it again: the provider bills
 * a result once for every later step of the same call. The dearest order is the largest results
 * first, the k-th of n uses then billed n - k + 1 times.
 */
export function serverContentTokens(call: CallBound): number {
  const sizes = [...Array<number>(call.webFetches ?? 0).fill(call.fetchTokens ?? 0), ...Array<number>(call.webSearches).fill(WEB_SEARCH_RESULT_TOKENS)].sort((a, b) => b - a);
  return sizes.reduce((sum, size, k) => sum + size * (sizes.length - k), 0);
}

/**
 * The most one model call can cost (reservations.ts): its input at the dearest rate an input
 * token of it can be billed at (a cache write of its TTL when it writes the cache), what its web
 * tools may bring in (serverContentTokens, at the input price), its `max_tokens` of output and
 * its searches' fee, on the dearest of `models` (the model and the fallbacks the client may turn
 * to). A cache read or plain input costs less than a write, so an input under-estimated by less
 * than that difference (a fifth for 5-minute writes) still fits.
 */
export function worstCallUsd(models: readonly string[], call: CallBound, overrides: PricingTable = {}): number {
  const content = serverContentTokens(call);
  let worst = 0;
  for (const model of models) {
    const p = priceOf(model, overrides);
    const write = call.cache === "1h" ? (p.cacheWrite1h ?? p.input * 2) : (p.cacheWrite5m ?? p.input * 1.25);
    const inputRate = call.cache === false ? p.input : Math.max(p.input, write);
    worst = Math.max(worst, (call.inputTokens * inputRate + content * p.input + call.maxTokens * p.output) / 1_000_000);
  }
  return worst + call.webSearches * WEB_SEARCH_USD;
}

/** Kept for the session index's day total; the usage ledger is the record. */
export const estimateCostUsd = (model: string, usage: Usage): number => priceUsage(model, usage);

function longestPrefix(model: string, table: PricingTable): ModelPrice | undefined {
  let best: string | undefined;
  for (const key of Object.keys(table)) if (model.startsWith(key) && (best === undefined || key.length > best.length)) best = key;
  return best === undefined ? undefined : table[best];
}

/**
 * The pricing table a config implies: the prices given under `providers.<name>.models.<id>`, a
 * local server's models (`ollama`, `lmstudio`, `vllm`, or any provider without a key whose address
 * is on this machine) at zero, then `pricing` on top. Usage records carry the API's model id, so
 * entries are keyed by it.
 */
export function pricingFor(config: Config): PricingTable {
  const table: PricingTable = {};
  const names = [config.model.name, ...config.model.fallbacks, heartbeatModel(config), config.compaction.model ?? ""].filter((n) => n.includes("/"));
  for (const name of names) {
    const { provider, model } = splitModelName(name);
    if (isLocalProvider(config, provider)) table[model] = { input: 0, output: 0 };
  }
  for (const [provider, settings] of Object.entries(config.providers)) {
    for (const [id, spec] of Object.entries(settings.models ?? {})) {
      if (spec.pricing) table[id] = { input: spec.pricing.input, output: spec.pricing.output };
      else if (isLocalProvider(config, provider)) table[id] = { input: 0, output: 0 };
    }
  }
  return { ...table, ...config.pricing };
}

function isLocalProvider(config: Config, provider: string): boolean {
  const baseUrl = config.providers[provider]?.baseUrl ?? PROVIDER_PRESETS[provider]?.baseUrl;
  if (!baseUrl || provider === "anthropic") return false;
  const host = new URL(baseUrl).hostname;
  return host === "localhost" || host === "::1" || host === "[::1]" || host.startsWith("127.");
}

/**
 * List prices of transcription models, USD per minute of audio (the longest matching prefix
 * wins): OpenAI's, and Groq's (given per hour: $0.111, $0.04 and $0.02).
 */
export const KNOWN_TRANSCRIPTION_MODELS: Record<string, number> = {
  "whisper-1": 0.006,
  "gpt-4o-transcribe": 0.006,
  "gpt-4o-mini-transcribe": 0.003,
  "whisper-large-v3": 0.111 / 60,
  "whisper-large-v3-turbo": 0.04 / 60,
  "distil-whisper": 0.02 / 60,
};

/**
 * USD per minute of audio for `media.transcription`: its `pricing.perMinuteUsd`; else 0 for a
 * server on this machine or the local network (a loopback or private base URL); else the known
 * price of the model; else whisper-1's, the dearest known (a budget errs on the side of counting).
 */
export function transcriptionPricePerMinute(t: { baseUrl: string; model: string; pricing?: { perMinuteUsd: number } | undefined } | undefined): number {
  if (!t) return 0;
  if (t.pricing) return t.pricing.perMinuteUsd;
  if (isLocalAddress(new URL(t.baseUrl).hostname)) return 0;
  let best: string | undefined;
  for (const key of Object.keys(KNOWN_TRANSCRIPTION_MODELS)) if (t.model.startsWith(key) && (best === undefined || key.length > best.length)) best = key;
  return KNOWN_TRANSCRIPTION_MODELS[best ?? "whisper-1"]!;
}

/**
 * List prices of speech models, USD per million characters spoken (the longest matching prefix
 * wins): OpenAI's tts-1 and tts-1-hd; gpt-4o-mini-tts is billed by tokens (about $0.015 a
 * minute), counted here as tts-1's per-character price, which comes to about the same.
 */
export const KNOWN_SPEECH_MODELS: Record<string, number> = {
  "tts-1": 15,
  "tts-1-hd": 30,
  "gpt-4o-mini-tts": 15,
};

/**
 * USD per million characters for `voice.tts`: its `pricing.perMillionCharsUsd`; else 0 for a
 * server on this machine or the local network; else the known price of the model; else
 * tts-1-hd's, the dearest known.
 */
export function speechPricePerMillionChars(t: { baseUrl: string; model: string; pricing?: { perMillionCharsUsd: number } | undefined } | undefined): number {
  if (!t) return 0;
  if (t.pricing) return t.pricing.perMillionCharsUsd;
  if (isLocalAddress(new URL(t.baseUrl).hostname)) return 0;
  let best: string | undefined;
  for (const key of Object.keys(KNOWN_SPEECH_MODELS)) if (t.model.startsWith(key) && (best === undefined || key.length > best.length)) best = key;
  return KNOWN_SPEECH_MODELS[best ?? "tts-1-hd"]!;
}

/** List prices of embedding models, USD per million tokens (the longest matching prefix wins). */
export const KNOWN_EMBEDDING_MODELS: Record<string, number> = {
  "text-embedding-3-small": 0.02,
  "text-embedding-3-large": 0.13,
  "text-embedding-ada-002": 0.1,
};

/**
 * USD per million tokens for `memory.embeddings`: its `pricing.perMillionTokensUsd`; else 0 for a
 * server on this machine or the local network (Ollama); else the known price of the model; else
 * text-embedding-3-large's, the dearest known.
 */
export function embeddingPricePerMillionTokens(e: { baseUrl: string; model: string; pricing?: { perMillionTokensUsd: number } | undefined } | undefined): number {
  if (!e) return 0;
  if (e.pricing) return e.pricing.perMillionTokensUsd;
  if (isLocalAddress(new URL(e.baseUrl).hostname)) return 0;
  let best: string | undefined;
  for (const key of Object.keys(KNOWN_EMBEDDING_MODELS)) if (e.model.startsWith(key) && (best === undefined || key.length > best.length)) best = key;
  return KNOWN_EMBEDDING_MODELS[best ?? "text-embedding-3-large"]!;
}

/** Brave Search API's list price, USD per 1,000 requests. */
export const BRAVE_SEARCH_PER_THOUSAND_USD = 5;

/**
 * What 1,000 of Hearth's own web searches cost: `tools.web.search.pricing`, else Brave's list
 * price, and nothing for SearXNG (your own instance). Fetching a page costs nothing.
 */
export function localSearchPricePerThousand(search: { provider: "brave" | "searxng"; pricing?: { perThousandUsd: number } | undefined }): number {
  if (search.pricing) return search.pricing.perThousandUsd;
  return search.provider === "brave" ? BRAVE_SEARCH_PER_THOUSAND_USD : 0;
}

/** A host name for this machine, or an address on it or on a private network. */
function isLocalAddress(hostname: string): boolean {
  const host = hostname.toLowerCase().replace(/^\[(.*)\]$/, "$1");
  if (host === "localhost" || host.endsWith(".localhost")) return true;
  if (!ipaddr.isValid(host)) return false;
  return ["loopback", "private", "uniqueLocal", "linkLocal"].includes(ipaddr.process(host).range());
}
