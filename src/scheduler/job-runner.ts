// Running one job: record it as queued, put it on its session's lane like a message, and when
// the run ends record it, deliver its answer and tell the owner about anything that went wrong
// (a failed run, an answer that could not be delivered). Exactly one final record per run.
import { hearthCmd } from "../process/hearth-command.ts";
import { userTurn } from "../agent/user-turn.ts";
import type { DeliveryTarget, ReplyOutcome, ReplySink } from "../channels/channel.ts";
import type { Logger } from "../process/log.ts";
import { localDate, localTime } from "../process/time.ts";
import type { ScheduledRun, SchedulerHost } from "./host.ts";
import { sessionKeyOf, targetOf, targetText, type Job } from "./job.ts";
import type { DeliveryRecord, QueuedRun, RunLog, RunRecord, Trigger } from "./run-log.ts";

export type FinalRecord = Extract<RunRecord, { status: "ok" | "error" }>;

export interface RunnerOptions {
  host: SchedulerHost;
  runs: RunLog;
  clock: () => number;
  timezone: string;
  log: Logger;
  /** Called once per run, after its final record was written. Must not throw. */
  onFinished(record: FinalRecord, job: Job): void;
  /** Called when a run was recorded as skipped instead of queued (the budget). Must not throw. */
  onSkipped?(job: Job, reason: string): void;
}

type Outcome = { type: "ok"; text: string } | { type: "error"; error: string };

const MAX_ERROR_CHARS = 500;

export const runIdOf = (jobId: string, scheduledAt: number): string => `${jobId}@${new Date(scheduledAt).toISOString()}`;

export class JobRunner {
  readonly #o: RunnerOptions;
  /** Job id → the run of it that is queued or running. */
  readonly #inFlight = new Map<string, string>();

  constructor(opts: RunnerOptions) {
    this.#o = opts;
  }

  /** True while a run of the job is queued or running. */
  busy(jobId: string): boolean {
    return this.#inFlight.has(jobId);
  }

  /** Records the run as queued and puts it on its lane — or as skipped when the budget is spent. Returns its run id. */
  run(job: Job, scheduledAt: number, trigger: Trigger): string {
    const now = this.#o.clock();
    const place = this.#placeOf(job);
    const budget = place.type === "ready" ? this.#o.host.checkBudget?.("cron", place.sessionKey, place.sharedIn ? "shared" : "main") : undefined;
    if (budget?.type === "refuse") {
      const runId = runIdOf(job.id, scheduledAt);
      const at = new Date(now).toISOString();
      this.#o.runs.append({ status: "skipped", runId, jobId: job.id, job: job.name, scheduledAt: new Date(scheduledAt).toISOString(), reason: "budget", at });
      this.#o.log.warn("cron.run_skipped", { job: job.id, run: runId, reason: "budget", detail: budget.reason });
      this.#o.onSkipped?.(job, `budget: ${budget.reason}`);
      return runId;
    }
    const queued: QueuedRun = {
      status: "queued",
      runId: runIdOf(job.id, scheduledAt),
      jobId: job.id,
      job: job.name,
      scheduledAt: new Date(scheduledAt).toISOString(),
      trigger,
      at: new Date(now).toISOString(),
    };
    // On disk before it is on the lane: after a crash this scheduled time is known as handled.
    this.#o.runs.append(queued);
    this.resume(job, queued);
    return queued.runId;
  }

  /**
   * Puts a run that was queued before (by this or an earlier daemon) on its lane, in the scope of
   * the chat its answer goes to; a chat no job may post into (any more) gets no run.
   */
  resume(job: Job, queued: QueuedRun): void {
    const place = this.#placeOf(job);
    if (place.type === "refused") {
      void this.#complete(job, queued, this.#o.clock(), { type: "error", error: `not run: ${place.reason}` });
      return;
    }
    if (job.task) return this.#startTask(job, queued, place.sessionKey);
    this.#inFlight.set(job.id, queued.runId);
    const now = this.#o.clock();
    const item: ScheduledRun = {
      entryId: `cron:${queued.runId}`,
      turn: {
        ...userTurn({ text: jobTurnText(job, queued, this.#o.timezone, place.sharedIn !== undefined), channel: "cron", sender: job.name, at: now, timezone: this.#o.timezone }, "system"),
        ...(job.taintedBy ? { outside: `a job set up by an answer that read ${job.taintedBy}` } : {}),
      },
      ...(job.taintedBy ? { taintedBy: `this job was set up by an answer that read ${job.taintedBy}` } : {}),
      ...(place.sharedIn ? { sharedIn: place.sharedIn } : {}),
      source: { channel: "cron", sender: job.name, text: job.prompt },
      purpose: "cron",
      replyKey: `cron:${queued.runId}`,
      steerable: false,
      openReply: () => this.#openReply(job, queued),
      arrivedAt: now,
    };
    this.#o.host.submit(place.sessionKey, item);
  }

  /**
   * Where a job's run is made. Its answer's chat decides: the owner's (or none) → the job's own
   * session in main; a shared chat → that chat's scope, in the chat's session for a `main` job
   * or in `cron:<id>` for an isolated one; a chat no job may post into → refused.
   */
  #placeOf(job: Job): { type: "ready"; sessionKey: string; sharedIn?: string } | { type: "refused"; reason: string } {
    const d = job.delivery;
    if (d.to !== "chat" && d.to !== "origin") return { type: "ready", sessionKey: sessionKeyOf(job) };
    const place = this.#o.host.placeOf(targetOf(d));
    switch (place.type) {
      case "owner":
        return { type: "ready", sessionKey: sessionKeyOf(job) };
      case "refused":
        return place;
      case "shared":
        return { type: "ready", sessionKey: job.session === "main" ? place.sessionKey : sessionKeyOf(job), sharedIn: place.sessionKey };
      default:
        return place satisfies never;
    }
  }

  /**
   * A job run as a background task: the run is starting the task, recorded ok at once (delivery
   * none: the task delivers its own result, exactly once, where the job would deliver, in that
   * chat's scope).
   */
  #startTask(job: Job, queued: QueuedRun, parent: string): void {
    const host = this.#o.host;
    const startedAt = this.#o.clock();
    this.#o.runs.append({ status: "started", runId: queued.runId, jobId: job.id, at: new Date(startedAt).toISOString() });
    let outcome: Outcome;
    try {
      if (!host.spawnTask) throw new Error("background tasks are not available here");
      const id = host.spawnTask({ task: job.prompt, label: job.name, parent, to: this.#targetOf(job) ?? host.ownerTarget(), by: jobLabel(job), ...(job.taintedBy ? { outside: job.taintedBy } : {}) });
      this.#o.log.info("cron.task_started", { job: job.id, run: queued.runId, task: id });
      outcome = { type: "ok", text: "" };
    } catch (err) {
      outcome = { type: "error", error: `its background task could not start: ${errorText(err)}` };
    }
    void this.#complete(job, queued, startedAt, outcome);
  }

  /** A run that started before a crash and never finished: recorded as failed (not repeated) and reported. */
  async reportInterrupted(job: Job, queued: QueuedRun & { startedAt: string }): Promise<void> {
    await this.#complete(job, queued, Date.parse(queued.startedAt), {
      type: "error",
      error: "Hearth stopped while this run was in progress (a crash or a kill); it was not run again",
    });
  }

  /** The item joined a model run: from now on it counts as run. */
  #openReply(job: Job, queued: QueuedRun): ReplySink {
    const startedAt = this.#o.clock();
    this.#o.runs.append({ status: "started", runId: queued.runId, jobId: job.id, at: new Date(startedAt).toISOString() });
    let done = false;
    const finish = async (outcome: Outcome) => {
      if (done) return;
      done = true;
      await this.#complete(job, queued, startedAt, outcome);
    };
    return {
      textDelta: () => {},
      textReset: () => {},
      toolStarted: () => {},
      toolFinished: () => {},
      finish: (text: string, outcome: ReplyOutcome = "answered") =>
        finish(
          outcome === "answered"
            ? { type: "ok", text }
            : { type: "error", error: outcome === "stopped" ? `stopped before it finished: ${text}` : text },
        ),
      fail: (message: string) => finish({ type: "error", error: message }),
    };
  }

  /** Delivers, notifies, records, in that order. */
  async #complete(job: Job, queued: QueuedRun, startedAt: number, outcome: Outcome): Promise<void> {
    if (this.#inFlight.get(job.id) === queued.runId) this.#inFlight.delete(job.id);
    let delivery: DeliveryRecord = { status: "none" };
    let notice: string | null = null;
    if (outcome.type === "ok") {
      const target = this.#targetOf(job);
      if (target && outcome.text.trim()) {
        const to = targetText(target);
        try {
          const sent = await this.#o.host.send(target, outcome.text, jobLabel(job));
          delivery = { status: sent.type === "kept" ? "mailbox" : "delivered", to: targetText(sent.to) };
        } catch (err) {
          const error = errorText(err);
          delivery = { status: "failed", to, error };
          notice = `⚠️ Scheduled job "${job.name}" (${job.id}) ran, but its answer could not be delivered to ${to} (${error}). Here it is:\n\n${outcome.text}`;
        }
      }
    } else {
      notice = `⚠️ Scheduled job "${job.name}" (${job.id}) failed (${this.#when(queued)}): ${clip(outcome.error)}\nRun history: cron/runs.jsonl in the Hearth home; \`${hearthCmd("cron list")}\` shows the job.`;
    }
    const notified = notice === null ? undefined : await this.#notifyOwner(notice, job);
    const now = this.#o.clock();
    const record: FinalRecord = {
      status: outcome.type,
      runId: queued.runId,
      jobId: job.id,
      job: job.name,
      scheduledAt: queued.scheduledAt,
      trigger: queued.trigger,
      at: new Date(now).toISOString(),
      startedAt: new Date(startedAt).toISOString(),
      durationMs: now - startedAt,
      ...(outcome.type === "error" ? { error: clip(outcome.error) } : {}),
      delivery,
      ...(notified !== undefined ? { notified } : {}),
    };
    this.#o.runs.append(record);
    const log = this.#o.log;
    if (record.status === "ok" && delivery.status !== "failed") log.info("cron.run_ok", { job: job.id, run: queued.runId, delivery: delivery.status, to: delivery.to });
    else log.warn("cron.run_failed", { job: job.id, run: queued.runId, error: record.error, delivery: delivery.status, deliveryError: delivery.error, notified });
    this.#o.onFinished(record, job);
  }

  #targetOf(job: Job): DeliveryTarget | null {
    const d = job.delivery;
    switch (d.to) {
      case "none":
        return null;
      case "owner":
        return this.#o.host.ownerTarget();
      case "chat":
      case "origin":
        return targetOf(d);
      default:
        return d satisfies never;
    }
  }

  async #notifyOwner(text: string, job: Job): Promise<boolean> {
    const to = this.#o.host.ownerTarget();
    try {
      await this.#o.host.send(to, text, jobLabel(job));
      return true;
    } catch (err) {
      this.#o.log.error("cron.notice_undelivered", { job: job.id, to: targetText(to), error: errorText(err) });
      return false;
    }
  }

  #when(q: QueuedRun): string {
    const at = Date.parse(q.scheduledAt);
    return q.trigger === "manual" ? "run by hand" : `due ${localDate(at, this.#o.timezone)} ${localTime(at, this.#o.timezone)}`;
  }
}

/** The user turn of a job run: what it is, then the job's prompt. */
function jobTurnText(job: Job, q: QueuedRun, timezone: string, shared: boolean): string {
  const at = Date.parse(q.scheduledAt);
  const why =
    q.trigger === "manual"
      ? "started by hand"
      : q.trigger === "catch-up"
        ? `due at ${localTime(at, timezone)}, missed while Hearth was not running`
        : `due at ${localTime(at, timezone)}`;
  const where = job.delivery.to === "none" ? "Your answer is not sent anywhere." : shared ? "Your answer is posted in the shared chat this job is for." : "Your answer is sent to the owner as a message.";
  return `Scheduled job "${job.name}" (${why}). This is not a message from the owner: do what the job asks. ${where}\n\n${job.prompt}`;
}

/** How a job's message is labelled in the terminal's mailbox. */
const jobLabel = (job: Job): string => `cron job "${job.name}" (${job.id})`;
const errorText = (err: unknown): string => (err instanceof Error ? err.message : String(err));
const clip = (s: string): string => (s.length > MAX_ERROR_CHARS ? `${s.slice(0, MAX_ERROR_CHARS)}…` : s);
