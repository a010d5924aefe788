// When a job runs. Croner reads cron expressions (5 or 6 fields, IANA time zones, DST gaps and
// repeats); `every` counts whole intervals from the job's creation, so a restart never shifts
// it; `at` is one instant. Everything here is pure: times in, times out.
import { Cron } from "croner";
import { parseDuration } from "../fields/config-fields.ts";
import { z } from "zod";

// The schema of a job's `schedule` in cron/jobs.json (job.ts), and its parts that job.ts
// uses for its own times and durations.
export const isoTime = z.iso.datetime({ offset: true, error: 'expected an ISO time such as "2026-11-23T09:00:00Z"' });

export const duration = z
  .string()
  .trim()
  .refine((s) => parseDuration(s) !== null, 'expected a duration such as "30m", "1h" or "90s" ("0" for none)');

export const scheduleSchema = z.discriminatedUnion(
  "kind",
  [
    /** A 5-field (or 6, seconds first) cron expression, in `tz` (default: config `timezone`). */
    z.strictObject({ kind: z.literal("cron"), expr: z.string().trim().min(1), tz: z.string().trim().min(1).optional() }),
    /** Every interval, counted from the job's creation. */
    z.strictObject({ kind: z.literal("every"), every: duration }),
    /** Once, at an instant. */
    z.strictObject({ kind: z.literal("at"), at: isoTime }),
  ],
  { error: 'expected a schedule {"kind": "cron", "expr": …} | {"kind": "every", "every": "30m"} | {"kind": "at", "at": ISO time}' },
);
export type Schedule = z.output<typeof scheduleSchema>;

/** Counting missed runs stops here; more are reported as "1000 or more". */
const COUNT_CAP = 1000;

export interface ScheduleRules {
  /** Applies to cron expressions without a `tz`. */
  timezone: string;
  minEveryMs: number;
}

export const CRON_HELP = '5 fields "minute hour day-of-month month day-of-week" (or 6, with seconds first), e.g. "0 9 * * 1-5" for 09:00 on weekdays';
export const TZ_HELP = 'an IANA time zone such as "Europe/Berlin", "America/New_York" or "UTC"';

const crons = new Map<string, Cron>();

/** A paused croner instance for the expression, cached. Throws croner's error for a bad one. */
function cronFor(expr: string, timezone: string): Cron {
  const key = `${timezone}\u0000${expr}`;
  let c = crons.get(key);
  if (!c) {
    c = new Cron(expr, { timezone, paused: true, mode: "5-or-6-parts" });
    if (crons.size >= 500) crons.clear(); // hand edits could otherwise grow it without end
    crons.set(key, c);
  }
  return c;
}

export function isTimeZone(tz: string): boolean {
  if (!tz.trim()) return false;
  try {
    new Intl.DateTimeFormat("en-US", { timeZone: tz });
    return true;
  } catch {
    return false;
  }
}

/** Why a schedule cannot run, saying what is accepted; null when it is fine. */
export function checkSchedule(s: Schedule, rules: ScheduleRules): string | null {
  switch (s.kind) {
    case "cron": {
      const tz = s.tz ?? rules.timezone;
      if (!isTimeZone(tz)) return `"${tz}" is not a time zone: use ${TZ_HELP}`;
      let next: Date | null;
      try {
        next = cronFor(s.expr, tz).nextRun();
      } catch (err) {
        const reason = (err as Error).message.replace(/^CronPattern: /, "");
        return `"${s.expr}" is not a cron expression (${reason}): use ${CRON_HELP}`;
      }
      return next ? null : `"${s.expr}" never matches a date: use ${CRON_HELP}`;
    }
    case "every": {
      const ms = parseDuration(s.every);
      if (ms === null || ms === 0) return `"${s.every}" is not an interval: use a duration such as "30m", "2h" or "1h30m"`;
      if (ms < rules.minEveryMs) return `"${s.every}" is too short: the shortest interval is ${formatMs(rules.minEveryMs)}`;
      return null;
    }
    case "at":
      return Number.isFinite(Date.parse(s.at)) ? null : `"${s.at}" is not an ISO time`;
    default:
      return s satisfies never;
  }
}

/**
 * The first run strictly after `after`, or null when there is none (a one-shot in the past).
 * `anchor` is where `every` intervals count from. Expects a schedule that passed checkSchedule.
 */
export function nextRunAfter(s: Schedule, after: number, anchor: number, timezone: string): number | null {
  switch (s.kind) {
    case "cron":
      return cronFor(s.expr, s.tz ?? timezone).nextRun(new Date(after))?.getTime() ?? null;
    case "every": {
      const ms = parseDuration(s.every)!;
      const k = after < anchor ? 1 : Math.floor((after - anchor) / ms) + 1;
      return anchor + k * ms;
    }
    case "at": {
      const at = Date.parse(s.at);
      return at > after ? at : null;
    }
    default:
      return s satisfies never;
  }
}

export interface DueRuns {
  /** The earliest and the latest run time in the window, and the one before the latest (null if count is 1). */
  first: number;
  latest: number;
  beforeLatest: number | null;
  /** How many run times fell in the window (capped at 1000). */
  count: number;
}

/** The run times in (after, now]: the job was due `count` times, last at `latest`. Null when none. */
export function dueRuns(s: Schedule, after: number, now: number, anchor: number, timezone: string): DueRuns | null {
  const first = nextRunAfter(s, after, anchor, timezone);
  if (first === null || first > now) return null;
  if (s.kind === "every") {
    const ms = parseDuration(s.every)!;
    const count = Math.floor((now - first) / ms) + 1;
    const latest = first + (count - 1) * ms;
    return { first, latest, beforeLatest: count > 1 ? latest - ms : null, count: Math.min(count, COUNT_CAP) };
  }
  let latest = first;
  let beforeLatest: number | null = null;
  let count = 1;
  while (count < COUNT_CAP) {
    const next = nextRunAfter(s, latest, anchor, timezone);
    if (next === null || next > now) return { first, latest, beforeLatest, count };
    beforeLatest = latest;
    latest = next;
    count++;
  }
  // Far behind (a per-minute job after a long downtime): ask croner for the latest directly.
  if (s.kind !== "cron") return { first, latest, beforeLatest, count };
  const [last, previous] = cronFor(s.expr, s.tz ?? timezone)
    .previousRuns(3, new Date(now + 1))
    .map((d) => d.getTime())
    .filter((t) => t <= now);
  if (last === undefined || last <= latest) return { first, latest, beforeLatest, count };
  return { first, latest: last, beforeLatest: previous ?? latest, count };
}

/**
 * Reads a user's time: ISO with an offset or Z, or a local "YYYY-MM-DDTHH:MM[:SS]" (or with a
 * space) in `timezone`. Returns the instant, or null when it is not such a time.
 */
export function parseInstant(text: string, timezone: string): number | null {
  const s = text.trim();
  const local = /^(\d{4})-(\d{2})-(\d{2})[T ](\d{2}):(\d{2})(?::(\d{2})(?:\.\d+)?)?$/.exec(s);
  if (local) {
    const [y, mo, d, h, mi, se] = local.slice(1).map((v) => Number(v ?? 0)) as [number, number, number, number, number, number];
    if (mo < 1 || mo > 12 || d < 1 || d > 31 || h > 23 || mi > 59 || se > 59) return null;
    return zonedInstant(Date.UTC(y, mo - 1, d, h, mi, se), timezone);
  }
  if (!/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}(?::\d{2}(?:\.\d+)?)?(?:Z|[+-]\d{2}:?\d{2})$/i.test(s)) return null;
  const at = Date.parse(s);
  return Number.isFinite(at) ? at : null;
}

/** The instant whose wall-clock time in `timezone` is `wall` (given as if it were UTC). */
function zonedInstant(wall: number, timezone: string): number {
  let at = wall - offsetAt(wall, timezone);
  // Near a DST change the offset at the guess may differ from the offset at the answer.
  at = wall - offsetAt(at, timezone);
  return at;
}

function offsetAt(at: number, timezone: string): number {
  const parts = new Intl.DateTimeFormat("en-US", {
    timeZone: timezone,
    hourCycle: "h23",
    year: "numeric",
    month: "2-digit",
    day: "2-digit",
    hour: "2-digit",
    minute: "2-digit",
    second: "2-digit",
  }).formatToParts(at);
  const get = (t: string) => Number(parts.find((p) => p.type === t)?.value);
  const asUtc = Date.UTC(get("year"), get("month") - 1, get("day"), get("hour"), get("minute"), get("second"));
  return asUtc - Math.floor(at / 1000) * 1000;
}

/** `cron "0 9 * * *" (Europe/Berlin)`, `every 30m`, `at 2026-11-23T08:00:00.000Z`. */
export function describeSchedule(s: Schedule, timezone: string): string {
  switch (s.kind) {
    case "cron":
      return `cron "${s.expr}" (${s.tz ?? timezone})`;
    case "every":
      return `every ${s.every}`;
    case "at":
      return `at ${new Date(Date.parse(s.at)).toISOString()}`;
    default:
      return s satisfies never;
  }
}

export function formatMs(ms: number): string {
  if (ms % 3_600_000 === 0) return `${ms / 3_600_000}h`;
  if (ms % 60_000 === 0) return `${ms / 60_000}m`;
  if (ms % 1000 === 0) return `${ms / 1000}s`;
  return `${ms}ms`;
}
