// What one streaming attempt shares with every provider: the text the caller was shown
// (across retries, never twice) and the idle/abort watch that decides how an attempt ended.
import type { AssistantBlock, AssistantMessage } from "../messages.ts";
import { displayUrl, type ModelError } from "../model-errors.ts";
import type { ModelEvent, Unfinished } from "./model.ts";

/** `billed`: set when the failed attempt had started (the provider reported its input). */
export type AttemptResult = { type: "ok"; message: AssistantMessage } | { type: "error"; error: ModelError; billed?: Unfinished };

export const stalledMessage = (idleTimeoutMs: number, tries: number): string =>
  `The model stopped responding: nothing arrived for ${formatSeconds(idleTimeoutMs)}${tries > 1 ? `, on ${tries} tries` : ""}.`;

const formatSeconds = (ms: number): string => `${Math.round(ms / 100) / 10} s`;

export const abortedError = (model: string): ModelError => ({ kind: "aborted", model, message: "The request was stopped." });

/**
 * Tracks the text the caller has been shown during one `stream` call, across attempts.
 * A retried attempt that repeats the shown text stays silent until it passes it; one that
 * says something else replaces the shown text with a single `text_reset`.
 */
export class ShownText {
  #shown = "";
  #seen = "";
  #diverged = false;
  readonly #emit: (e: ModelEvent) => void;

  constructor(emit: (e: ModelEvent) => void) {
    this.#emit = emit;
  }

  startAttempt(): void {
    this.#seen = "";
    this.#diverged = false;
  }

  add(delta: string): void {
    this.#seen += delta;
    const seen = this.#seen;
    const shown = this.#shown;
    if (this.#diverged) {
      this.#shown = seen;
      this.#emit({ type: "text_delta", text: delta });
    } else if (seen.length <= shown.length) {
      if (!shown.startsWith(seen)) this.#replace();
    } else if (seen.startsWith(shown)) {
      this.#shown = seen;
      this.#emit({ type: "text_delta", text: seen.slice(shown.length) });
    } else {
      this.#replace();
    }
  }

  /** At the end of a successful attempt: its text may be a strict prefix of what was shown. */
  finishAttempt(): void {
    if (this.#seen !== this.#shown) this.#replace();
  }

  asBlocks(): AssistantBlock[] {
    return this.#shown ? [{ type: "text", text: this.#shown }] : [];
  }

  #replace(): void {
    this.#diverged = true;
    this.#shown = this.#seen;
    this.#emit({ type: "text_reset", text: this.#seen });
  }
}

/**
 * The abort and idle timer of one attempt. `signal` goes to the SDK call; `touch()` on every
 * stream event; `release()` in a finally. SDKs end an aborted iteration quietly, so `outcome`
 * decides afterwards why the stream stopped.
 */
export class AttemptWatch {
  readonly signal: AbortSignal;
  #stalled = false;
  #idle: NodeJS.Timeout | undefined;
  readonly #controller = new AbortController();
  readonly #outer: AbortSignal;
  readonly #idleTimeoutMs: number;
  readonly #onAbort = () => this.#controller.abort();

  constructor(outer: AbortSignal, idleTimeoutMs: number) {
    this.#outer = outer;
    this.#idleTimeoutMs = idleTimeoutMs;
    this.signal = this.#controller.signal;
    outer.addEventListener("abort", this.#onAbort, { once: true });
    this.touch();
  }

  touch(): void {
    clearTimeout(this.#idle);
    this.#idle = setTimeout(() => {
      this.#stalled = true;
      this.#controller.abort();
    }, this.#idleTimeoutMs);
  }

  release(): void {
    clearTimeout(this.#idle);
    this.#outer.removeEventListener("abort", this.#onAbort);
  }

  /** True when a thrown error is only the echo of our own abort (the caller's or the idle timer's). */
  get cancelled(): boolean {
    return this.#stalled || this.#outer.aborted;
  }

  /**
   * Why the stream ended without a result, or null when it completed: aborted by the caller,
   * stalled, or cut off before its last event (`complete` false).
   */
  outcome(model: string, complete: boolean, baseURL: string): AttemptResult | null {
    if (this.#outer.aborted) return { type: "error", error: abortedError(model) };
    if (this.#stalled) return { type: "error", error: { kind: "stalled", model, message: stalledMessage(this.#idleTimeoutMs, 1) } };
    if (!complete) {
      return { type: "error", error: { kind: "connection", model, message: `The model stream from ${displayUrl(baseURL)} ended before the message was complete.` } };
    }
    return null;
  }
}
