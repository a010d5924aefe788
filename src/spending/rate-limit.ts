import { z } from "zod";
import { channelAccess } from "../channels/registry.ts";
import type { InboundMessage } from "../channels/channel.ts";
import type { Logger } from "../process/log.ts";
import { loadJsonFile, writeFileAtomic } from "../state/storage.ts";
import type { Config } from "../config/schema.ts";
import { parseDuration } from "../fields/config-fields.ts";

// Per-sender and per-chat rate limits for shared scopes (groups, paired people): a sliding
// window of accepted messages per key. Past the limit a message is refused before it reaches
// the inbox — no model call — and only the first refusal in a window is answered. The windows
// are saved to <home>/rate-limits.json half a second after a change and at shutdown, so a
// restart does not give a busy group a fresh allowance (a crash loses at most that half second).
export interface RateRule {
  /** Messages per sender per window; 0 means no limit. */
  perSender: number;
  /** Messages per chat per window; 0 means no limit. */
  perChat: number;
  windowMs: number;
}

export type RateDecision =
  | { type: "allow" }
  /** `answer`: the first refusal of this key in its window, the one that gets a polite reply. */
  | { type: "refuse"; limit: "sender" | "chat"; answer: boolean; retryInMs: number };

/** More keys than this and idle ones are forgotten (memory stays bounded in a busy server). */
const MAX_KEYS = 10_000;

/** rate-limits.json: each key's accepted-message times and when its last refusal was answered. */
const stateSchema = z.object({
  version: z.literal(1),
  hits: z.record(z.string(), z.array(z.number())),
  answeredAt: z.record(z.string(), z.number()),
});
type RateState = z.infer<typeof stateSchema>;

/** Times older than this are never kept on disk (no configured window is longer than a day in practice). */
const KEEP_MS = 24 * 60 * 60 * 1000;
const SAVE_DELAY_MS = 500;

export interface RateLimiterFile {
  path: string;
  log: Logger;
  clock: () => number;
}

/** The times newer than `since`, in the file's shape; a key with none left is dropped. */
function keptSince(hits: Iterable<[string, number[]]>, answeredAt: Iterable<[string, number]>, since: number): RateState {
  const state: RateState = { version: 1, hits: {}, answeredAt: {} };
  for (const [key, times] of hits) {
    const recent = times.filter((t) => t > since);
    if (recent.length > 0) state.hits[key] = recent;
  }
  for (const [key, at] of answeredAt) if (at > since) state.answeredAt[key] = at;
  return state;
}

/**
 * A key as rateKeysFor makes it. A file written while each topic or thread had its own windows
 * holds "c:<channel>:<chat>:<thread>" and "s:<channel>:<chat>:<thread>:<sender>": read back, a
 * thread's counts join its group's.
 */
function withoutThread(key: string): string {
  const chat = /^c:([^:]+):([^:]+):[^:]+$/.exec(key);
  if (chat) return `c:${chat[1]}:${chat[2]}:`;
  const sender = /^s:([^:]+):([^:]+):[^:]+:(.+)$/.exec(key);
  if (sender) return `s:${sender[1]}:${sender[2]}::${sender[3]}`;
  return key;
}

export class RateLimiter {
  readonly #hits = new Map<string, number[]>();
  readonly #answeredAt = new Map<string, number>();
  readonly #file: RateLimiterFile | undefined;
  #saveTimer: NodeJS.Timeout | null = null;

  /** With `file`: the windows saved there are read back, and changes are saved to it. */
  constructor(file?: RateLimiterFile) {
    this.#file = file;
    if (!file) return;
    const loaded = loadJsonFile(file.path, { schema: stateSchema, log: file.log, versions: { current: 1, steps: [] }, now: file.clock() });
    if (loaded.status !== "ok") return;
    const kept = keptSince(Object.entries(loaded.value.hits), Object.entries(loaded.value.answeredAt), file.clock() - KEEP_MS);
    for (const [key, times] of Object.entries(kept.hits)) {
      const group = withoutThread(key);
      this.#hits.set(group, [...(this.#hits.get(group) ?? []), ...times].sort((a, b) => a - b));
    }
    for (const [key, at] of Object.entries(kept.answeredAt)) {
      const group = withoutThread(key);
      this.#answeredAt.set(group, Math.max(at, this.#answeredAt.get(group) ?? at));
    }
  }

  /** Writes the windows now (at shutdown); a pending delayed save is folded in. */
  flush(): void {
    if (this.#saveTimer) clearTimeout(this.#saveTimer);
    this.#saveTimer = null;
    const file = this.#file;
    if (!file) return;
    const state = keptSince(this.#hits, this.#answeredAt, file.clock() - KEEP_MS);
    try {
      // No fsync: a crash loses the last half second of counts, never the file.
      writeFileAtomic(file.path, `${JSON.stringify(state)}\n`, 0o600, { sync: false });
    } catch (err) {
      file.log.error("rate_limits.save_failed", { path: file.path, error: err });
    }
  }

  #changed(): void {
    if (!this.#file || this.#saveTimer) return;
    this.#saveTimer = setTimeout(() => this.flush(), SAVE_DELAY_MS);
    this.#saveTimer.unref();
  }

  /** Counts the message against both keys when it is allowed; a refused one counts against nothing. */
  admit(chatKey: string, senderKey: string, rule: RateRule, now: number): RateDecision {
    const checks: Array<["sender" | "chat", string, number]> = [
      ["sender", `s:${senderKey}`, rule.perSender],
      ["chat", `c:${chatKey}`, rule.perChat],
    ];
    for (const [limit, key, max] of checks) {
      if (max <= 0) continue;
      const hits = this.#recent(key, rule.windowMs, now);
      if (hits.length >= max) {
        const last = this.#answeredAt.get(key);
        const answer = last === undefined || now - last >= rule.windowMs;
        if (answer) {
          this.#answeredAt.set(key, now);
          this.#changed();
        }
        return { type: "refuse", limit, answer, retryInMs: hits[0]! + rule.windowMs - now };
      }
    }
    if (this.#hits.size > MAX_KEYS) this.#forgetIdle(rule.windowMs, now);
    let counted = false;
    for (const [, key, max] of checks) {
      if (max <= 0) continue;
      this.#hits.set(key, [...this.#recent(key, rule.windowMs, now), now]);
      counted = true;
    }
    if (counted) this.#changed();
    return { type: "allow" };
  }

  #recent(key: string, windowMs: number, now: number): number[] {
    return (this.#hits.get(key) ?? []).filter((t) => now - t < windowMs);
  }

  #forgetIdle(windowMs: number, now: number): void {
    for (const [key, hits] of this.#hits) if (hits.every((t) => now - t >= windowMs)) this.#hits.delete(key);
    for (const [key, at] of this.#answeredAt) if (now - at >= windowMs) this.#answeredAt.delete(key);
  }
}

export function rateLimitText(d: Extract<RateDecision, { type: "refuse" }>): string {
  const minutes = Math.max(1, Math.ceil(d.retryInMs / 60_000));
  const wait = `in about ${minutes} minute${minutes === 1 ? "" : "s"}`;
  return d.limit === "sender"
    ? `You've sent me a lot of messages in a short time, so I'm taking a break from yours. I can answer you again ${wait}.`
    : `This chat has sent me a lot of messages in a short time, so I'm taking a break here. I can answer again ${wait}.`;
}

/**
 * The windows a shared-scope message counts against: its group's and its sender's in that group.
 * A Telegram forum topic or a Discord thread is part of its group (the adapters report the group
 * as `chat.id` and the topic or thread as `chat.threadId`), so the thread is left out: spreading
 * messages over topics does not multiply the group's allowance. (The trailing ":" keeps the keys
 * of rate-limits.json files written before threads were folded in.)
 */
export function rateKeysFor(m: InboundMessage): { chat: string; sender: string } {
  return rateKeysOf(m.channel, m.chat.id, m.sender.id);
}

/** rateKeysFor by its parts: a group (never its thread) and a sender in it. */
export function rateKeysOf(channel: string, chatId: string, senderId: string): { chat: string; sender: string } {
  const chat = `${channel}:${chatId}:`;
  return { chat, sender: `${chat}:${senderId}` };
}

/** The rule for a shared-scope message: its channel's group (guild) limits, or dmRateLimit for a paired person. */
export function rateRuleFor(config: Config, m: InboundMessage): RateRule | null {
  const c = channelAccess(config.channels, m.channel);
  if (!c) return null;
  if (m.chat.type === "dm") {
    const r = c.dmRateLimit;
    return { perSender: r.perSender, perChat: 0, windowMs: parseDuration(r.window) ?? 3_600_000 };
  }
  return groupRateRule(config, m.channel);
}

/** A group's (guild's) rule on `channel`; null when the channel is not configured. */
export function groupRateRule(config: Config, channel: string): RateRule | null {
  const r = channelAccess(config.channels, channel)?.groups.rateLimit;
  if (!r) return null;
  return { perSender: r.perSender, perChat: r.perChat, windowMs: parseDuration(r.window) ?? 3_600_000 };
}

/** Why a group's spawn_task was refused by its rate limits (the model relays it). */
export function taskRateLimitText(d: Extract<RateDecision, { type: "refuse" }>): string {
  const minutes = Math.max(1, Math.ceil(d.retryInMs / 60_000));
  const who = d.limit === "sender" ? "this member has" : "this chat has";
  return `${who} asked for a lot in a short time (a task counts as a message). It can start one again in about ${minutes} minute${minutes === 1 ? "" : "s"}.`;
}
