// The agent's cron tools: cron_add, cron_list, cron_remove. The tool policy keeps them in the
// owner's main scope (MAIN_ONLY_TOOLS), whatever a shared chat's model asks for.
import { chatAddressHelp } from "../channels/registry.ts";
import { z } from "zod";
import { defineTool, type Tool } from "../agent/tool.ts";
import type { JobInput } from "./job-input.ts";
import type { JobView } from "./view.ts";

/** What the tools need from the scheduler. Each method throws an Error whose message the model can act on. */
export interface CronManager {
  /** Adds a job; `sessionKey` is where the request came from (`deliver: origin`). */
  add(input: JobInput, by: { createdBy: "agent"; sessionKey: string }): JobView;
  /** What `add` would refuse (bad input, a chat no job may post into), as the model reads it; null: it would add it. Writes nothing. */
  check(input: JobInput, by: { createdBy: "agent"; sessionKey: string }): string | null;
  list(): JobView[];
  remove(id: string): JobView;
}

export function createCronTools(cron: CronManager): Tool[] {
  return [
    defineTool({
      name: "cron_add",
      description:
        "Schedule a task or reminder: give exactly one of cron, every or at. When it runs, you get `message` as an instruction and your answer is sent (default: to this chat).",
      input: z.object({
        name: z.string().describe("Short name, e.g. Morning briefing"),
        message: z.string().describe("What to do or say when it runs, as an instruction to yourself"),
        cron: z.string().optional().describe('Cron expression, 5 fields, e.g. "0 9 * * 1-5"'),
        tz: z.string().optional().describe("IANA time zone for cron; default: the owner's"),
        every: z.string().optional().describe('Interval, e.g. "2h"'),
        at: z.string().optional().describe("One time, ISO 8601, e.g. 2026-11-23T09:00:00+01:00"),
        session: z.enum(["main", "isolated"]).optional().describe("main: in this conversation (default); isolated: its own session"),
        deliver: z.string().optional().describe(`origin (this chat, default), owner, none, ${chatAddressHelp()}`),
        task: z.boolean().optional().describe("true: each run starts a background task that reports back when done (long work)"),
      }),
      readOnly: false,
      summarize: (input) => input.name,
      // Refused before anyone is asked to approve it: a bad schedule, a chat no job may post into.
      precheck: (input, ctx) => cron.check(input, { createdBy: "agent", sessionKey: ctx.sessionKey }),
      async execute(input, ctx) {
        try {
          const job = cron.add(input, { createdBy: "agent", sessionKey: ctx.sessionKey });
          return { content: `Scheduled "${job.name}" (id ${job.id}): ${job.scheduleText}, next run ${job.nextRunAt ?? "none"}, delivery ${job.deliver}.` };
        } catch (err) {
          return { content: (err as Error).message, isError: true };
        }
      },
    }),
    defineTool({
      name: "cron_list",
      description: "List the scheduled jobs with their schedule, next run and last result.",
      input: z.object({}),
      readOnly: true,
      async execute() {
        const jobs = cron.list();
        if (jobs.length === 0) return { content: "No scheduled jobs." };
        return { content: jobs.map((j) => `${j.id} · ${j.name} · ${j.scheduleText} · next ${j.nextRunAt ?? "none"} · last ${j.lastStatus ?? "never run"}${j.enabled ? "" : " · disabled"} · ${j.prompt.slice(0, 120)}`).join("\n") };
      },
    }),
    defineTool({
      name: "cron_remove",
      description: "Delete a scheduled job by its id (see cron_list).",
      input: z.object({ id: z.string() }),
      readOnly: false,
      summarize: (input) => input.id,
      async execute(input) {
        try {
          const job = cron.remove(input.id);
          return { content: `Removed "${job.name}" (${job.id}).` };
        } catch (err) {
          return { content: (err as Error).message, isError: true };
        }
      },
    }),
  ];
}
