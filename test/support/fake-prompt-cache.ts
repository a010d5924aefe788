/**
 * The provider's prompt cache, simulated for the fake model: what a request reads from the
 * cache, writes to it and pays as plain input, computed from its `cache_control` breakpoints the
 * way the Messages API documents it.
 *
 * - The request is a sequence of blocks in cache order: tools, system blocks, then each message's
 *   content blocks. A breakpoint caches the prefix that ends with its block.
 * - A read is the longest cached, unexpired prefix that ends within the 20 blocks before (and
 *   at) any breakpoint of the request; a hit refreshes the entry's lifetime.
 * - Every breakpoint after the read position writes its prefix, with its own TTL ("5m" default,
 *   or "1h"); the blocks between two breakpoints are written at the later one's TTL. A prefix
 *   shorter than the model's minimum is neither written nor read (the API caches nothing then).
 * - Entries are per model. Tokens are estimated at about 4 characters each: text blocks by their
 *   text, other blocks by their JSON without cache_control.
 */
import { createHash, type Hash } from "node:crypto";

export interface PromptCacheOptions {
  /** Time as the cache sees it (ms); a benchmark passes a fake clock to simulate a day. */
  clock: () => number;
  /** The shortest cacheable prefix in tokens; default minimumCacheableTokens. */
  minTokens?: (model: string) => number;
}

/** What one request read, wrote and paid as plain input, in tokens. */
export interface CacheUsage {
  input: number;
  read: number;
  write5m: number;
  write1h: number;
}

const TTL_MS = { "5m": 5 * 60_000, "1h": 60 * 60_000 } as const;
type Ttl = keyof typeof TTL_MS;
const LOOKBACK_BLOCKS = 20;

/** Published minimums (November 2026): Haiku 4.5 and Opus 4.5/4.6 4,096; Haiku 3.x 2,048; the others 1,024. */
export function minimumCacheableTokens(model: string): number {
  if (/haiku-4|opus-4-[56]/.test(model)) return 4096;
  if (/haiku-3/.test(model)) return 2048;
  return 1024;
}

interface Block {
  tokens: number;
  ttl: Ttl | null;
  /** Hash of the prefix through this block. */
  key: string;
}

export class PromptCache {
  readonly #clock: () => number;
  readonly #minTokens: (model: string) => number;
  readonly #entries = new Map<string, { expiresAt: number; ttl: Ttl }>();

  constructor(opts: PromptCacheOptions) {
    this.#clock = opts.clock;
    this.#minTokens = opts.minTokens ?? minimumCacheableTokens;
  }

  /** Accounts one request and updates the cache as the API would. */
  use(body: unknown): CacheUsage {
    const now = this.#clock();
    const req = (body ?? {}) as { model?: unknown; tools?: unknown; system?: unknown; messages?: unknown };
    const model = typeof req.model === "string" ? req.model : "";
    const blocks = blocksOf(model, req);
    const total = blocks.reduce((n, b) => n + b.tokens, 0);
    const prefix: number[] = [];
    blocks.reduce((n, b, i) => (prefix[i] = n + b.tokens), 0);
    const min = this.#minTokens(model);
    const breakpoints = blocks.flatMap((b, i) => (b.ttl ? [i] : []));

    // The read: the longest live prefix within the lookback window of some breakpoint.
    let readAt = -1;
    for (const bp of breakpoints) {
      for (let i = bp; i >= Math.max(0, bp - LOOKBACK_BLOCKS + 1); i--) {
        if (i <= readAt) break;
        const e = this.#entries.get(blocks[i]!.key);
        if (e && e.expiresAt > now && prefix[i]! >= min) {
          readAt = i;
          break;
        }
      }
    }
    if (readAt >= 0) {
      const e = this.#entries.get(blocks[readAt]!.key)!;
      e.expiresAt = now + TTL_MS[e.ttl];
    }

    // The writes: each breakpoint after the read position whose prefix is long enough.
    let write5m = 0;
    let write1h = 0;
    let from = readAt + 1;
    for (const bp of breakpoints) {
      if (bp <= readAt || prefix[bp]! < min) continue;
      const ttl = blocks[bp]!.ttl!;
      let tokens = 0;
      for (let i = from; i <= bp; i++) tokens += blocks[i]!.tokens;
      if (ttl === "1h") write1h += tokens;
      else write5m += tokens;
      from = bp + 1;
      const existing = this.#entries.get(blocks[bp]!.key);
      const ttlMs = Math.max(TTL_MS[ttl], existing && existing.expiresAt > now ? existing.expiresAt - now : 0);
      this.#entries.set(blocks[bp]!.key, { expiresAt: now + ttlMs, ttl });
    }
    const read = readAt >= 0 ? prefix[readAt]! : 0;
    return { input: total - read - write5m - write1h, read, write5m, write1h };
  }
}

function blocksOf(model: string, req: { tools?: unknown; system?: unknown; messages?: unknown }): Block[] {
  const raw: unknown[] = [];
  if (Array.isArray(req.tools)) raw.push(...req.tools);
  if (typeof req.system === "string") raw.push({ type: "text", text: req.system });
  else if (Array.isArray(req.system)) raw.push(...req.system);
  for (const m of Array.isArray(req.messages) ? req.messages : []) {
    const content = (m as { role?: string; content?: unknown }).content;
    const role = (m as { role?: string }).role ?? "user";
    // The role is part of what the model reads: two messages with the same blocks but other roles differ.
    if (typeof content === "string") raw.push({ type: "text", text: content, role });
    else if (Array.isArray(content)) content.forEach((b, i) => raw.push(i === 0 ? { ...(b as object), role } : b));
  }
  const hash: Hash = createHash("sha256").update(model);
  return raw.map((b) => {
    const { cache_control: cc, ...rest } = b as { cache_control?: { ttl?: string }; type?: string; text?: unknown };
    const json = JSON.stringify(rest);
    hash.update(json);
    const chars = rest.type === "text" && typeof rest.text === "string" ? rest.text.length : json.length;
    return { tokens: Math.max(1, Math.ceil(chars / 4)), ttl: cc ? (cc.ttl === "1h" ? "1h" : "5m") : null, key: hash.copy().digest("hex") };
  });
}
