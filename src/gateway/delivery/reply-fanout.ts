// One run can answer several messages (steering joins them to it): its events go to every
// reply sink attached to it, and every sink gets the final text exactly once.
import { randomUUID } from "node:crypto";
import type { AgentEvent } from "../../agent/events.ts";
import type { ReplyOutcome, ReplySink } from "../../channels/channel.ts";
import type { Logger } from "../../process/log.ts";

export class ReplyFanout {
  readonly #sinks = new Map<string, ReplySink>();
  readonly #owners = new Map<string, string>();
  /** Names this run to the sinks that want to know which replies share it. */
  readonly #runId = randomUUID();
  readonly #log: Logger;
  #text = "";
  #closed = false;

  constructor(log: Logger) {
    this.#log = log;
  }

  /**
   * Attaches the reply for `key` (one per chat, or per CLI request), opening it only if no
   * reply with that key is attached yet. A late sink first catches up with the text so far.
   * `owner` names who asks (an inbox id). Returns the owner of the reply it joined when one
   * with that key was already attached by someone else, else null.
   */
  attach(key: string, open: () => ReplySink, owner = ""): string | null {
    if (this.#closed) return null;
    const existing = this.#owners.get(key);
    if (existing !== undefined) return existing === owner ? null : existing;
    const sink = open();
    sink.joinedRun?.(this.#runId);
    if (this.#text) sink.textReset(this.#text);
    this.#sinks.set(key, sink);
    this.#owners.set(key, owner);
    return null;
  }

  get size(): number {
    return this.#sinks.size;
  }

  emit(e: AgentEvent): void {
    if (this.#closed) return;
    switch (e.type) {
      case "text_delta":
        this.#text += e.text;
        this.#each((s) => s.textDelta(e.text, e.notice === true));
        break;
      case "text_reset":
        this.#text = e.text;
        this.#each((s) => s.textReset(e.text));
        break;
      case "tool_start":
        this.#each((s) => s.toolStarted(e.name, e.summary));
        break;
      case "tool_end":
        this.#each((s) => s.toolFinished(e.name, e.ok));
        break;
      case "model_retry": {
        const seconds = Math.max(1, Math.round(e.delayMs / 1000));
        this.#each((s) => s.modelRetrying?.(`${e.error.message} Trying again in ${seconds} s…`));
        break;
      }
      case "run_end":
        // Nothing more will stream: the final text follows once the run's bookkeeping is done.
        if (e.status === "max_turns") this.#each((s) => s.turnCapReached?.());
        this.#each((s) => s.textComplete?.());
        break;
      case "run_start":
      case "turn_start":
      case "turn_end":
      case "model_fallback":
      case "steered":
        break;
      default:
        e satisfies never;
    }
  }

  /** Delivers the final text to every sink; resolves when all tried. Returns how many failed. */
  async finish(text: string, outcome: ReplyOutcome = "answered"): Promise<number> {
    return this.#close((s) => s.finish(text, outcome));
  }

  async fail(message: string): Promise<number> {
    return this.#close((s) => s.fail(message));
  }

  async #close(deliver: (s: ReplySink) => Promise<void>): Promise<number> {
    if (this.#closed) return 0;
    this.#closed = true;
    const results = await Promise.allSettled([...this.#sinks.values()].map(deliver));
    const failed = results.filter((r): r is PromiseRejectedResult => r.status === "rejected");
    for (const f of failed) this.#log.error("reply.undelivered", { error: f.reason });
    return failed.length;
  }

  #each(fn: (s: ReplySink) => void): void {
    for (const s of this.#sinks.values()) {
      try {
        fn(s);
      } catch (err) {
        this.#log.warn("reply.sink_threw", { error: err });
      }
    }
  }
}
