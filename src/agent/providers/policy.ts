// The one retry, backoff, stall and fallback policy (DESIGN §6 "Model errors"), for every
// provider. Hearth owns it (SDK retries are off): it must also retry failures that happen
// mid-stream, after text has already reached the user, without showing that text twice.
import type { Logger } from "../../process/log.ts";
import { allowsFallback, isRetryable, type ModelError } from "../model-errors.ts";
import { abortedError, ShownText, stalledMessage, type AttemptResult } from "./attempt.ts";
import type { ModelCapabilities, ModelClient, ModelEvent, ModelRequest, ModelResult, Unfinished } from "./model.ts";

export interface RetryPolicy {
  /** Attempts per model, the first included. */
  maxAttempts: number;
  baseDelayMs: number;
  maxDelayMs: number;
  /** A `retry-after` longer than this is not waited for: the next model is tried instead. */
  maxRetryAfterMs: number;
  /** A stream with no event for this long has stalled. */
  idleTimeoutMs: number;
  /**
   * Stalled attempts per `stream` call, over all models: reaching it ends the call (no further
   * retry, no fallback), so a silent model costs the user about this many idle timeouts.
   */
  maxStalls: number;
}

export const defaultRetryPolicy: RetryPolicy = {
  maxAttempts: 5,
  baseDelayMs: 2_000,
  maxDelayMs: 30_000,
  maxRetryAfterMs: 60_000,
  idleTimeoutMs: 60_000,
  maxStalls: 2,
};

/** The delay before retry number `attempt` (1 = first retry): 2 s doubling to 30 s, ±20 % jitter. */
export function backoffDelay(policy: RetryPolicy, attempt: number, random: () => number): number {
  const exp = Math.min(policy.maxDelayMs, policy.baseDelayMs * 2 ** (attempt - 1));
  return Math.min(policy.maxDelayMs, Math.round(exp * (0.8 + 0.4 * random())));
}

/** One model of one provider, as the policy drives it. */
export interface ModelTarget {
  /** How config names it ("ollama/llama3.2", or a bare Anthropic name): logs, events, status. */
  readonly name: string;
  /** Mutable: `disableTools` turns tools off for the rest of the process. */
  readonly capabilities: ModelCapabilities;
  /**
   * One streamed attempt. Streams text through `shown.add`, uses `signal` and `touch` for the
   * SDK call (touch on every stream event). Never throws: failures are error values.
   * Called with `req.tools` empty when this model runs without tools.
   */
  /** `onEvent` receives what only the provider sees (server tool progress); text goes through `shown`. */
  attempt(req: ModelRequest, ctx: { signal: AbortSignal; idleTimeoutMs: number; shown: ShownText; onEvent: (e: ModelEvent) => void }): Promise<AttemptResult>;
}

export interface ModelClientOptions {
  /** The primary model, then the fallbacks in order. */
  targets: ModelTarget[];
  retry?: Partial<RetryPolicy>;
  log: Logger;
  /** Waits `ms`; resolves early (without throwing) when `signal` aborts. Injected by tests. */
  sleep?: (ms: number, signal: AbortSignal) => Promise<void>;
  /** Returns a number in [0, 1) for jitter. */
  random?: () => number;
}

/** An API's words for "this model cannot call tools" (Ollama, vLLM, OpenRouter, LM Studio). */
const NO_TOOLS = /does not support tools|tools? (?:are |is )?not supported|not support(?:ed)? (?:for )?(?:tool|function)|tool[ _]choice.*not supported|function calling is not (?:supported|enabled)|no endpoints found that support tool use/i;

export const refusesTools = (e: ModelError): boolean => e.kind === "bad_request" && NO_TOOLS.test(e.message);

/** Streams from the first target that answers, retrying each by the policy. */
export function createModelClient(opts: ModelClientOptions): ModelClient {
  if (opts.targets.length === 0) throw new Error("createModelClient needs at least one model.");
  const policy = { ...defaultRetryPolicy, ...opts.retry };
  const sleep = opts.sleep ?? abortableSleep;
  const random = opts.random ?? Math.random;
  const primary = opts.targets[0]!;

  return {
    model: primary.name,
    capabilities: () => ({ ...primary.capabilities }),
    async stream(req, { signal, onEvent }): Promise<ModelResult> {
      const shown = new ShownText(onEvent);
      let last: ModelError | undefined;
      let from = primary;
      let stalls = 0;
      const unfinished: Unfinished[] = [];
      const withUnfinished = <R extends ModelResult>(r: R): R => (unfinished.length > 0 ? { ...r, unfinished } : r);
      const failed = (error: ModelError): ModelResult => withUnfinished({ type: "error", error, partial: shown.asBlocks() });
      models: for (const [i, target] of opts.targets.entries()) {
        if (i > 0) {
          const lacking = missingCapability(target, req);
          if (lacking) {
            opts.log.warn("model.fallback_skipped", { model: target.name, lacks: lacking });
            continue;
          }
          if (!last) break;
          opts.log.warn("model.fallback", { from: from.name, to: target.name, kind: last.kind });
          onEvent({ type: "fallback", from: from.name, to: target.name, error: last });
        }
        const before = { last, from };
        from = target;
        for (let attempt = 1; attempt <= policy.maxAttempts; attempt++) {
          if (signal.aborted) return failed(abortedError(target.name));
          const sent = target.capabilities.tools ? req : { ...req, tools: [] };
          const result = await target.attempt(sent, { signal, idleTimeoutMs: policy.idleTimeoutMs, shown, onEvent });
          if (result.type === "ok") return withUnfinished(result);
          if (result.billed) unfinished.push(result.billed);
          last = result.error;
          if (last.kind === "aborted") return failed(last);
          if (sent.tools.length > 0 && refusesTools(last)) {
            // Learned once per process: from now on this model runs without tools (see /status).
            target.capabilities.tools = false;
            target.capabilities.toolsOffReason = last.message;
            opts.log.warn("model.tools_unsupported", { model: target.name, message: last.message });
            if (i > 0) {
              // A fallback that cannot call tools is skipped, as if config had said so.
              opts.log.warn("model.fallback_skipped", { model: target.name, lacks: "tools" });
              ({ last, from } = before);
              continue models;
            }
            attempt--;
            continue;
          }
          if (last.kind === "stalled" && ++stalls >= policy.maxStalls) {
            last = { ...last, message: stalledMessage(policy.idleTimeoutMs, stalls) };
            break models;
          }
          if (!isRetryable(last)) break;
          if (attempt === policy.maxAttempts) break;
          if (last.retryAfterMs !== undefined && last.retryAfterMs > policy.maxRetryAfterMs) break;
          const delayMs = last.retryAfterMs ?? backoffDelay(policy, attempt, random);
          opts.log.warn("model.retry", { model: target.name, attempt, delayMs, kind: last.kind, status: last.status });
          onEvent({ type: "retry", attempt, delayMs, error: last });
          await sleep(delayMs, signal);
        }
        if (!allowsFallback(last!)) break;
      }
      if (!last) last = { kind: "unknown", model: primary.name, message: "No configured model could take this request." };
      opts.log.error("model.failed", { kind: last.kind, status: last.status, message: last.message });
      return failed(last);
    },
  };
}

/** What a fallback lacks that this request needs, or null. The primary always runs (without tools if it must). */
function missingCapability(target: ModelTarget, req: ModelRequest): "tools" | "vision" | null {
  if (req.tools.length > 0 && !target.capabilities.tools) return "tools";
  if (needsVision(req) && !target.capabilities.vision) return "vision";
  return null;
}

/**
 * Whether the request carries images. Hearth's messages have no image block yet (messages.ts);
 * when one is added, this and each provider's request.ts are the places that learn about it.
 */
export const needsVision = (_req: ModelRequest): boolean => false;

export function abortableSleep(ms: number, signal: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    if (signal.aborted) return resolve();
    const timer = setTimeout(done, ms);
    function done() {
      clearTimeout(timer);
      signal.removeEventListener("abort", done);
      resolve();
    }
    signal.addEventListener("abort", done, { once: true });
  });
}
