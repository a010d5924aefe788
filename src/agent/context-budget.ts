// The context budget of one session (DESIGN §6): how full the model's window is, and the
// compaction ladder that keeps it from overflowing. Below 60 % nothing happens; at 80 % the
// view is compacted before the next model call; a request estimated past 95 % is never sent.
import type { Logger } from "../process/log.ts";
import { chooseCut, shrinkToolResults, summarize, summaryMessage } from "./compaction.ts";
import { outsideContentIn } from "./outside-content.ts";
import { mediaLoad, toolImageTokens, type MediaLoad } from "./media-size.ts";
import { markMediaOrigin, shownFrom } from "./media-view.ts";
import { contextTokens, type Message, type Usage } from "./messages.ts";
import type { ModelClient } from "./providers/model.ts";
import type { ModelError } from "./model-errors.ts";
import type { ReserveCall } from "./paid-call.ts";
import type { ModelRequest } from "./providers/model.ts";

export const WARN_AT = 0.6;
export const COMPACT_AT = 0.8;
export const REFUSE_AT = 0.95;
/** Recent turns kept verbatim by a summary, in tokens. */
export const KEEP_TOKENS = 20_000;
/** Until a response calibrates it: about 3.3 bytes of request JSON per token (errs high). */
const DEFAULT_TOKENS_PER_BYTE = 0.3;

export type CompactionReason = "threshold" | "overflow" | "command";

/**
 * What the API counted for one request's text (its context tokens less the estimated tokens of
 * the pictures and PDFs it carried) and that text's size in Hearth's own form. Stored with the
 * transcript (the `run` record) so a restarted daemon estimates a session's size as well as
 * before, rather than from a default that errs high.
 */
export interface Calibration {
  tokens: number;
  bytes: number;
}

export interface CompactionRecord {
  reason: CompactionReason;
  /** The model's new view of the conversation. */
  view: Message[];
  summarized: boolean;
  shrunkToolResults: number;
  tokensBefore: number;
  tokensAfter: number;
}

export type CompactOutcome =
  | { type: "compacted"; record: CompactionRecord }
  | { type: "nothing"; tokens: number }
  | { type: "failed"; error: ModelError };

export type PrepareResult = { type: "ok"; messages: Message[] } | { type: "too_large"; message: string };

export interface ContextBudgetOptions {
  window: number;
  model: ModelClient;
  /** The largest answer per call; summaries get at most 4,096 of it. */
  maxTokens: number;
  log: Logger;
  clock: () => number;
  /** Persists a compaction (a transcript record); called before the new view is used. */
  record: (c: CompactionRecord) => void;
  /**
   * Main scope only: a silent turn in which the agent may save what must survive to memory.
   * Its messages are history, not part of the new view. Must not throw.
   */
  flush?: (view: Message[], signal: AbortSignal) => Promise<void>;
  keepTokens?: number;
  /** The session's last calibration (from its transcript); absent: a default that errs high. */
  calibration?: Calibration | null;
  /** The budget, asked before each summary call (paid-call.ts); a refusal leaves the view unsummarised. Absent: every call is made. */
  reserve?: ReserveCall;
}

export class ContextBudget {
  readonly #opts: ContextBudgetOptions;
  #tokensPerByte = DEFAULT_TOKENS_PER_BYTE;
  #calibration: Calibration | null = null;

  constructor(opts: ContextBudgetOptions) {
    this.#opts = opts;
    if (opts.calibration) this.#calibrate(opts.calibration);
  }

  /** The last calibration, to store with the transcript; null before any response. */
  calibration(): Calibration | null {
    return this.#calibration;
  }

  /** True when a request this size would be compacted before it is sent. */
  needsCompaction(req: ModelRequest): boolean {
    return this.estimate(req) >= COMPACT_AT * this.#opts.window;
  }

  /** Estimated input tokens of a request: its text by the calibration, its pictures and PDFs as the API counts them. */
  estimate(req: ModelRequest): number {
    return estimateInputTokens(req, this.#tokensPerByte);
  }

  /**
   * Calibrates the estimate from what the API counted for a request. The pictures' estimate is
   * taken off first: counted as bytes of text, three pictures would make every byte of a later
   * request look like a whole token.
   */
  observe(req: ModelRequest, usage: Usage): void {
    const cost = requestCost(req);
    this.#calibrate({ tokens: Math.max(0, contextTokens(usage) - cost.tokens), bytes: cost.bytes });
  }

  #calibrate(c: Calibration): void {
    // A proxy that misreports usage must not make the estimate absurd: keep it plausible.
    if (!(c.tokens > 0 && c.bytes > 0)) return;
    this.#tokensPerByte = Math.min(1, Math.max(0.05, c.tokens / c.bytes));
    this.#calibration = { tokens: c.tokens, bytes: c.bytes };
  }

  /** Before a model call: compacts at 80 %, refuses past 95 %. Returns the view to send. */
  async prepare(req: ModelRequest, signal: AbortSignal): Promise<PrepareResult> {
    const limit = this.#opts.window;
    if (this.estimate(req) < COMPACT_AT * limit) return { type: "ok", messages: req.messages };
    const outcome = await this.compact(req, { reason: "threshold", signal });
    const messages = outcome.type === "compacted" ? outcome.record.view : req.messages;
    const after = this.estimate({ ...req, messages });
    if (after >= REFUSE_AT * limit) {
      return {
        type: "too_large",
        message: `This conversation is too large for the model even after compacting (about ${Math.round((after / limit) * 100)} % of its window). Start a fresh one with /new; the history stays on disk.`,
      };
    }
    return { type: "ok", messages };
  }

  /** After the API said the prompt is too long: compacts (with a summary); null if that cannot help. */
  async recover(req: ModelRequest, signal: AbortSignal): Promise<Message[] | null> {
    const outcome = await this.compact(req, { reason: "overflow", signal });
    return outcome.type === "compacted" ? outcome.record.view : null;
  }

  /**
   * The ladder: (a) shrink old tool results — enough on its own if it brings the view under
   * 60 %; (b) in main scope, the memory flush; (c) a summary of the older turns, keeping the
   * recent ones verbatim. `/compact` (reason "command") skips straight to (b) and (c).
   */
  async compact(req: ModelRequest, opts: { reason: CompactionReason; focus?: string; signal: AbortSignal }): Promise<CompactOutcome> {
    const { window, log } = this.#opts;
    const before = this.estimate(req);
    let view = req.messages;
    let shrunk = 0;
    if (opts.reason !== "command") {
      ({ view, shrunk } = shrinkToolResults(view));
      if (shrunk > 0 && this.estimate({ ...req, messages: view }) < WARN_AT * window) {
        return this.#done(req, { reason: opts.reason, view, summarized: false, shrunkToolResults: shrunk, tokensBefore: before });
      }
    }
    // About 20,000 tokens of recent turns stay verbatim (less in a small window).
    const keep = this.#opts.keepTokens ?? Math.min(KEEP_TOKENS, Math.floor(window / 4));
    const shown = new Set(view.slice(shownFrom(view, req.mediaKeepTurns)));
    const cut = chooseCut(view, keep, (m) => {
      const media = shown.has(m) ? mediaLoad([m]) : { tokens: 0, bytes: 0 };
      const own = costOf(m);
      return Math.ceil((own.bytes + media.bytes) * this.#tokensPerByte) + own.tokens + media.tokens;
    });
    if (cut === 0) {
      if (shrunk > 0) return this.#done(req, { reason: opts.reason, view, summarized: false, shrunkToolResults: shrunk, tokensBefore: before });
      return { type: "nothing", tokens: before };
    }
    if (this.#opts.flush && this.estimate({ ...req, messages: view }) < REFUSE_AT * window) {
      // The conversation as the chat last sent it, when it fits: the flush then reads the whole
      // cached prefix instead of writing one from the first shrunk tool result on.
      await this.#opts.flush(this.estimate(req) < REFUSE_AT * window ? req.messages : view, opts.signal);
    }
    const result = await summarize(this.#opts.model, view.slice(0, cut), {
      focus: opts.focus,
      // The summariser's input stays well inside the window, whatever the session's size.
      maxInputChars: Math.floor((0.5 * window) / this.#tokensPerByte),
      maxTokens: Math.min(4_096, this.#opts.maxTokens),
      signal: opts.signal,
      clock: this.#opts.clock,
      reserve: this.#opts.reserve,
    });
    if (result.type === "error") {
      log.warn("compaction.summary_failed", { kind: result.error.kind, message: result.error.message });
      if (shrunk > 0) return this.#done(req, { reason: opts.reason, view, summarized: false, shrunkToolResults: shrunk, tokensBefore: before });
      return { type: "failed", error: result.error };
    }
    // A summary of outside content stays outside content: it may repeat injected instructions.
    const newView = [summaryMessage(result.summary, this.#opts.clock(), outsideContentIn(view.slice(0, cut))), ...view.slice(cut)];
    return this.#done(req, { reason: opts.reason, view: newView, summarized: true, shrunkToolResults: shrunk, tokensBefore: before });
  }

  #done(req: ModelRequest, c: Omit<CompactionRecord, "tokensAfter">): CompactOutcome {
    // The kept turns go on showing what they showed: no note turns back into a picture.
    const view = markMediaOrigin(req.messages, c.view, req.mediaKeepTurns);
    const record: CompactionRecord = { ...c, view, tokensAfter: this.estimate({ ...req, messages: view }) };
    this.#opts.record(record);
    this.#opts.log.info("compaction.done", {
      reason: record.reason,
      summarized: record.summarized,
      shrunk: record.shrunkToolResults,
      tokensBefore: record.tokensBefore,
      tokensAfter: record.tokensAfter,
    });
    return { type: "compacted", record };
  }
}

// Sizes are cached per object: messages never change once made, and a session's system prompt
// and tool list are the same objects for a whole run. Estimating a request then costs only its
// new messages, not a serialisation of the whole conversation on every model call.
const sizes = new WeakMap<object, number>();

function sizeOf(value: object): number {
  let n = sizes.get(value);
  if (n === undefined) {
    n = Buffer.byteLength(JSON.stringify(value));
    sizes.set(value, n);
  }
  return n;
}

// A tool's pictures (read of an image, an MCP screenshot) travel as base64 inside the message:
// as bytes, one picture would count for tens of thousands of tokens. They count as pictures.
const costs = new WeakMap<Message, MediaLoad>();

function costOf(m: Message): MediaLoad {
  if (m.role !== "tool_result" || !m.images?.length) return { bytes: sizeOf(m), tokens: 0 };
  let cost = costs.get(m);
  if (!cost) {
    cost = { bytes: Buffer.byteLength(JSON.stringify({ ...m, images: [] })), tokens: toolImageTokens(m.images) };
    costs.set(m, cost);
  }
  return cost;
}

/**
 * A request in Hearth's own form: `bytes` of text (the calibration maps them to the API's
 * tokens: JSON, notes, inline files) and `tokens` of pictures and PDFs as the API counts them.
 */
/**
 * Estimated input tokens of a request without a session's calibration (the heartbeat's, a
 * budget's worst case): its text at `tokensPerByte` (by default the estimate that errs high).
 */
export function estimateInputTokens(req: ModelRequest, tokensPerByte = DEFAULT_TOKENS_PER_BYTE): number {
  const cost = requestCost(req);
  return Math.ceil(cost.bytes * tokensPerByte) + cost.tokens;
}

function requestCost(req: ModelRequest): MediaLoad {
  const media = mediaLoad(req.messages, req.mediaKeepTurns);
  let bytes = sizeOf(req.system) + sizeOf(req.tools) + (req.serverTools ? sizeOf(req.serverTools) : 0) + media.bytes;
  let tokens = media.tokens;
  for (const m of req.messages) {
    const own = costOf(m);
    bytes += own.bytes;
    tokens += own.tokens;
  }
  return { bytes, tokens };
}
