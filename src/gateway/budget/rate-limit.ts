import type { InboundMessage } from "../../channels/channel.ts";
import { parseDuration, type Config } from "../config.ts";

// Per-sender and per-chat rate limits for shared scopes (groups, paired people): a sliding
// window of accepted messages per key. Past the limit a message is refused before it reaches
// the inbox — no model call — and only the first refusal in a window is answered.
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

export class RateLimiter {
  readonly #hits = new Map<string, number[]>();
  readonly #answeredAt = new Map<string, number>();

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
        if (answer) this.#answeredAt.set(key, now);
        return { type: "refuse", limit, answer, retryInMs: hits[0]! + rule.windowMs - now };
      }
    }
    if (this.#hits.size > MAX_KEYS) this.#forgetIdle(rule.windowMs, now);
    for (const [, key, max] of checks) if (max > 0) this.#hits.set(key, [...this.#recent(key, rule.windowMs, now), now]);
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

/** The rule for a shared-scope message: its channel's group (guild) limits, or dmRateLimit for a paired person. */
export function rateRuleFor(config: Config, m: InboundMessage): RateRule | null {
  const c = m.channel === "telegram" ? config.channels.telegram : m.channel === "discord" ? config.channels.discord : undefined;
  if (!c) return null;
  if (m.chat.type === "dm") {
    const r = c.dmRateLimit;
    return { perSender: r.perSender, perChat: 0, windowMs: parseDuration(r.window) ?? 3_600_000 };
  }
  const r = "groups" in c ? c.groups.rateLimit : c.guilds.rateLimit;
  return { perSender: r.perSender, perChat: r.perChat, windowMs: parseDuration(r.window) ?? 3_600_000 };
}
