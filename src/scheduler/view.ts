// A job as `hearth cron list`, the cron tools and the daemon's `cron.list` show it: its
// definition, flattened, with its status (next run, last run and how it went).
import { describeDelivery, type DeliveryStatus, type Job, type RunStatus, type Schedule } from "./job.ts";
import { describeSchedule } from "./schedule.ts";

export interface JobView {
  id: string;
  name: string;
  enabled: boolean;
  schedule: Schedule;
  /** `cron "0 9 * * *" (Europe/Berlin)`, `every 30m`, `at 2026-…Z`. */
  scheduleText: string;
  prompt: string;
  session: "main" | "isolated";
  /** `owner`, `none`, `telegram:123`, `origin (cli)`. */
  deliver: string;
  catchUp: string;
  createdAt: string | null;
  nextRunAt: string | null;
  lastRunAt: string | null;
  lastStatus: RunStatus | null;
  lastError: string | null;
  lastDelivery: DeliveryStatus | null;
  /** A run of it is queued or running now (only a running daemon knows). */
  running: boolean;
}

export function viewOf(job: Job, opts: { nextRunAt: number | null; running: boolean; timezone: string }): JobView {
  const s = job.state;
  return {
    id: job.id,
    name: job.name,
    enabled: job.enabled,
    schedule: job.schedule,
    scheduleText: describeSchedule(job.schedule, opts.timezone),
    prompt: job.prompt,
    session: job.session,
    deliver: describeDelivery(job.delivery),
    catchUp: job.catchUp,
    createdAt: job.createdAt ?? null,
    nextRunAt: opts.nextRunAt === null ? null : new Date(opts.nextRunAt).toISOString(),
    lastRunAt: s.lastRunAt ?? null,
    lastStatus: s.lastStatus ?? null,
    lastError: s.lastError ?? null,
    lastDelivery: s.lastDelivery ?? null,
    running: opts.running,
  };
}
