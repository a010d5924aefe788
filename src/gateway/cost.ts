// A cost estimate for /status, from published per-million-token prices by model family.
// It is an estimate: the bill is the provider's.
import type { Usage } from "../agent/messages.ts";

interface Price {
  input: number;
  output: number;
}

// USD per million tokens. Cache reads cost 10 % of input, cache writes (5 min) 125 %.
const FAMILIES: Array<[RegExp, Price]> = [
  [/opus-4-[01]|opus-3/, { input: 15, output: 75 }],
  [/opus/, { input: 5, output: 25 }],
  [/haiku-3/, { input: 0.25, output: 1.25 }],
  [/haiku/, { input: 1, output: 5 }],
  [/sonnet|fable|mythos/, { input: 3, output: 15 }],
];

/** Estimated USD for `usage` on `model`; unknown models are priced like Sonnet. */
export function estimateCostUsd(model: string, usage: Usage): number {
  const price = FAMILIES.find(([re]) => re.test(model))?.[1] ?? { input: 3, output: 15 };
  return (
    (usage.inputTokens * price.input +
      usage.cacheReadTokens * price.input * 0.1 +
      usage.cacheCreationTokens * price.input * 1.25 +
      usage.outputTokens * price.output) /
    1_000_000
  );
}
