// What a scheduled job is (DESIGN §9): the schema of <home>/cron/jobs.json, checked by zod when
// the daemon loads it, when the owner edits it by hand and before every write. The file is meant
// to be read and edited by people: times are ISO strings, durations are "30m", and a delivery
// may be written as a short string ("owner", "telegram:123").
import { channelDescriptor, channelIdSchema, chatAddressHelp } from "../channels/registry.ts";
import { z } from "zod";
import type { ChannelId, DeliveryTarget } from "../channels/channel.ts";
import { parseDuration } from "../fields/config-fields.ts";
import { checkSchedule, duration, isoTime, scheduleSchema, type Schedule } from "./schedule.ts";

export const JOB_ID = /^[A-Za-z0-9_-]{1,64}$/;
export const DEFAULT_CATCH_UP = "1h";

export { scheduleSchema, type Schedule };

/**
 * Where a run's answer goes. `origin` is the chat a job was created from (resolved when it was
 * created); `owner` is the owner's most recently used chat at the time of the run.
 */
export type Delivery =
  | { to: "owner" }
  | { to: "none" }
  | ({ to: "chat" } & DeliveryTarget)
  | ({ to: "origin" } & DeliveryTarget);

const target = {
  channel: channelIdSchema,
  chatId: z.string().trim().min(1),
  threadId: z.string().trim().min(1).optional(),
};

export const DELIVERY_HELP = `origin, owner, none, ${chatAddressHelp()}`;

/** "owner" | "none" | "<channel>:<chatId>[:<threadId>]" (a chat id of the channel's form, descriptor `chats`) → a delivery; null if not one of those. */
export function parseDeliveryText(text: string): Delivery | null {
  const s = text.trim();
  if (s === "owner" || s === "none") return { to: s };
  const m = /^([a-z0-9-]+):([^:\s]+)(?::([^:\s]+))?$/.exec(s);
  if (!m) return null;
  const channel = m[1] as ChannelId;
  const chatId = m[2]!;
  const chats = channelDescriptor(channel)?.chats;
  if (!chats?.pattern.test(chatId)) return null;
  return { to: "chat", channel, chatId, ...(m[3] ? { threadId: m[3] } : {}) };
}

export const deliverySchema: z.ZodType<Delivery, unknown> = z.preprocess(
  (v) => (typeof v === "string" ? (parseDeliveryText(v) ?? v) : v),
  z.discriminatedUnion(
    "to",
    [
      z.strictObject({ to: z.literal("owner") }),
      z.strictObject({ to: z.literal("none") }),
      z.strictObject({ to: z.literal("chat"), ...target }),
      z.strictObject({ to: z.literal("origin"), ...target }),
    ],
    { error: `expected a delivery: ${DELIVERY_HELP}` },
  ),
) as z.ZodType<Delivery, unknown>;

export const runStatuses = ["ok", "error", "skipped"] as const;
export type RunStatus = (typeof runStatuses)[number];
/** `mailbox`: the answer was for the terminal while no chat was open; the next `hearth chat` shows it. */
export const deliveryStatuses = ["delivered", "mailbox", "failed", "none"] as const;
export type DeliveryStatus = (typeof deliveryStatuses)[number];

/** What the daemon keeps about a job's runs. Written by the daemon; a hand edit of it is ignored. */
const stateSchema = z.object({
  /** The last scheduled time that was handled (run, or skipped); manual runs don't count. */
  lastScheduledAt: isoTime.optional(),
  lastRunAt: isoTime.optional(),
  lastStatus: z.enum(runStatuses).optional(),
  lastError: z.string().optional(),
  lastDelivery: z.enum(deliveryStatuses).optional(),
  nextRunAt: isoTime.nullable().optional(),
});
export type JobState = z.output<typeof stateSchema>;

export const jobSchema = z.strictObject({
  id: z.string().regex(JOB_ID, "expected 1–64 letters, digits, _ or -"),
  name: z.string().trim().min(1).max(200),
  schedule: scheduleSchema,
  /** What the job asks the agent to do. */
  prompt: z.string().trim().min(1).max(20_000),
  /** `main`: the owner's conversation; `isolated`: the job's own session `cron:<id>`. */
  session: z.enum(["main", "isolated"]).default("main"),
  delivery: deliverySchema.default({ to: "owner" }),
  enabled: z.boolean().default(true),
  /** A run missed while Hearth was down still runs on start if it is at most this late. */
  catchUp: duration.default(DEFAULT_CATCH_UP),
  /** Runs as a background task (tasks/): a run starts it, and its result is delivered like any task's. */
  task: z.boolean().optional(),
  /** Absent for jobs written by hand; `every` counts from here. */
  createdAt: isoTime.optional(),
  createdBy: z.enum(["cli", "agent"]).optional(),
  /**
   * Set for a job the agent added while its conversation held outside content ("a web page"):
   * its prompt may be an injected instruction, so its runs are tainted (approvals). The owner
   * clears it by rewriting the job (`hearth cron edit`) or deleting the field.
   */
  taintedBy: z.string().min(1).optional(),
  state: stateSchema.prefault({}),
});
export type Job = z.output<typeof jobSchema>;

export interface JobRules {
  /** Applies to cron expressions without `tz`. */
  timezone: string;
  /** The shortest `every` accepted. */
  minEveryMs: number;
}

/** The whole file, with the checks zod cannot express field by field. */
export function jobsFileSchema(rules: JobRules) {
  return z
    .strictObject({ version: z.literal(1).default(1), jobs: z.array(jobSchema).default([]) })
    .superRefine((file, ctx) => {
      const seen = new Set<string>();
      for (const [i, job] of file.jobs.entries()) {
        if (seen.has(job.id)) ctx.addIssue({ code: "custom", path: ["jobs", i, "id"], message: `"${job.id}" is used by two jobs; ids must be unique` });
        seen.add(job.id);
        const problem = checkSchedule(job.schedule, rules);
        if (problem) ctx.addIssue({ code: "custom", path: ["jobs", i, "schedule"], message: problem });
      }
    });
}

export const sessionKeyOf = (job: Pick<Job, "id" | "session">): string => (job.session === "main" ? "main" : `cron:${job.id}`);

export const catchUpMs = (job: Pick<Job, "catchUp">): number => parseDuration(job.catchUp) ?? 0;

/** "owner", "none", "telegram:123", "origin (cli)". */
export function describeDelivery(d: Delivery): string {
  switch (d.to) {
    case "owner":
    case "none":
      return d.to;
    case "chat":
      return targetText(d);
    case "origin":
      return `origin (${targetText(d)})`;
    default:
      return d satisfies never;
  }
}

export const targetText = (t: DeliveryTarget): string => (t.channel === "cli" ? "cli" : `${t.channel}:${t.chatId}${t.threadId ? `:${t.threadId}` : ""}`);

export function targetOf(d: Extract<Delivery, { to: "chat" | "origin" }>): DeliveryTarget {
  return { channel: d.channel, chatId: d.chatId, ...(d.threadId ? { threadId: d.threadId } : {}) };
}
