// Deciding when jobs run. One timer for all jobs wakes at the earliest due time (and at least
// once a minute, so a clock jump, a suspended laptop or a huge interval never leaves a job
// waiting on a stale timer). Each wake-up looks at every job: a due time is run, or recorded
// as skipped when it is too late or the job's previous run is still going — each scheduled
// time is handled exactly once, and the engine remembers the last one per job.
import type { Logger } from "../process/log.ts";
import { catchUpMs, type Job } from "./job.ts";
import type { Trigger } from "./run-log.ts";
import { dueRuns, nextRunAfter } from "./schedule.ts";

/** Timers the engine and the heartbeat use; tests pass a fake. */
export interface Timers {
  /** Calls `fn` once after `ms`; the returned function cancels it. Must not keep the process alive. */
  set(ms: number, fn: () => void): () => void;
}

export const realTimers: Timers = {
  set(ms, fn) {
    const t = setTimeout(fn, Math.min(Math.max(0, ms), 2 ** 31 - 1));
    t.unref();
    return () => clearTimeout(t);
  },
};

/** The longest the engine sleeps before looking again. */
export const MAX_SLEEP_MS = 60_000;
/** A time that came due while Hearth was running is run even if the wake-up is this late. */
export const LATE_GRACE_MS = 60_000;

export interface EngineHooks {
  /** Runs the job for `scheduledAt`. Called synchronously from a wake-up; must not throw. */
  fire(job: Job, scheduledAt: number, trigger: Trigger): void;
  /** Records the `missed` times from `first` to `last` as skipped. Must not throw. */
  skip(job: Job, first: number, last: number, reason: string, missed: number): void;
  /** True while a run of the job is queued or running (overlap protection). */
  busy(jobId: string): boolean;
}

export interface EngineOptions {
  clock: () => number;
  timers: Timers;
  log: Logger;
  /** For cron expressions without a time zone. */
  timezone: string;
  hooks: EngineHooks;
}

export class Engine {
  readonly #o: EngineOptions;
  #jobs: Job[] = [];
  /** Per job id: the last scheduled time handled. */
  readonly #handled = new Map<string, number>();
  /** Per job id: when this engine first saw a job without `createdAt` (a hand-written one). */
  readonly #firstSeen = new Map<string, number>();
  #cancel: (() => void) | null = null;
  #running = false;
  /** When start() was called: due times before it were missed while Hearth was not running. */
  #startedAt = 0;
  #ticking = false;
  #tickAgain = false;

  constructor(opts: EngineOptions) {
    this.#o = opts;
  }

  /** Scheduled times up to `at` count as handled for the job (from runs.jsonl and the job's state). */
  markHandled(jobId: string, at: number): void {
    if (at > (this.#handled.get(jobId) ?? -Infinity)) this.#handled.set(jobId, at);
  }

  lastHandled(jobId: string): number | undefined {
    return this.#handled.get(jobId);
  }

  /** Replaces the job list (after an add, a removal or a hand edit) and looks again. */
  setJobs(jobs: Job[]): void {
    const now = this.#o.clock();
    for (const j of jobs) if (!j.createdAt && !this.#firstSeen.has(j.id)) this.#firstSeen.set(j.id, now);
    this.#jobs = jobs;
    if (this.#running) this.tick();
  }

  start(): void {
    this.#running = true;
    this.#startedAt = this.#o.clock();
    this.tick();
  }

  stop(): void {
    this.#running = false;
    this.#cancel?.();
    this.#cancel = null;
  }

  /** The job's next run time; null when it has none (disabled, or a one-shot that ran). */
  nextRunAt(job: Job): number | null {
    if (!job.enabled) return null;
    const now = this.#o.clock();
    const after = Math.max(this.#from(job), now);
    return nextRunAfter(job.schedule, after, this.#anchor(job), this.#o.timezone);
  }

  /** Handles every due job, then sleeps until the next due time. */
  tick(): void {
    // A hook may change the job list (and so call back here): finish this pass, then look again.
    if (this.#ticking) {
      this.#tickAgain = true;
      return;
    }
    this.#ticking = true;
    try {
      do {
        this.#tickAgain = false;
        this.#cancel?.();
        this.#cancel = null;
        if (!this.#running) return;
        const now = this.#o.clock();
        for (const job of this.#jobs) {
          if (!job.enabled) continue;
          try {
            this.#handle(job, now);
          } catch (err) {
            this.#o.log.error("cron.tick_failed", { job: job.id, error: err });
          }
        }
        this.#arm(now);
      } while (this.#tickAgain);
    } finally {
      this.#ticking = false;
    }
  }

  #handle(job: Job, now: number): void {
    const due = dueRuns(job.schedule, this.#from(job), now, this.#anchor(job), this.#o.timezone);
    if (!due) return;
    this.markHandled(job.id, due.latest);
    const late = now - due.latest;
    const missedWhileDown = due.latest < this.#startedAt;
    const window = missedWhileDown ? catchUpMs(job) : Math.max(catchUpMs(job), LATE_GRACE_MS);
    if (this.#o.hooks.busy(job.id)) {
      this.#o.hooks.skip(job, due.first, due.latest, "the previous run was still queued or running", due.count);
      return;
    }
    if (late > window) {
      const reason = missedWhileDown ? `missed while Hearth was not running (${formatLate(late)} late; catch-up window ${job.catchUp})` : `${formatLate(late)} late (catch-up window ${job.catchUp})`;
      this.#o.hooks.skip(job, due.first, due.latest, reason, due.count);
      return;
    }
    if (due.beforeLatest !== null) {
      this.#o.hooks.skip(job, due.first, due.beforeLatest, "missed while Hearth was not running; only the latest missed time runs", due.count - 1);
    }
    this.#o.hooks.fire(job, due.latest, missedWhileDown ? "catch-up" : "schedule");
  }

  #arm(now: number): void {
    let wake = now + MAX_SLEEP_MS;
    for (const job of this.#jobs) {
      if (!job.enabled) continue;
      const next = nextRunAfter(job.schedule, this.#from(job), this.#anchor(job), this.#o.timezone);
      if (next !== null && next < wake) wake = next;
    }
    this.#cancel = this.#o.timers.set(Math.max(0, wake - now), () => this.tick());
  }

  /** Times after this are still to handle. */
  #from(job: Job): number {
    return this.#handled.get(job.id) ?? this.#anchor(job);
  }

  #anchor(job: Job): number {
    return job.createdAt ? Date.parse(job.createdAt) : (this.#firstSeen.get(job.id) ?? this.#o.clock());
  }
}

function formatLate(ms: number): string {
  if (ms < 90_000) return `${Math.round(ms / 1000)} s`;
  if (ms < 90 * 60_000) return `${Math.round(ms / 60_000)} min`;
  return `${(ms / 3_600_000).toFixed(1)} h`;
}
