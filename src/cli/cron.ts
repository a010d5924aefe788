// `hearth cron list [--json] | add … | rm ID | run ID`: through the daemon when it runs (it
// reschedules at once), directly on cron/jobs.json otherwise (the daemon picks the jobs up when
// it starts). `run` needs the daemon: only the daemon runs jobs.
import type { Config } from "../config/schema.ts";
import { loadConfig } from "../config/config.ts";
import { systemTimeZone } from "../fields/config-fields.ts";
import { describeDamaged, listDamaged } from "../gateway/upkeep/damaged-state.ts";
import { homePaths } from "../config/home.ts";
import type { JobInput } from "../scheduler/job-input.ts";
import type { JobView } from "../scheduler/view.ts";
import { localDate, localTime } from "../process/time.ts";
import { createLogger } from "../process/log.ts";
import { hearthCmd } from "../process/hearth-command.ts";
import { parse, UsageError } from "./args.ts";
import { connectDaemon, type GatewayClient } from "./client.ts";

interface CronIO {
  stdout: NodeJS.WritableStream;
  stderr: NodeJS.WritableStream;
}

const ADD_OPTIONS = {
  name: { type: "string" },
  cron: { type: "string" },
  tz: { type: "string" },
  every: { type: "string" },
  at: { type: "string" },
  message: { type: "string", short: "m" },
  session: { type: "string" },
  deliver: { type: "string" },
  "catch-up": { type: "string" },
  task: { type: "boolean" },
} as const;

export type CronAction =
  | { action: "list"; json: boolean }
  | { action: "add"; input: JobInput }
  | { action: "remove"; id: string }
  | { action: "run"; id: string };

/** Checks the command line (and a new job's fields); throws UsageError. Opens no connection. */
export async function parseCron(home: string, args: string[]): Promise<CronAction> {
  const [action, ...rest] = args;
  switch (action) {
    case "list": {
      const { values } = parse(rest, { json: { type: "boolean" } });
      return { action: "list", json: values.json === true };
    }
    case "add": {
      const { values } = parse(rest, ADD_OPTIONS);
      const input: JobInput = { ...values, catchUp: values["catch-up"] };
      await checkInput(input, loadConfig({ home }));
      return { action: "add", input };
    }
    case "rm":
    case "remove":
      return { action: "remove", id: oneId(rest, action) };
    case "run":
      return { action: "run", id: oneId(rest, action) };
    default:
      throw new UsageError(action ? `Unknown cron action "${action}". Use list, add, rm or run.` : "cron needs an action: list, add, rm or run.");
  }
}

export async function runCron(home: string, args: string[], io: CronIO): Promise<number> {
  const cmd = await parseCron(home, args);
  switch (cmd.action) {
    case "list":
      return withJobs(home, async (ops) => {
        const jobs = (await ops.call("cron.list", {})) as JobView[];
        io.stdout.write(cmd.json ? `${JSON.stringify(jobs, null, 2)}\n` : formatJobs(jobs, timezoneOf(home)));
        for (const d of listDamaged(home).filter((x) => x.file === "cron/jobs.json")) io.stderr.write(`Note: ${describeDamaged(d)}.\n`);
        return 0;
      });
    case "add":
      return withJobs(home, async (ops) => {
        const job = (await ops.call("cron.add", { ...cmd.input })) as JobView;
        io.stdout.write(`Added job ${job.id} "${job.name}": ${job.scheduleText}, next run ${when(job.nextRunAt, timezoneOf(home))}, delivery ${job.deliver}.\n`);
        if (!ops.daemon) io.stdout.write(`Hearth is not running: the job runs once it is started (${hearthCmd("start")}).\n`);
        return 0;
      });
    case "remove":
      return withJobs(home, async (ops) => {
        const job = (await ops.call("cron.remove", { id: cmd.id })) as JobView;
        io.stdout.write(`Removed job ${job.id} "${job.name}".\n`);
        return 0;
      });
    case "run": {
      const daemon = await connectDaemon(homePaths(home).socket);
      if (!daemon) {
        io.stderr.write(`hearth: Hearth is not running on ${home}, and only the daemon runs jobs. Start it with: ${hearthCmd("start")}\n`);
        return 1;
      }
      try {
        const { runId, job } = (await daemon.rpc("cron.run", { id: cmd.id })) as { runId: string; job: JobView };
        io.stdout.write(`Running job ${job.id} "${job.name}" now (run ${runId}); its answer goes to: ${job.deliver}. \`${hearthCmd("cron list")}\` shows how it went.\n`);
        return 0;
      } finally {
        await daemon.close();
      }
    }
    default:
      cmd satisfies never;
      return 2;
  }
}

interface JobOps {
  daemon: boolean;
  call(method: string, params: Record<string, unknown>): Promise<unknown>;
}

/** Runs `fn` against the daemon if one answers, else against jobs.json directly. */
async function withJobs(home: string, fn: (ops: JobOps) => Promise<number>): Promise<number> {
  const paths = homePaths(home);
  const daemon: GatewayClient | null = await connectDaemon(paths.socket);
  if (daemon) {
    try {
      return await fn({ daemon: true, call: (m, p) => daemon.rpc(m, p) });
    } finally {
      await daemon.close();
    }
  }
  // The scheduler's own code, loaded only when no daemon answers.
  const [{ CronService }, { chatPlaces }, { PairingStore }] = await Promise.all([import("../scheduler/service.ts"), import("../gateway/access/chat-places.ts"), import("../gateway/access/pairing.ts")]);
  const config = loadConfig({ home });
  const log = createLogger({ level: "silent" });
  // The chats a job may post into, as the daemon would judge them (the owner's last Discord DM is known only to it).
  const service = CronService.open({ paths, config, log, placeOf: chatPlaces(config, PairingStore.open(paths.pairing, log)) });
  const problem = service.problem();
  return fn({
    daemon: false,
    call: async (method, p) => {
      if (problem && method === "cron.list") throw new Error(`${paths.jobs} has an error: ${problem}. Fix the file (it must match what \`${hearthCmd("cron add")}\` writes).`);
      switch (method) {
        case "cron.list":
          return service.list();
        case "cron.add":
          return service.add(p as JobInput, { createdBy: "cli" });
        case "cron.remove":
          return service.remove(String(p.id));
        default:
          throw new Error(`unknown method ${method}`);
      }
    },
  });
}

/** Bad input is bad usage (exit 2): checked here, before anything is sent or written. */
async function checkInput(input: JobInput, config: Config): Promise<void> {
  const [{ buildJob, cliField, CronInputError }, { MIN_EVERY_MS }] = await Promise.all([import("../scheduler/job-input.ts"), import("../scheduler/service.ts")]);
  try {
    buildJob(input, {
      now: Date.now(),
      timezone: config.timezone,
      minEveryMs: MIN_EVERY_MS,
      createdBy: "cli",
      origin: null,
      field: cliField,
      defaultDelivery: "owner",
      takenIds: new Set(),
    });
  } catch (err) {
    if (err instanceof CronInputError) throw new UsageError(err.message);
    throw err;
  }
}

function oneId(rest: string[], action: string): string {
  const { positionals } = parse(rest, {}, true);
  if (positionals.length !== 1) throw new UsageError(`cron ${action} needs exactly one job id: cron ${action} ID (\`${hearthCmd("cron list")}\` shows the ids).`);
  return positionals[0]!;
}

function timezoneOf(home: string): string {
  try {
    return loadConfig({ home }).timezone;
  } catch {
    return systemTimeZone();
  }
}

function when(iso: string | null, timezone: string): string {
  if (!iso) return "none";
  const at = Date.parse(iso);
  return `${localDate(at, timezone)} ${localTime(at, timezone)} ${timezone}`;
}

export function formatJobs(jobs: JobView[], timezone: string): string {
  if (jobs.length === 0) return `No scheduled jobs. Add one with: ${hearthCmd('cron add --name N --every 1h --message "TEXT"')}\n`;
  const lines = jobs.map((j) => {
    // A job given its own zone (cron --tz) runs by that zone's clock: its times are shown in it.
    const zone = j.schedule.kind === "cron" && j.schedule.tz ? j.schedule.tz : timezone;
    const last = j.lastStatus ? `${j.lastStatus}${j.lastDelivery && j.lastStatus === "ok" ? ` (${j.lastDelivery})` : ""} ${when(j.lastRunAt, zone)}` : "never run";
    // "paused", the dashboard's word (its Pause and Resume buttons).
    const flags = [j.enabled ? "" : "paused", j.running ? "running" : ""].filter(Boolean).join(", ");
    return [
      `${j.id}  ${j.name}${flags ? `  [${flags}]` : ""}`,
      `    ${j.scheduleText} · ${j.session} session · delivery ${j.deliver}`,
      `    next ${when(j.nextRunAt, zone)} · last ${last}${j.lastError && j.lastStatus !== "ok" ? ` · ${j.lastError}` : ""}`,
      `    ${j.prompt.length > 100 ? `${j.prompt.slice(0, 100)}…` : j.prompt}`,
    ].join("\n");
  });
  return `${lines.join("\n\n")}\n`;
}
