// The scheduler as the rest of Hearth sees it: the jobs (jobs.json), the engine that decides
// when they run, the runner that runs them, the heartbeat, and the operations of the CLI and
// the agent's tools. `open` only reads; `attach` connects it to a gateway; `startEngine` (the
// daemon only) recovers what the last run left behind and starts the timers.
import { hearthCmd } from "../process/hearth-command.ts";
import type { DeliveryTarget } from "../channels/channel.ts";
import type { PlaceOfChat } from "../channels/chat-place.ts";
import type { Tool } from "../agent/tool.ts";
import type { Logger } from "../process/log.ts";
import { readNote } from "../memory/workspace-files.ts";
import type { Config } from "../config/schema.ts";
import { parseDuration } from "../fields/config-fields.ts";
import type { HomePaths } from "../config/home.ts";
import { Engine, realTimers, type Timers } from "./engine.ts";
import { Heartbeat, type TickReport } from "./heartbeat.ts";
import { CLI_TARGET, type SchedulerHost } from "./host.ts";
import { buildJob, cliField, CronInputError, type JobInput, type NewJobContext } from "./job-input.ts";
import { JobRunner, type FinalRecord } from "./job-runner.ts";
import { JobsFileError, JobStore, type LoadResult } from "./job-store.ts";
import { jobSchema, targetOf, targetText, type Job, type JobState } from "./job.ts";
import { RunLog, type QueuedRun, type RecentRun } from "./run-log.ts";
import { createCronTools, type CronManager } from "./tools.ts";
import { viewOf, type JobView } from "./view.ts";

/** The shortest `every` a job may have. */
export const MIN_EVERY_MS = 10_000;

export interface CronServiceOptions {
  paths: Pick<HomePaths, "jobs" | "runs">;
  config: Config;
  log: Logger;
  clock?: () => number;
  timers?: Timers;
  /** Default MIN_EVERY_MS; tests of fast intervals pass less. */
  minEveryMs?: number;
  /**
   * The daemon: a damaged jobs.json is set aside at open and the valid jobs kept (JobStore.load).
   * Without it (the CLI with no daemon running) the file is only read, and its problem reported.
   */
  setAsideDamaged?: boolean;
  /**
   * Whose chat a job's delivery names, when no host is attached (the CLI with no daemon running:
   * from config.json and pairing.json). With neither, a job may deliver only to the owner.
   */
  placeOf?: PlaceOfChat;
}

export type AddedBy = { createdBy: "cli" } | { createdBy: "agent"; sessionKey: string };

/** No job has this id. */
export class UnknownJobError extends Error {
  override name = "UnknownJobError";
  constructor(id: string) {
    super(`No scheduled job has the id "${id}". \`${hearthCmd("cron list")}\` (or the cron_list tool) shows the ids.`);
  }
}

export class CronService implements CronManager {
  readonly #o: Required<Omit<CronServiceOptions, "timers" | "placeOf">> & Pick<CronServiceOptions, "placeOf"> & { timers: Timers };
  readonly #store: JobStore;
  readonly #engine: Engine;
  #jobs: Job[] = [];
  #host: SchedulerHost | null = null;
  #runs: RunLog | null = null;
  #runner: JobRunner | null = null;
  #heartbeat: Heartbeat | null = null;

  private constructor(opts: CronServiceOptions) {
    this.#o = { clock: Date.now, timers: realTimers, minEveryMs: MIN_EVERY_MS, setAsideDamaged: false, ...opts };
    const { config, log } = this.#o;
    this.#store = new JobStore(opts.paths.jobs, { timezone: config.timezone, minEveryMs: this.#o.minEveryMs }, log);
    this.#engine = new Engine({
      clock: this.#o.clock,
      timers: this.#o.timers,
      log,
      timezone: config.timezone,
      hooks: {
        fire: (job, at, trigger) => {
          this.#runner?.run(job, at, trigger);
          this.#saveState();
        },
        skip: (job, first, last, reason, missed) => this.#recordSkip(job, first, last, reason, missed),
        busy: (id) => this.#runner?.busy(id) ?? false,
      },
    });
  }

  /** Reads jobs.json. Starts nothing; see `setAsideDamaged` for what happens to a damaged file. */
  static open(opts: CronServiceOptions): CronService {
    const service = new CronService(opts);
    if (opts.setAsideDamaged) service.#adopt(service.#store.load(service.#o.clock()));
    else {
      const r = service.#store.read();
      if (r.ok) service.#adopt(r.jobs);
      else opts.log.error("cron.jobs_invalid", { file: opts.paths.jobs, problem: r.problem, action: "no job runs until the file is fixed" });
    }
    return service;
  }

  tools(): Tool[] {
    return createCronTools(this);
  }

  /** Connects the scheduler to a gateway: lanes, channels, the owner's whereabouts. */
  attach(host: SchedulerHost): void {
    this.#host = host;
  }

  /**
   * The daemon: recovers the runs the last daemon left queued or cut off, watches jobs.json and
   * starts the engine (missed runs inside their catch-up window run now) and the heartbeat.
   * Call once the channels are up: runs may deliver at once.
   */
  async startEngine(): Promise<void> {
    const host = this.#host;
    if (!host) throw new Error("CronService.startEngine: call attach(host) first");
    const { config, log, paths } = this.#o;
    const { runs, recovery } = RunLog.open(paths.runs, log);
    this.#runs = runs;
    this.#runner = new JobRunner({ host, runs, clock: this.#o.clock, timezone: config.timezone, log, onFinished: (r, job) => this.#recordFinished(r, job), onSkipped: (job, reason) => this.#setState(job.id, { lastStatus: "skipped", lastError: reason }) });
    if (this.#store.changedOnDisk()) this.#onFileChange(this.#store.read());
    for (const [id, at] of recovery.lastScheduled) this.#engine.markHandled(id, at);
    for (const q of recovery.interrupted) void this.#runner.reportInterrupted(this.#find(q.jobId) ?? stubJob(q), q);
    for (const q of recovery.queued) this.#resume(q);
    await this.#store.watch((r) => this.#onFileChange(r));
    this.#engine.start();
    const everyMs = parseDuration(config.heartbeat.every) ?? 0;
    if (everyMs > 0) {
      this.#heartbeat = new Heartbeat({
        host,
        clock: this.#o.clock,
        timers: this.#o.timers,
        log: log.child({ component: "heartbeat" }),
        everyMs,
        activeHours: config.heartbeat.activeHours,
        timezone: config.timezone,
        pauseAfterIdleMs: parseDuration(config.heartbeat.pauseAfterIdle) ?? 0,
        // Through the memory opener: HEARTBEAT.md linked to ../config.json must not reach a prompt.
        readChecklist: () => readNote(config.workspace, "HEARTBEAT.md", { kind: "main" }, 20_000, log),
      });
      this.#heartbeat.start();
    }
    log.info("cron.started", { jobs: this.#jobs.length, resumed: recovery.queued.length, interrupted: recovery.interrupted.length, heartbeatEveryMs: everyMs });
  }

  /** `hearth heartbeat --now`: one tick that reports instead of delivering. Needs the daemon's engine. */
  heartbeatNow(): Promise<TickReport> {
    if (!this.#heartbeat) {
      throw new Error(this.#runner ? 'The heartbeat is off (heartbeat.every is "0" in config.json).' : "The heartbeat runs only in the Hearth daemon. Start it with: hearth start");
    }
    return this.#heartbeat.tryNow();
  }

  /** No new run starts after this (shutdown); runs already on a lane finish and are recorded. */
  pause(): void {
    this.#engine.stop();
    this.#heartbeat?.stop();
  }

  async stop(): Promise<void> {
    this.pause();
    await this.#store.close();
  }

  /** Why jobs.json could not be used, as last read; null when it is fine. */
  problem(): string | null {
    return this.#store.problem();
  }

  list(): JobView[] {
    return this.#jobs.map((j) => this.#view(j));
  }

  get(id: string): JobView {
    const job = this.#find(id);
    if (!job) throw new UnknownJobError(id);
    return this.#view(job);
  }

  /** Validates and adds a job; throws CronInputError (bad input) or JobsFileError (jobs.json is broken now). */
  add(input: JobInput, by: AddedBy): JobView {
    let added: Job | undefined;
    this.#mutate((jobs) => {
      added = buildJob(input, this.#newJobContext(by, jobs));
      this.#checkDelivery(added, "Not scheduled");
      // A job set up by a tainted answer runs tainted: a schedule must not launder the taint.
      const outside = by.createdBy === "agent" ? (this.#host?.outsideContent?.(by.sessionKey) ?? null) : null;
      if (outside) added = { ...added, taintedBy: outside };
      return [...jobs, added];
    });
    this.#o.log.info("cron.job_added", { job: added!.id, name: added!.name, by: by.createdBy });
    return this.#view(added!);
  }

  /**
   * Replaces a job's name, schedule, message and session with `input`, checked as a new job from
   * the CLI would be; its delivery and catch-up too when `input` gives them. Its id, creation,
   * pause and run state stay.
   */
  update(id: string, input: JobInput): JobView {
    let updated: Job | undefined;
    this.#mutate((jobs) => {
      const old = jobs.find((j) => j.id === id.trim());
      if (!old) throw new UnknownJobError(id);
      const built = buildJob(input, this.#newJobContext({ createdBy: "cli" }, jobs));
      if (input.deliver?.trim()) this.#checkDelivery(built, "Not changed");
      updated = {
        ...built,
        id: old.id,
        createdAt: old.createdAt,
        createdBy: old.createdBy,
        enabled: old.enabled,
        state: old.state,
        delivery: input.deliver?.trim() ? built.delivery : old.delivery,
        catchUp: input.catchUp?.trim() ? built.catchUp : old.catchUp,
      };
      return jobs.map((j) => (j === old ? updated! : j));
    });
    this.#o.log.info("cron.job_updated", { job: updated!.id, name: updated!.name });
    return this.#view(updated!);
  }

  /**
   * What `add` would refuse, without adding: the reason (bad input, a chat no job may post into),
   * or null. The cron_add tool asks it before the owner is asked to approve the call.
   */
  check(input: JobInput, by: AddedBy): string | null {
    try {
      this.#checkDelivery(buildJob(input, this.#newJobContext(by, this.#jobs)), "Not scheduled");
      return null;
    } catch (err) {
      if (err instanceof CronInputError) return err.message;
      throw err;
    }
  }

  /** A job posts only into the owner's chats, allowed groups and paired people; throws CronInputError with the reason. */
  #checkDelivery(job: Job, refusal: string): void {
    const d = job.delivery;
    if (d.to !== "chat" && d.to !== "origin") return;
    const to = targetOf(d);
    const placeOf = this.#host ? (t: DeliveryTarget) => this.#host!.placeOf(t) : this.#o.placeOf;
    const place = placeOf ? placeOf(to) : { type: "refused" as const, reason: `${targetText(to)} cannot be checked without the daemon` };
    if (place.type === "refused") throw new CronInputError(`${refusal}: ${place.reason}.`);
  }

  #newJobContext(by: AddedBy, jobs: Job[]): NewJobContext {
    const { config, clock, minEveryMs } = this.#o;
    return {
      now: clock(),
      timezone: config.timezone,
      minEveryMs,
      createdBy: by.createdBy,
      origin: by.createdBy === "agent" ? this.#originOf(by.sessionKey) : CLI_TARGET,
      field: by.createdBy === "agent" ? (name) => name : cliField,
      defaultDelivery: by.createdBy === "agent" ? "origin" : "owner",
      takenIds: new Set(jobs.map((j) => j.id)),
    };
  }

  remove(id: string): JobView {
    let removed: Job | undefined;
    this.#mutate((jobs) => {
      removed = jobs.find((j) => j.id === id.trim());
      if (!removed) throw new UnknownJobError(id);
      return jobs.filter((j) => j !== removed);
    });
    this.#o.log.info("cron.job_removed", { job: removed!.id });
    return this.#view(removed!);
  }

  /** Pauses (false) or resumes (true) a job; a paused job keeps its place in jobs.json but never runs on schedule. */
  setEnabled(id: string, enabled: boolean): JobView {
    let changed: Job | undefined;
    this.#mutate((jobs) => {
      const job = jobs.find((j) => j.id === id.trim());
      if (!job) throw new UnknownJobError(id);
      changed = { ...job, enabled };
      return jobs.map((j) => (j === job ? changed! : j));
    });
    this.#o.log.info(enabled ? "cron.job_resumed" : "cron.job_paused", { job: changed!.id });
    return this.#view(changed!);
  }

  /** The newest finished and skipped runs, newest first; [] outside the daemon (no run log open). */
  recentRuns(limit = 20): RecentRun[] {
    return this.#runs?.recent(limit) ?? [];
  }

  /** `hearth cron run ID`: runs the job now, outside its schedule. Needs the daemon's engine. */
  runNow(id: string): { runId: string; job: JobView } {
    if (!this.#runner) throw new Error(`Jobs run only in the Hearth daemon. Start it with: ${hearthCmd("start")}`);
    if (this.#store.changedOnDisk()) this.#onFileChange(this.#store.read());
    const job = this.#find(id);
    if (!job) throw new UnknownJobError(id);
    if (this.#runner.busy(job.id)) throw new Error(`Job "${job.name}" (${job.id}) is already queued or running; wait for it to finish.`);
    const runId = this.#runner.run(job, this.#o.clock(), "manual");
    return { runId, job: this.#view(job) };
  }

  // ── jobs and jobs.json ─────────────────────────────────────────────────────────────────

  #find(id: string): Job | undefined {
    return this.#jobs.find((j) => j.id === id);
  }

  #view(job: Job): JobView {
    return viewOf(job, { nextRunAt: this.#engine.nextRunAt(job), running: this.#runner?.busy(job.id) ?? false, timezone: this.#o.config.timezone });
  }

  /** Takes the jobs read from disk; the state the daemon keeps about known jobs wins over the file's. */
  #adopt(fromDisk: Job[]): void {
    const known = new Map(this.#jobs.map((j) => [j.id, j]));
    this.#jobs = fromDisk.map((j) => {
      const k = known.get(j.id);
      return k ? { ...j, state: k.state } : j;
    });
    for (const j of this.#jobs) {
      if (j.state.lastScheduledAt) this.#engine.markHandled(j.id, Date.parse(j.state.lastScheduledAt));
    }
    this.#engine.setJobs(this.#jobs);
  }

  #onFileChange(r: LoadResult): void {
    if (r.ok) this.#adopt(r.jobs);
  }

  /** Applies `change` to the jobs as they are on disk now, then writes them. */
  #mutate(change: (jobs: Job[]) => Job[]): void {
    if (this.#store.changedOnDisk() || this.#store.problem()) {
      const r = this.#store.read();
      if (!r.ok) {
        throw new JobsFileError(`${this.#store.path} has an error, so nothing was changed: ${r.problem}. Fix the file first (the jobs it held before keep running).`);
      }
      this.#adopt(r.jobs);
    }
    const next = change(this.#jobs);
    this.#store.save(this.#withSchedule(next));
    this.#jobs = next;
    this.#adopt(next);
  }

  /** Writes the jobs with fresh state; when jobs.json has an edit in progress, its state waits in memory. */
  #saveState(): void {
    try {
      if (this.#store.changedOnDisk() || this.#store.problem()) {
        const r = this.#store.read();
        if (!r.ok) return; // the owner is editing; the state is saved with the next valid write
        this.#adopt(r.jobs);
      }
      this.#store.save(this.#withSchedule(this.#jobs));
    } catch (err) {
      this.#o.log.error("cron.state_save_failed", { file: this.#store.path, error: err });
    }
  }

  #withSchedule(jobs: Job[]): Job[] {
    return jobs.map((j) => {
      const handled = this.#engine.lastHandled(j.id);
      const next = this.#engine.nextRunAt(j);
      return {
        ...j,
        state: {
          ...j.state,
          ...(handled !== undefined ? { lastScheduledAt: new Date(handled).toISOString() } : {}),
          nextRunAt: next === null ? null : new Date(next).toISOString(),
        },
      };
    });
  }

  #setState(id: string, patch: JobState): void {
    this.#jobs = this.#jobs.map((j) => (j.id === id ? { ...j, state: { ...j.state, ...patch } } : j));
    this.#saveState();
  }

  // ── runs ───────────────────────────────────────────────────────────────────────────────

  #recordSkip(job: Job, first: number, last: number, reason: string, missed: number): void {
    const iso = (t: number) => new Date(t).toISOString();
    this.#runs?.append({
      status: "skipped",
      jobId: job.id,
      job: job.name,
      scheduledAt: iso(first),
      ...(last !== first ? { until: iso(last) } : {}),
      reason,
      ...(missed > 1 ? { missed } : {}),
      at: iso(this.#o.clock()),
    });
    this.#o.log.warn("cron.run_skipped", { job: job.id, scheduledAt: iso(first), missed, reason });
    this.#setState(job.id, { lastStatus: "skipped", lastError: reason });
  }

  #recordFinished(r: FinalRecord, job: Job): void {
    if (!this.#find(job.id)) return; // removed meanwhile: the run log has it
    this.#setState(job.id, {
      lastRunAt: r.startedAt ?? r.at,
      lastStatus: r.status,
      lastDelivery: r.delivery.status,
      ...(r.status === "error" ? { lastError: r.error ?? "failed" } : r.delivery.status === "failed" ? { lastError: `not delivered: ${r.delivery.error}` } : { lastError: undefined }),
    });
  }

  /** A run queued before the last stop that never started: it runs now (unless its job is gone). */
  #resume(q: QueuedRun): void {
    const job = this.#find(q.jobId);
    if (job?.enabled) {
      this.#runner!.resume(job, q);
      return;
    }
    this.#runs!.append({
      status: "skipped",
      runId: q.runId,
      jobId: q.jobId,
      job: q.job,
      scheduledAt: q.scheduledAt,
      reason: job ? "the job was disabled before its queued run started" : "the job was removed before its queued run started",
      at: new Date(this.#o.clock()).toISOString(),
    });
  }

  /** Where a job the agent creates in `sessionKey` delivers with `origin`. */
  #originOf(sessionKey: string): DeliveryTarget | null {
    if (sessionKey.startsWith("cron:")) {
      // A job's own run creating a job: the new one delivers where its creator does.
      const parent = this.#find(sessionKey.slice(5));
      const d = parent?.delivery;
      return d && (d.to === "chat" || d.to === "origin") ? targetOf(d) : null;
    }
    return this.#host?.originOf(sessionKey) ?? null;
  }
}

function stubJob(q: QueuedRun): Job {
  return jobSchema.parse({ id: q.jobId, name: q.job, schedule: { kind: "at", at: q.scheduledAt }, prompt: "(removed)", enabled: false });
}
