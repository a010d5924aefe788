// Pricing: list prices per million tokens, with each cache write TTL and cache reads priced apart.
import { describe, expect, it } from "vitest";
import { priceOf, priceUsage, pricingFor, transcriptionPricePerMinute } from "../../src/spending/pricing.ts";
import { parseConfig } from "../../src/config/config.ts";

const usage = { inputTokens: 100, outputTokens: 50, cacheReadTokens: 10_000, cacheCreationTokens: 3_000, cacheCreation5mTokens: 1_000, cacheCreation1hTokens: 2_000 };

describe("priceUsage", () => {
  it("prices input, output, 5-minute and 1-hour cache writes and cache reads at their own rates", () => {
    // Haiku 4.5: $1 in, $5 out; writes 1.25 / 2 × input, reads 0.1 × input.
    // 100·1 + 50·5 + 1000·1.25 + 2000·2 + 10000·0.1 = 100 + 250 + 1250 + 4000 + 1000 = 6600 per million.
    expect(priceUsage("claude-haiku-4-5-20251001", usage)).toBeCloseTo(0.0066, 12);
  });

  it("counts cache writes without a TTL split as 5-minute writes", () => {
    const plain = { inputTokens: 0, outputTokens: 0, cacheReadTokens: 0, cacheCreationTokens: 1_000_000 };
    expect(priceUsage("claude-sonnet-4-5", plain)).toBeCloseTo(3.75, 12);
    expect(priceUsage("claude-sonnet-4-5", { ...plain, cacheCreation1hTokens: 1_000_000 })).toBeCloseTo(6, 12);
  });

  it("takes the longest matching id, then the family, and lets config override", () => {
    expect(priceOf("claude-opus-4-1-20250805")).toEqual({ input: 15, output: 75 });
    expect(priceOf("claude-opus-4-5-20251101")).toEqual({ input: 5, output: 25 });
    expect(priceOf("claude-opus-4-20250514")).toEqual({ input: 15, output: 75 });
    expect(priceOf("claude-sonnet-5-5")).toEqual({ input: 3, output: 15 });
    expect(priceOf("claude-haiku-5")).toEqual({ input: 1, output: 5 });
    const overrides = { "claude-haiku": { input: 2, output: 4, cacheRead: 0 } };
    expect(priceUsage("claude-haiku-4-5", { inputTokens: 1_000_000, outputTokens: 1_000_000, cacheReadTokens: 1_000_000, cacheCreationTokens: 0 }, overrides)).toBeCloseTo(6, 12);
  });

  it("adds $10 per thousand web searches", () => {
    expect(priceUsage("claude-sonnet-4-5", { inputTokens: 0, outputTokens: 0, cacheReadTokens: 0, cacheCreationTokens: 0, webSearchRequests: 3 })).toBeCloseTo(0.03, 12);
  });
});

describe("pricingFor", () => {
  it("prices local servers' models at zero, a provider's listed prices by model id, and lets `pricing` win", () => {
    const config = parseConfig(
      {
        model: { name: "ollama/llama3.2", fallbacks: ["claude-sonnet-4-5"] },
        providers: { groq: { apiKey: "gsk-test-key-1234", models: { "llama-3.3-70b": { pricing: { input: 0.59, output: 0.79 } } } } },
        pricing: { "claude-sonnet-4-5": { input: 2, output: 10 } },
      },
      { home: "/tmp/hearth-pricing", env: {} },
    );
    const table = pricingFor(config);
    expect(priceUsage("llama3.2", { inputTokens: 1_000_000, outputTokens: 1_000_000, cacheReadTokens: 0, cacheCreationTokens: 0 }, table)).toBe(0);
    expect(priceOf("llama-3.3-70b", table)).toEqual({ input: 0.59, output: 0.79 });
    expect(priceOf("claude-sonnet-4-5", table)).toEqual({ input: 2, output: 10 });
  });
});

describe("transcriptionPricePerMinute", () => {
  const at = (baseUrl: string, model: string, pricing?: { perMinuteUsd: number }) => transcriptionPricePerMinute({ baseUrl, model, ...(pricing ? { pricing } : {}) });

  it("knows OpenAI's and Groq's list prices, per minute of audio", () => {
    expect(at("https://api.openai.com/v1", "whisper-1")).toBe(0.006);
    expect(at("https://api.openai.com/v1", "gpt-4o-transcribe")).toBe(0.006);
    expect(at("https://api.openai.com/v1", "gpt-4o-mini-transcribe-2025-12-15")).toBe(0.003);
    expect(at("https://api.groq.com/openai/v1", "whisper-large-v3") * 60).toBeCloseTo(0.111, 12);
    expect(at("https://api.groq.com/openai/v1", "whisper-large-v3-turbo") * 60).toBeCloseTo(0.04, 12);
    expect(at("https://api.groq.com/openai/v1", "distil-whisper-large-v3-en") * 60).toBeCloseTo(0.02, 12);
  });

  it("prices a server on this machine or the local network at 0, an unknown hosted model like whisper-1, and lets pricing win", () => {
    for (const url of ["http://127.0.0.1:8080/v1", "http://localhost:9000/v1", "http://[::1]:8000/v1", "http://192.168.1.20:8000/v1", "http://10.0.0.5/v1", "http://[fd00::5]/v1"]) {
      expect([url, at(url, "whisper-1")]).toEqual([url, 0]);
    }
    expect(at("https://stt.example.com/v1", "some-new-model")).toBe(0.006);
    expect(at("http://127.0.0.1:8080/v1", "whisper-1", { perMinuteUsd: 0.01 })).toBe(0.01);
    expect(at("https://api.openai.com/v1", "whisper-1", { perMinuteUsd: 0 })).toBe(0);
    expect(transcriptionPricePerMinute(undefined)).toBe(0);
  });

  it("config takes media.transcription.pricing.perMinuteUsd and refuses a negative price", () => {
    const base = { media: { transcription: { baseUrl: "https://api.openai.com/v1", model: "whisper-1" } } };
    expect(parseConfig({ media: { transcription: { ...base.media.transcription, pricing: { perMinuteUsd: 0.004 } } } }, { home: "/tmp/hearth-pricing", env: {} }).media.transcription?.pricing).toEqual({ perMinuteUsd: 0.004 });
    expect(() => parseConfig({ media: { transcription: { ...base.media.transcription, pricing: { perMinuteUsd: -1 } } } }, { home: "/tmp/hearth-pricing", env: {} })).toThrow(/perMinuteUsd/);
  });
});
