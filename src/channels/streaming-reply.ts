// The engine behind a streamed chat reply (Telegram, Discord): a typing indicator while the
// model thinks, one preview message edited as text and tool progress arrive, and the final text
// delivered exactly once, the moment the run ends.
//
// Rules that matter to the person waiting:
// - Preview edits are throttled (at most one per editIntervalMs) and MERGED: whatever arrives
//   while an edit waits or is in flight only changes what the next edit shows. There is never
//   a queue of stale edits, so the final text is never stuck behind them.
// - The final text ignores the throttle. It waits only for the one request already in flight
//   (otherwise that stale edit could land after it, or a first preview's id would be unknown).
// - A preview longer than maxLength shows its tail ("…" + the latest text) in the one preview
//   message. Freezing full chunks into extra messages would leave messages the final split
//   cannot reuse (a transport cannot delete); at the end the final text is split properly and
//   the preview becomes its first chunk.
// - Tool progress lines (`⏳ exec: ls -la`, then `✓`/`✗`) are shown below the text in the
//   preview only; finished lines are dropped when new text arrives. They never reach the final.
// - Once the run's text is complete (textComplete), no preview goes out any more: a complete
//   answer is first shown by the final delivery, which the outbox records before it starts, so
//   a crash never leaves a complete answer that recovery would not recognise.
// - With a journal (ReplyJournal), every message id is reported the moment it is known, and a
//   reply opened after a restart continues in the messages it had: the old preview is left as
//   it is (typing shows meanwhile) until the new final text replaces it — it may show a complete
//   answer from the run a crash cut off, which a half-written new preview must not overwrite —
//   and final parts already delivered are edited (to the same text: a no-op) instead of sent
//   again. A recorded preview that cannot be edited any more is deleted (or
//   marked as interrupted) so no stale half-answer stays behind.
import type { Logger } from "../process/log.ts";
import type { ReplyJournal, ReplySink } from "./channel.ts";
import { splitMessage } from "./chunk.ts";

/** What a platform must do for a streamed reply. All ids are the platform's message ids. */
export interface ReplyTransport {
  /**
   * Sends a new message and resolves with its id. `final` = this is final text (render the
   * markdown), else a plain-text preview. Rejects when the message was not sent. `part` (a
   * reply with a journal): the message's stable name, its journal key and index; `lookUp`: the
   * reply was open at a restart, so the message may exist already — a transport that can find
   * it by that name resolves with its id instead of sending it again (the caller edits it).
   */
  send(text: string, opts: { final: boolean; part?: { key: string; lookUp: boolean } }): Promise<string>;
  /** Replaces a message's text. The transport swallows "message is not modified". */
  edit(id: string, text: string, opts: { final: boolean }): Promise<void>;
  /**
   * Optional capability: shows "typing…" for a few seconds. May reject (unsupported, e.g. a
   * Bot API emulator): the reply then stops calling it, quietly.
   */
  typing?(): Promise<void>;
  /** Optional capability: deletes a message (a stale preview that cannot be edited). */
  delete?(id: string): Promise<void>;
}

/** The timer functions the reply uses; tests may pass fakes. Handles are opaque. */
export interface ReplyTimers {
  setTimeout(fn: () => void, ms: number): unknown;
  clearTimeout(handle: unknown): void;
}

export interface StreamingReplyOptions {
  /** Longest message the platform takes: 4000 (Telegram) or 2000 (Discord). */
  maxLength: number;
  /** Minimum time between two preview requests: 1000 (Telegram) or 1200 (Discord). */
  editIntervalMs: number;
  /** How often "typing…" is refreshed while nothing is visible yet. Default 4000. */
  typingIntervalMs?: number;
  /** Passed to splitMessage for the final text. Default true. */
  reopenCodeBlocks?: boolean;
  /** Waits before each retry of a failed final send; its length is the retry count. */
  sendRetryDelaysMs?: readonly number[];
  log: Logger;
  /** Milliseconds now. Default Date.now. */
  clock?: () => number;
  /** Default: the global setTimeout/clearTimeout (looked up at call time, so fake timers work). */
  timers?: ReplyTimers;
  /** Records message ids and resumes from recorded ones (see ReplyJournal). */
  journal?: ReplyJournal;
  /**
   * With a journal: the text the preview message is created with; the answer is shown by the
   * edit that follows at once, after the id was recorded. For a platform without idempotent
   * sends, so a message created in the instant before a crash is never a half-written answer.
   */
  previewPlaceholder?: string;
}

/** The final text (or part of it) could not be delivered; `chunkIndex` is the first missing. */
export class ReplyDeliveryError extends Error {
  readonly chunkIndex: number;
  readonly chunkCount: number;

  constructor(chunkIndex: number, chunkCount: number, cause: unknown) {
    super(
      `reply part ${chunkIndex + 1} of ${chunkCount} could not be delivered: ${errorMessage(cause)}`,
      { cause },
    );
    this.name = "ReplyDeliveryError";
    this.chunkIndex = chunkIndex;
    this.chunkCount = chunkCount;
  }
}

/** The text a preview is created with on a platform without idempotent sends (see previewPlaceholder). */
export const PREVIEW_PLACEHOLDER = "…";
/** Shown in place of a preview when the final answer turned out empty. */
export const EMPTY_ANSWER_TEXT = "(no answer)";
/** What a recorded preview that cannot take the answer is turned into, when it cannot be deleted. */
export const INTERRUPTED_PREVIEW_TEXT = "(interrupted, answer below)";
const DEFAULT_RETRY_DELAYS_MS = [500, 2000, 5000] as const;
const MAX_TOOL_LINES = 5;
const MAX_TOOL_SUMMARY = 60;
/** Consecutive failed preview requests after which previews stop (the message is likely gone). */
const MAX_PREVIEW_FAILURES = 3;

type ToolLine = { name: string; summary: string; status: "running" | "ok" | "failed" };

/** streaming → delivering (finish/fail called, final text going out) → done. */
type Phase = "streaming" | "delivering" | "done";

const globalTimers: ReplyTimers = {
  setTimeout: (fn, ms) => setTimeout(fn, ms),
  clearTimeout: (handle) => clearTimeout(handle as ReturnType<typeof setTimeout>),
};

export class StreamingReply implements ReplySink {
  readonly #transport: ReplyTransport;
  readonly #maxLength: number;
  readonly #editIntervalMs: number;
  readonly #typingIntervalMs: number;
  readonly #reopenCodeBlocks: boolean;
  readonly #retryDelaysMs: readonly number[];
  readonly #log: Logger;
  readonly #clock: () => number;
  readonly #timers: ReplyTimers;
  readonly #journal: ReplyJournal | undefined;
  readonly #placeholder: string | undefined;

  #phase: Phase = "streaming";
  /** The run's text is complete (textComplete): no more previews. */
  #textComplete = false;
  #text = "";
  #tools: ToolLine[] = [];
  /** The preview changed since the last request was prepared. */
  #dirty = false;
  #previewId: string | undefined;
  #previewDisabled = false;
  #previewFailures = 0;
  #inflight: Promise<void> | undefined;
  #lastRequestAt = Number.NEGATIVE_INFINITY;
  #flushTimer: unknown;
  #typingTimer: unknown;
  #typing = false;

  constructor(transport: ReplyTransport, opts: StreamingReplyOptions) {
    this.#transport = transport;
    this.#maxLength = opts.maxLength;
    this.#editIntervalMs = opts.editIntervalMs;
    this.#typingIntervalMs = opts.typingIntervalMs ?? 4000;
    this.#reopenCodeBlocks = opts.reopenCodeBlocks ?? true;
    this.#retryDelaysMs = opts.sendRetryDelaysMs ?? DEFAULT_RETRY_DELAYS_MS;
    this.#log = opts.log;
    this.#clock = opts.clock ?? (() => Date.now());
    this.#timers = opts.timers ?? globalTimers;
    this.#journal = opts.journal;
    this.#placeholder = opts.journal ? opts.previewPlaceholder : undefined;
    this.#previewId = opts.journal?.messageIds[0];
    // Resumed after a restart: only the final text replaces what the recorded preview shows.
    if (this.#previewId !== undefined) this.#previewDisabled = true;
    if (transport.typing) {
      this.#typing = true;
      this.#refreshTyping();
    }
  }

  textDelta(text: string): void {
    if (!this.#accepting("textDelta") || !text) return;
    this.#text += text;
    this.#tools = this.#tools.filter((t) => t.status === "running");
    this.#changed();
  }

  textReset(text: string): void {
    if (!this.#accepting("textReset")) return;
    this.#text = text;
    this.#changed();
  }

  toolStarted(name: string, summary: string): void {
    if (!this.#accepting("toolStarted")) return;
    this.#tools.push({ name, summary, status: "running" });
    this.#changed();
  }

  toolFinished(name: string, ok: boolean): void {
    if (!this.#accepting("toolFinished")) return;
    const tool = this.#tools.find((t) => t.name === name && t.status === "running");
    if (!tool) return;
    tool.status = ok ? "ok" : "failed";
    this.#changed();
  }

  /** The run's text is complete; only the final delivery shows it (see the rules above). */
  textComplete(): void {
    this.#textComplete = true;
    if (this.#flushTimer !== undefined) this.#timers.clearTimeout(this.#flushTimer);
    this.#flushTimer = undefined;
  }

  finish(finalText: string): Promise<void> {
    return this.#deliver("finish", finalText);
  }

  fail(message: string): Promise<void> {
    const partial = this.#text.trim();
    return this.#deliver("fail", partial ? `${partial}\n\n⚠️ ${message}` : `⚠️ ${message}`);
  }

  // ── preview ───────────────────────────────────────────────────────────────────────────────

  #accepting(call: string): boolean {
    if (this.#phase === "streaming") return true;
    this.#log.debug("reply.call_after_finish", { call });
    return false;
  }

  #changed(): void {
    this.#dirty = true;
    this.#schedulePreview();
  }

  /** Arranges one preview request for the current state, as soon as the throttle allows. */
  #schedulePreview(): void {
    if (this.#phase !== "streaming" || this.#previewDisabled || this.#textComplete || !this.#dirty) return;
    // Merging happens here: with a request waiting or in flight, the next one will read the
    // latest state when it goes, so nothing else needs doing.
    if (this.#inflight || this.#flushTimer !== undefined) return;
    const wait = this.#lastRequestAt + this.#editIntervalMs - this.#clock();
    if (wait <= 0) {
      this.#sendPreview();
      return;
    }
    this.#flushTimer = this.#timers.setTimeout(() => {
      this.#flushTimer = undefined;
      this.#sendPreview();
    }, wait);
  }

  #sendPreview(): void {
    if (this.#phase !== "streaming" || this.#previewDisabled || this.#textComplete) return;
    this.#dirty = false;
    const rendered = this.#renderPreview();
    if (!rendered) return;
    this.#stopTyping();
    this.#lastRequestAt = this.#clock();
    const id = this.#previewId;
    const placeholder = id === undefined ? this.#placeholder : undefined;
    const text = placeholder ?? rendered;
    const request =
      id === undefined
        ? attempt(() => this.#transport.send(text, { final: false, ...this.#part(0) })).then((newId) => {
            this.#previewId = newId;
            this.#journal?.messageCreated(0, newId);
            if (placeholder !== undefined) {
              // The id is on disk: the answer may show now, without waiting for the throttle.
              this.#dirty = true;
              this.#lastRequestAt = Number.NEGATIVE_INFINITY;
            }
          })
        : attempt(() => this.#transport.edit(id, text, { final: false }));
    this.#inflight = request
      .then(
        () => {
          this.#previewFailures = 0;
        },
        (error: unknown) => this.#previewFailed(error, id === undefined),
      )
      .finally(() => {
        this.#inflight = undefined;
        this.#schedulePreview();
      });
  }

  #previewFailed(error: unknown, wasFirst: boolean): void {
    this.#previewFailures++;
    // A failed first send may still have created a message; another send could duplicate it.
    if (wasFirst || this.#previewFailures >= MAX_PREVIEW_FAILURES) {
      this.#previewDisabled = true;
      this.#log.warn("reply.preview_disabled", { error, failures: this.#previewFailures });
      return;
    }
    this.#log.debug("reply.preview_failed", { error });
    this.#dirty = true; // retry with the latest text after the interval
  }

  /** The text so far plus tool progress, cut to its tail when longer than a message. */
  #renderPreview(): string {
    const tools = this.#tools.slice(-MAX_TOOL_LINES).map(formatToolLine).join("\n");
    const text = this.#text.trim();
    const separator = text && tools ? "\n\n" : "";
    const full = text + separator + tools;
    if (full.length <= this.#maxLength) return full;
    const room = this.#maxLength - tools.length - separator.length - 1;
    if (room <= 0) return `…${tail(full, this.#maxLength - 1)}`;
    return `…${tail(text, room)}${separator}${tools}`;
  }

  // ── typing ────────────────────────────────────────────────────────────────────────────────

  #refreshTyping(): void {
    if (!this.#typing || !this.#transport.typing) return;
    const typing = this.#transport.typing.bind(this.#transport);
    attempt(typing).catch((error: unknown) => {
      if (!this.#typing) return;
      this.#log.debug("reply.typing_unavailable", { error });
      this.#stopTyping();
    });
    this.#typingTimer = this.#timers.setTimeout(() => {
      this.#typingTimer = undefined;
      this.#refreshTyping();
    }, this.#typingIntervalMs);
  }

  #stopTyping(): void {
    this.#typing = false;
    if (this.#typingTimer !== undefined) this.#timers.clearTimeout(this.#typingTimer);
    this.#typingTimer = undefined;
  }

  // ── final delivery ────────────────────────────────────────────────────────────────────────

  async #deliver(call: "finish" | "fail", text: string): Promise<void> {
    if (!this.#accepting(call)) return;
    this.#phase = "delivering";
    this.#stopTyping();
    if (this.#flushTimer !== undefined) this.#timers.clearTimeout(this.#flushTimer);
    this.#flushTimer = undefined;
    // The one request in flight must land first: a stale edit must not overwrite the final
    // text, and a first preview's id is needed to replace it. (#inflight never rejects.)
    if (this.#inflight) await this.#inflight;
    try {
      await this.#deliverChunks(splitMessage(text, this.#maxLength, { reopenCodeBlocks: this.#reopenCodeBlocks }));
    } finally {
      this.#phase = "done";
    }
  }

  async #deliverChunks(chunks: readonly string[]): Promise<void> {
    const previewId = this.#previewId;
    if (chunks.length === 0) {
      // Nothing to say: do not leave a stale partial answer standing. Without a preview there
      // is nothing to clean up and nothing is sent.
      if (previewId !== undefined) await this.#replacePreview(previewId, EMPTY_ANSWER_TEXT);
      return;
    }
    for (const [index, chunk] of chunks.entries()) {
      // Part 0 replaces the preview; later parts exist already only when a reply delivered
      // before a restart is delivered again from its record.
      const existing = index === 0 ? previewId : this.#journal?.messageIds[index];
      if (existing !== undefined) {
        if (await this.#replacePreview(existing, chunk)) continue;
        await this.#retireMessage(existing);
      }
      await this.#sendFinal(chunk, index, chunks.length);
    }
  }

  /** Edits the preview into final text; false when the edit failed (the caller sends instead). */
  async #replacePreview(id: string, text: string): Promise<boolean> {
    try {
      await this.#transport.edit(id, text, { final: true });
      return true;
    } catch (error) {
      this.#log.warn("reply.final_edit_failed", { error });
      return false;
    }
  }

  /**
   * A message that cannot take its part of the final text (deleted by the user, too old, or
   * refused) is removed, or at least marked, so it does not stay behind as a stale half-answer.
   */
  async #retireMessage(id: string): Promise<void> {
    try {
      if (this.#transport.delete) await this.#transport.delete(id);
      else await this.#transport.edit(id, INTERRUPTED_PREVIEW_TEXT, { final: false });
    } catch (error) {
      this.#log.debug("reply.retire_failed", { error });
      if (this.#transport.delete) await this.#transport.edit(id, INTERRUPTED_PREVIEW_TEXT, { final: false }).catch(() => {});
    }
  }

  /** The stable name of message `index` of a reply with a journal (ReplyTransport.send's `part`). */
  #part(index: number, retry = false): { part?: { key: string; lookUp: boolean } } {
    const j = this.#journal;
    return j ? { part: { key: `${j.key}:${index}`, lookUp: retry || j.recovered === true } } : {};
  }

  /** Sends one final chunk, retrying transient failures; throws ReplyDeliveryError at the end. */
  async #sendFinal(text: string, index: number, count: number): Promise<void> {
    for (let tryNo = 0; ; tryNo++) {
      try {
        // A retry may follow a send the platform took but did not confirm: it looks first too.
        const id = await this.#transport.send(text, { final: true, ...this.#part(index, tryNo > 0) });
        if (index === 0) this.#previewId = id;
        this.#journal?.messageCreated(index, id);
        return;
      } catch (error) {
        const delay = this.#retryDelaysMs[tryNo];
        if (delay === undefined) throw new ReplyDeliveryError(index, count, error);
        this.#log.warn("reply.send_retry", { error, part: index + 1, attempt: tryNo + 1, delayMs: delay });
        await new Promise<void>((resolve) => this.#timers.setTimeout(resolve, delay));
      }
    }
  }
}

/** Calls `fn`, turning a synchronous throw into a rejection. */
function attempt<T>(fn: () => Promise<T>): Promise<T> {
  return new Promise<T>((resolve) => resolve(fn()));
}

function formatToolLine(tool: ToolLine): string {
  const icon = tool.status === "running" ? "⏳" : tool.status === "ok" ? "✓" : "✗";
  const summary = tool.summary.split("\n", 1)[0]!.replace(/\s+/g, " ").trim();
  if (!summary) return `${icon} ${tool.name}`;
  const short = summary.length > MAX_TOOL_SUMMARY ? `${summary.slice(0, MAX_TOOL_SUMMARY - 1)}…` : summary;
  return `${icon} ${tool.name}: ${short}`;
}

/** The last `room` characters of `text`, starting at a line or word boundary when one is near. */
function tail(text: string, room: number): string {
  let start = Math.max(0, text.length - room);
  const code = text.charCodeAt(start);
  if (code >= 0xdc00 && code <= 0xdfff) start++;
  const rest = text.slice(start);
  const boundary = rest.search(/\s/);
  return boundary >= 0 && boundary < 80 ? rest.slice(boundary).trimStart() : rest;
}

function errorMessage(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}
