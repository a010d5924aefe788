// The reply of a task's run: nothing streams to a chat. Tool names become progress lines in
// tasks.jsonl, the time cap counts from the task's first start (a run resumed after a restart has
// only what is left), and the run's end hands its text to the service, which makes the result.
import type { ReplyOutcome, ReplySink } from "../channels/channel.ts";
import type { Logger } from "../process/log.ts";
import type { TaskEnd, TaskEntry, TaskLog } from "./task-log.ts";

/** A task whose run is under way. */
export interface Running {
  entryId: string;
  /** Why Hearth stopped it, when it did (cancel_task, a cap). */
  stopReason?: TaskEnd;
  /** The result's text in place of the run's (the budget's reason), when the stop gave one. */
  stopBody?: string;
  timer?: NodeJS.Timeout;
  /** A cancel's result on its way: the run's end waits for it, so its entry closes only after it. */
  ending?: Promise<unknown>;
}

/** How a task's run ended: its text without Hearth's own notices (the turn cap's "Say continue"). */
export interface RunEnd {
  body: string;
  outcome: ReplyOutcome;
  /** The run stopped at the turn cap. */
  turnCapReached: boolean;
}

export interface TaskReplyDeps {
  tasks: TaskLog;
  log: Logger;
  clock: () => number;
  maxMinutes: number;
  /** Stops the task's run (its time cap is reached). Must not throw. */
  stop: () => void;
  /** Called once when the run ends, after its timer is cleared; must not reject. */
  finish: (end: RunEnd) => Promise<void>;
}

const MAX_PROGRESS_LINES = 200;

export function openTaskReply(t: TaskEntry, running: Running, deps: TaskReplyDeps): ReplySink {
  const id = t.spawned.id;
  const { tasks, log, clock } = deps;
  if (t.startedAt === undefined) {
    try {
      tasks.append({ type: "started", id, at: clock() });
    } catch (error) {
      // Its time cap then counts from this start only, in this daemon's life.
      log.warn("task.started_write_failed", { task: id, error });
      t.startedAt = clock();
    }
  }
  const capMs = Math.max(0, deps.maxMinutes * 60_000 - (clock() - t.startedAt!));
  running.timer = setTimeout(() => {
    if (running.stopReason) return;
    running.stopReason = "over-time";
    log.warn("task.over_time", { task: id, maxMinutes: deps.maxMinutes });
    deps.stop();
  }, capMs);
  running.timer.unref();
  let lines = 0;
  let turnCapReached = false;
  const notices: string[] = [];
  const finish = (text: string, outcome: ReplyOutcome): Promise<void> => {
    clearTimeout(running.timer);
    return deps.finish({ body: notices.reduce((b, n) => b.replace(n, ""), text), outcome, turnCapReached });
  };
  return {
    textDelta: (delta, notice) => {
      if (notice) notices.push(delta);
    },
    textReset: () => {},
    turnCapReached: () => {
      turnCapReached = true;
    },
    toolStarted: (name) => {
      if (++lines > MAX_PROGRESS_LINES) return;
      try {
        tasks.append({ type: "progress", id, line: name, at: clock() });
      } catch (error) {
        log.warn("task.progress_write_failed", { task: id, error });
      }
    },
    toolFinished: () => {},
    finish: (text, outcome = "answered") => finish(text, outcome),
    fail: (message) => finish(message, "failed"),
  };
}
