// <home>/cron/runs.jsonl: the history of every job run, one JSON line per step, appended with
// single O_APPEND writes. It is also what makes runs durable: a run is `queued` before it goes
// on its lane and `started` when it joins a model run, so after a crash the next start knows
// which scheduled times were handled (never run twice), which runs never started (run them
// now) and which were cut off mid-run (report them, don't repeat them).
import { mkdirSync } from "node:fs";
import path from "node:path";
import { z } from "zod";
import type { Logger } from "../process/log.ts";
import { appendRecord, readJsonLines, writeFileAtomic } from "../state/storage.ts";
import { deliveryStatuses, type DeliveryStatus } from "./job.ts";

/** Why a run happened: its schedule, a missed time caught up on start, or `hearth cron run`. */
export type Trigger = "schedule" | "catch-up" | "manual";

export interface DeliveryRecord {
  status: DeliveryStatus;
  /** "telegram:123", "cli"… */
  to?: string;
  error?: string;
}

interface RunRef {
  /** `<jobId>@<scheduledAt ISO>`; a manual run's scheduled time is when it was asked for. */
  runId: string;
  jobId: string;
  /** The job's name at the time. */
  job: string;
  scheduledAt: string;
  trigger: Trigger;
  at: string;
}

export type RunRecord =
  | ({ status: "queued" } & RunRef)
  | { status: "started"; runId: string; jobId: string; at: string }
  | ({ status: "ok" | "error"; startedAt?: string; durationMs?: number; error?: string; delivery: DeliveryRecord; notified?: boolean } & RunRef)
  /** Scheduled times that were not run: `missed` of them (default 1), from `scheduledAt` to `until`. */
  | { status: "skipped"; runId?: string; jobId: string; job: string; scheduledAt: string; until?: string; reason: string; missed?: number; at: string };

const runRef = {
  runId: z.string(),
  jobId: z.string(),
  job: z.string(),
  scheduledAt: z.string(),
  trigger: z.enum(["schedule", "catch-up", "manual"]),
  at: z.string(),
};

/** What a runs.jsonl line must look like to be used; `append` writes only records of this type. */
const runRecordSchema = z.union([
  z.looseObject({ status: z.literal("queued"), ...runRef }),
  z.looseObject({ status: z.literal("started"), runId: z.string(), jobId: z.string(), at: z.string() }),
  z.looseObject({
    status: z.enum(["ok", "error"]),
    ...runRef,
    startedAt: z.string().optional(),
    durationMs: z.number().optional(),
    error: z.string().optional(),
    delivery: z.looseObject({ status: z.enum(deliveryStatuses), to: z.string().optional(), error: z.string().optional() }),
    notified: z.boolean().optional(),
  }),
  z.looseObject({
    status: z.literal("skipped"),
    runId: z.string().optional(),
    jobId: z.string(),
    job: z.string(),
    scheduledAt: z.string(),
    until: z.string().optional(),
    reason: z.string(),
    missed: z.number().optional(),
    at: z.string(),
  }),
]) as unknown as z.ZodType<RunRecord>;

export type QueuedRun = Extract<RunRecord, { status: "queued" }>;
/** A run that ended (ok, error) or times that were skipped. */
export type RecentRun = Extract<RunRecord, { status: "ok" | "error" | "skipped" }>;

export interface RunRecovery {
  /** Per job, the latest scheduled time that was queued or skipped (manual runs excluded). */
  lastScheduled: Map<string, number>;
  /** Queued before the last stop, never started: they run now. */
  queued: QueuedRun[];
  /** Started but never finished (a crash or a kill): they count as run, and are reported. */
  interrupted: Array<QueuedRun & { startedAt: string }>;
}

/** The file is compacted to its newest lines when it grows past this many. */
const MAX_LINES = 20_000;
const KEEP_LINES = 10_000;

export class RunLog {
  readonly path: string;
  readonly #log: Logger;

  private constructor(file: string, log: Logger) {
    this.path = file;
    this.#log = log;
  }

  /** Opens the log and works out what the last run of the daemon left behind. */
  static open(file: string, log: Logger): { runs: RunLog; recovery: RunRecovery } {
    const runs = new RunLog(file, log);
    const records = runs.#read();
    const recovery: RunRecovery = { lastScheduled: new Map(), queued: [], interrupted: [] };
    const open = new Map<string, QueuedRun & { startedAt?: string }>();
    for (const r of records) {
      switch (r.status) {
        case "queued":
          open.set(r.runId, { ...r });
          break;
        case "started": {
          const q = open.get(r.runId);
          if (q) q.startedAt = r.at;
          break;
        }
        case "ok":
        case "error":
        case "skipped":
          if (r.runId) open.delete(r.runId);
          break;
        default:
          r satisfies never;
      }
      if ((r.status === "queued" && r.trigger !== "manual") || r.status === "skipped") {
        const t = Date.parse(r.status === "skipped" && r.until ? r.until : r.scheduledAt);
        if (t > (recovery.lastScheduled.get(r.jobId) ?? -Infinity)) recovery.lastScheduled.set(r.jobId, t);
      }
    }
    for (const q of open.values()) {
      if (q.startedAt) recovery.interrupted.push({ ...q, startedAt: q.startedAt });
      else recovery.queued.push(q);
    }
    if (records.length > MAX_LINES) runs.#compact(records, new Set(open.keys()));
    return { runs, recovery };
  }

  append(r: RunRecord): void {
    try {
      mkdirSync(path.dirname(this.path), { recursive: true, mode: 0o700 });
      appendRecord(this.path, `${JSON.stringify(r)}\n`);
    } catch (err) {
      this.#log.error("cron.runs_write_failed", { file: this.path, error: err });
    }
  }

  /** The finished and skipped runs, newest first, at most `limit` (the dashboard's Schedule page). */
  recent(limit: number): RecentRun[] {
    const done = this.#read().filter((r): r is RecentRun => r.status === "ok" || r.status === "error" || r.status === "skipped");
    return done.slice(-limit).reverse();
  }

  /** Every record, oldest first (a torn or wrong-shaped line is skipped and logged with its number). */
  #read(): RunRecord[] {
    return readJsonLines(this.path, runRecordSchema, this.#log).values;
  }

  /** Keeps the newest lines and every line of a run that is still open. */
  #compact(records: RunRecord[], open: Set<string>): void {
    const cut = records.length - KEEP_LINES;
    const kept = records.filter((r, i) => i >= cut || (r.runId !== undefined && open.has(r.runId)));
    writeFileAtomic(this.path, kept.map((r) => `${JSON.stringify(r)}\n`).join(""));
    this.#log.info("cron.runs_compacted", { kept: kept.length, dropped: records.length - kept.length });
  }
}
