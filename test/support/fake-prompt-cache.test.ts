// The fake model's simulated prompt cache: TTLs, refresh on hit, the minimum prefix, the split of
// writes by TTL, and usage reported through the real SDK.
import { describe, expect, it } from "vitest";
import { createAnthropicModelClient } from "../../src/agent/providers/anthropic/client.ts";
import { silentLogger } from "../../src/process/log.ts";
import { startFakeModel, text, type FakeModel } from "./fake-model.ts";
import { minimumCacheableTokens, PromptCache } from "./fake-prompt-cache.ts";

const MIN = 1024;
const words = (n: number) => "abcd".repeat(n); // n tokens at 4 characters a token

function body(ttl: "5m" | "1h" | null, tail: string, model = "claude-sonnet-5-5") {
  return {
    model,
    system: [{ type: "text", text: words(2000), ...(ttl ? { cache_control: ttl === "1h" ? { type: "ephemeral", ttl: "1h" } : { type: "ephemeral" } } : {}) }],
    messages: [{ role: "user", content: [{ type: "text", text: tail, cache_control: { type: "ephemeral" } }] }],
  };
}

describe("simulated prompt cache", () => {
  it("keeps a 1-hour prefix across ticks 30 minutes apart, refreshing it on every hit, and loses it after an hour unused", () => {
    let now = 0;
    const cache = new PromptCache({ clock: () => now });
    expect(cache.use(body("1h", "tick 1"))).toEqual({ input: 0, read: 0, write5m: 2, write1h: 2000 });
    now += 30 * 60_000;
    expect(cache.use(body("1h", "tick 2"))).toEqual({ input: 0, read: 2000, write5m: 2, write1h: 0 });
    now += 55 * 60_000; // 85 minutes after the write, 55 after the last hit
    expect(cache.use(body("1h", "tick 3")).read).toBe(2000);
    now += 61 * 60_000;
    expect(cache.use(body("1h", "tick 4"))).toEqual({ input: 0, read: 0, write5m: 2, write1h: 2000 });
  });

  it("loses a 5-minute prefix after five minutes", () => {
    let now = 0;
    const cache = new PromptCache({ clock: () => now });
    cache.use(body("5m", "a"));
    now += 4 * 60_000;
    expect(cache.use(body("5m", "b")).read).toBe(2000);
    now += 30 * 60_000;
    expect(cache.use(body("5m", "c"))).toEqual({ input: 0, read: 0, write5m: 2001, write1h: 0 });
  });

  it("caches nothing below the model's minimum and nothing without a breakpoint", () => {
    const cache = new PromptCache({ clock: () => 0 });
    expect(cache.use(body("1h", "x", "claude-haiku-4-5"))).toEqual({ input: 2001, read: 0, write5m: 0, write1h: 0 });
    expect(cache.use(body("1h", "x", "claude-haiku-4-5"))).toEqual({ input: 2001, read: 0, write5m: 0, write1h: 0 });
    const plain = { model: "m", system: [{ type: "text", text: words(MIN * 2) }], messages: [{ role: "user", content: "hi" }] };
    expect(cache.use(plain)).toEqual({ input: MIN * 2 + 1, read: 0, write5m: 0, write1h: 0 });
    expect(minimumCacheableTokens("claude-haiku-4-5")).toBe(4096);
    expect(minimumCacheableTokens("claude-sonnet-5-5")).toBe(1024);
  });

  it("reports the split of writes and the reads through the real SDK", async () => {
    let now = 0;
    const fake: FakeModel = await startFakeModel({ promptCache: { clock: () => now } });
    try {
      const client = createAnthropicModelClient({ models: ["claude-sonnet-5-5"], apiKey: "k", baseURL: fake.url, log: silentLogger });
      const req = { system: [{ text: words(2000), cacheBreakpoint: true }], tools: [], messages: [{ role: "user" as const, kind: "message" as const, text: "hi", ts: 0 }], maxTokens: 10, cacheTtl: "1h" as const };
      fake.enqueue(text("one"), text("two"));
      const first = await client.stream(req, { signal: new AbortController().signal, onEvent: () => {} });
      now += 30 * 60_000;
      const second = await client.stream(req, { signal: new AbortController().signal, onEvent: () => {} });
      expect(first.type === "ok" && first.message.usage).toEqual({ inputTokens: 0, outputTokens: 1, cacheReadTokens: 0, cacheCreationTokens: 2001, cacheCreation5mTokens: 1, cacheCreation1hTokens: 2000 });
      expect(second.type === "ok" && second.message.usage).toEqual({ inputTokens: 0, outputTokens: 1, cacheReadTokens: 2000, cacheCreationTokens: 1, cacheCreation5mTokens: 1, cacheCreation1hTokens: 0 });
      expect(fake.requests[0]!.usage!.cache_creation).toEqual({ ephemeral_5m_input_tokens: 1, ephemeral_1h_input_tokens: 2000 });
    } finally {
      await fake.close();
    }
  });
});
