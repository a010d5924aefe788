// A new job from what a person or the agent typed: `hearth cron add` flags, the cron_add tool,
// the daemon's `cron.add` operation. Every problem is a CronInputError that says what is
// accepted; nothing is written before the whole input is valid.
import { randomBytes } from "node:crypto";
import type { DeliveryTarget } from "../channels/channel.ts";
import { parseDuration } from "../fields/config-fields.ts";
import { DELIVERY_HELP, jobSchema, parseDeliveryText, type Delivery, type Job, type JobRules, type Schedule } from "./job.ts";
import { CRON_HELP, checkSchedule, formatMs, isTimeZone, parseInstant, TZ_HELP } from "./schedule.ts";

/** The fields of a new job, as text. Names follow the CLI flags. */
export interface JobInput {
  name?: string | undefined;
  cron?: string | undefined;
  tz?: string | undefined;
  every?: string | undefined;
  at?: string | undefined;
  message?: string | undefined;
  session?: string | undefined;
  deliver?: string | undefined;
  catchUp?: string | undefined;
  /** Run as a background task (`--task`): the job's run only starts it, and the task reports back. */
  task?: boolean | undefined;
}

/** The input is not a valid job; the message says what is accepted. */
export class CronInputError extends Error {
  override name = "CronInputError";
}

export interface NewJobContext extends JobRules {
  now: number;
  createdBy: "cli" | "agent";
  /** Where `deliver: origin` points: the chat the request came from; null when unknown. */
  origin: DeliveryTarget | null;
  /** How a field is called to the one who typed it: `--cron` on the command line, `cron` for the agent. */
  field: (name: keyof JobInput) => string;
  /** Used when `deliver` is absent. */
  defaultDelivery: "origin" | "owner";
  /** Taken ids; the new one avoids them. */
  takenIds: ReadonlySet<string>;
}

export const cliField = (name: keyof JobInput): string => (name === "message" ? "--message" : name === "catchUp" ? "--catch-up" : `--${name}`);

export function buildJob(input: JobInput, ctx: NewJobContext): Job {
  const f = ctx.field;
  const name = input.name?.trim();
  if (!name) throw new CronInputError(`${f("name")} is required: a short name for the job, e.g. "Morning briefing".`);
  if (name.length > 200) throw new CronInputError(`${f("name")} is too long (at most 200 characters).`);
  const prompt = input.message?.trim();
  if (!prompt) throw new CronInputError(`${f("message")} is required: what Hearth should do or say when the job runs.`);
  if (prompt.length > 20_000) throw new CronInputError(`${f("message")} is too long (at most 20,000 characters).`);

  const schedule = buildSchedule(input, ctx);
  const session = input.session?.trim() || "main";
  if (session !== "main" && session !== "isolated") {
    throw new CronInputError(`${f("session")} must be "main" (the owner's conversation) or "isolated" (the job's own session), not "${session}".`);
  }
  const delivery = buildDelivery(input.deliver?.trim() || ctx.defaultDelivery, ctx);
  const catchUp = input.catchUp?.trim() || undefined;
  if (catchUp !== undefined && parseDuration(catchUp) === null) {
    throw new CronInputError(`${f("catchUp")} "${catchUp}" is not a duration: use e.g. 1h, 30m or 0 (never catch up).`);
  }
  const job = jobSchema.parse({
    id: newJobId(ctx.takenIds),
    name,
    schedule,
    prompt,
    session,
    delivery,
    ...(catchUp !== undefined ? { catchUp } : {}),
    ...(input.task ? { task: true } : {}),
    createdAt: new Date(ctx.now).toISOString(),
    createdBy: ctx.createdBy,
  });
  return job;
}

function buildSchedule(input: JobInput, ctx: NewJobContext): Schedule {
  const f = ctx.field;
  const given = (["cron", "every", "at"] as const).filter((k) => input[k]?.trim());
  const accepted = `${f("cron")} "EXPR" (${CRON_HELP}), ${f("every")} DURATION (e.g. 30m or 2h, at least ${formatMs(ctx.minEveryMs)}) or ${f("at")} TIME (ISO, e.g. 2026-11-23T09:00:00+01:00; without an offset it is read in ${ctx.timezone})`;
  if (given.length !== 1) {
    throw new CronInputError(`${given.length === 0 ? "A schedule is required" : `Give only one schedule, not ${given.map(f).join(" and ")}`}: ${accepted}.`);
  }
  const tz = input.tz?.trim();
  if (tz && given[0] !== "cron") throw new CronInputError(`${f("tz")} only applies to ${f("cron")}.`);
  let schedule: Schedule;
  switch (given[0]!) {
    case "cron":
      if (tz && !isTimeZone(tz)) throw new CronInputError(`${f("tz")} "${tz}" is not a time zone: use ${TZ_HELP}.`);
      schedule = { kind: "cron", expr: input.cron!.trim().replace(/\s+/g, " "), tz: tz || ctx.timezone };
      break;
    case "every":
      schedule = { kind: "every", every: input.every!.trim() };
      break;
    case "at": {
      const at = parseInstant(input.at!, ctx.timezone);
      if (at === null) throw new CronInputError(`${f("at")} "${input.at!.trim()}" is not a time: use an ISO time such as 2026-11-23T09:00:00Z, 2026-11-23T09:00+01:00 or 2026-11-23T09:00 (read in ${ctx.timezone}).`);
      if (at <= ctx.now) {
        throw new CronInputError(`${f("at")} ${new Date(at).toISOString()} is in the past (it is now ${new Date(ctx.now).toISOString()}): give a time in the future.`);
      }
      schedule = { kind: "at", at: new Date(at).toISOString() };
      break;
    }
  }
  const problem = checkSchedule(schedule, ctx);
  if (problem) throw new CronInputError(`${f(given[0]!)} ${problem}.`);
  return schedule;
}

function buildDelivery(text: string, ctx: NewJobContext): Delivery {
  if (text === "origin") {
    // Without a known origin (a command line with no chat behind it), the owner's last chat.
    return ctx.origin ? { to: "origin", ...ctx.origin } : { to: "owner" };
  }
  const d = parseDeliveryText(text);
  if (!d) throw new CronInputError(`${ctx.field("deliver")} must be ${DELIVERY_HELP}, not "${text}".`);
  return d;
}

function newJobId(taken: ReadonlySet<string>): string {
  for (;;) {
    const id = randomBytes(4).toString("hex");
    if (!taken.has(id)) return id;
  }
}
