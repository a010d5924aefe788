// The usage ledger: every paid call (model calls, transcriptions, web tools) appended to
// <home>/usage.jsonl (one O_APPEND write per line), and running totals per day — all spending
// and the shared scope's — that budgets read. The file is the record; the totals are rebuilt
// from it on start.
import type { Usage } from "../agent/messages.ts";
import type { Logger } from "../process/log.ts";
import { appendRecord, stampRecord } from "../state/storage.ts";
import { localDate } from "../process/time.ts";
import { priceUsage, type PricingTable } from "./pricing.ts";
import { embeddingRecord, LOCAL_WEB_MODEL, readUsageRecords, speechRecord, transcriptionRecord, USAGE_VERSIONS, usageRecord, type UsageRecord, type UsageTag } from "./usage-record.ts";

interface DayTotal {
  costUsd: number;
  sharedUsd: number;
}

export interface Spent {
  day: string;
  /** "2026-11" */
  month: string;
  todayUsd: number;
  monthUsd: number;
  /** Today's spending in shared scopes (groups, paired people). */
  sharedTodayUsd: number;
}

export interface LedgerOptions {
  file: string;
  timezone: string;
  pricing: PricingTable;
  /** USD per minute of audio sent to media.transcription (transcriptionPricePerMinute); 0 when free or unset. */
  transcriptionPerMinuteUsd?: number;
  /** USD per million characters sent to voice.tts (speechPricePerMillionChars); 0 when free or unset. */
  speechPerMillionCharsUsd?: number;
  /** USD per million tokens sent to memory.embeddings (embeddingPricePerMillionTokens); 0 when free or unset. */
  embeddingPerMillionTokensUsd?: number;
  /** USD per 1,000 of Hearth's own web searches (localSearchPricePerThousand); 0 when unset. */
  localSearchPerThousandUsd?: number;
  log: Logger;
  clock: () => number;
}

export class UsageLedger {
  readonly #o: LedgerOptions;
  readonly #days = new Map<string, DayTotal>();
  /** Spending per session, all time (a background task's cap continues across restarts). */
  readonly #sessions = new Map<string, number>();
  readonly #listeners: Array<(r: UsageRecord) => void> = [];

  private constructor(opts: LedgerOptions) {
    this.#o = opts;
  }

  /** Reads the file's totals. Throws NewerStateError for a record a newer Hearth wrote (a start then exits 2). */
  static open(opts: LedgerOptions): UsageLedger {
    const ledger = new UsageLedger(opts);
    const { values } = readUsageRecords(opts.file, opts.log);
    for (const r of values) ledger.#add(r);
    return ledger;
  }

  /** Called after each record is written. Must not throw. */
  onRecord(listener: (r: UsageRecord) => void): void {
    this.#listeners.push(listener);
  }

  /** Prices and appends one model call; returns the record. Never throws (a failed write is logged). */
  record(tag: UsageTag, model: string, usage: Usage, opts?: { unfinished?: boolean }): UsageRecord {
    const now = this.#o.clock();
    // Hearth's own web use has no tokens: a search is priced per request, a page fetch is free.
    const costUsd = model === LOCAL_WEB_MODEL ? Math.round((usage.localWebSearches ?? 0) * (this.#o.localSearchPerThousandUsd ?? 0) * 1e6) / 1e9 : priceUsage(model, usage, this.#o.pricing);
    return this.#append(usageRecord(tag, model, usage, costUsd, now, localDate(now, this.#o.timezone), opts?.unfinished));
  }

  /**
   * Prices and appends one transcription of `audioSeconds` (null: nobody said how long; billed
   * as 0). Never throws.
   */
  recordTranscription(tag: UsageTag, model: string, audioSeconds: number | null): UsageRecord {
    const now = this.#o.clock();
    const perMinute = this.#o.transcriptionPerMinuteUsd ?? 0;
    // Neither the service nor the platform said how long it was (a file attached in the terminal
    // to a service that answers plain json): the budget cannot count it.
    if (audioSeconds === null && perMinute > 0) this.#o.log.warn("usage.transcription_length_unknown", { model, session: tag.session });
    // To the nano-dollar, so that 90 s at $0.006 a minute is written as 0.009, not 0.009000000000000001.
    const costUsd = Math.round(((audioSeconds ?? 0) / 60) * perMinute * 1e9) / 1e9;
    return this.#append(transcriptionRecord(tag, model, audioSeconds, costUsd, now, localDate(now, this.#o.timezone)));
  }

  /** Prices and appends one speech synthesis of `characters` characters. Never throws. */
  recordSpeech(tag: UsageTag, model: string, characters: number): UsageRecord {
    const now = this.#o.clock();
    const costUsd = Math.round(characters * (this.#o.speechPerMillionCharsUsd ?? 0) * 1e3) / 1e9;
    return this.#append(speechRecord(tag, model, characters, costUsd, now, localDate(now, this.#o.timezone)));
  }

  /** Prices and appends one embeddings call that read `tokens` tokens. Never throws. */
  recordEmbedding(tag: UsageTag, model: string, tokens: number): UsageRecord {
    const now = this.#o.clock();
    const costUsd = Math.round(tokens * (this.#o.embeddingPerMillionTokensUsd ?? 0) * 1e3) / 1e9;
    return this.#append(embeddingRecord(tag, model, tokens, costUsd, now, localDate(now, this.#o.timezone)));
  }

  #append(r: UsageRecord): UsageRecord {
    try {
      appendRecord(this.#o.file, `${JSON.stringify(stampRecord(r, USAGE_VERSIONS))}\n`);
    } catch (err) {
      this.#o.log.error("usage.write_failed", { file: this.#o.file, error: err });
    }
    this.#add(r);
    for (const l of this.#listeners) l(r);
    return r;
  }

  /** What session `session` has spent, all records together; 0 when it has none. */
  spentBy(session: string): number {
    return this.#sessions.get(session) ?? 0;
  }

  /** Spending today and this month, in the owner's time zone. */
  spent(): Spent {
    const day = localDate(this.#o.clock(), this.#o.timezone);
    const month = day.slice(0, 7);
    let monthUsd = 0;
    for (const [d, t] of this.#days) if (d.startsWith(month)) monthUsd += t.costUsd;
    const today = this.#days.get(day);
    return { day, month, todayUsd: today?.costUsd ?? 0, monthUsd, sharedTodayUsd: today?.sharedUsd ?? 0 };
  }

  #add(r: UsageRecord): void {
    const t = this.#days.get(r.day) ?? { costUsd: 0, sharedUsd: 0 };
    t.costUsd += r.costUsd;
    if (r.scope === "shared") t.sharedUsd += r.costUsd;
    this.#days.set(r.day, t);
    this.#sessions.set(r.session, (this.#sessions.get(r.session) ?? 0) + r.costUsd);
  }
}
