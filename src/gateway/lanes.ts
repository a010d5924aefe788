// Lanes (DESIGN §5): one active run per session, FIFO behind it, a global cap on runs, and the
// queue modes that decide what a message does while its session is busy. Nothing is dropped:
// a backlog past its cap is merged into one follow-up, and steering messages the run did not
// take before it ended run next. A solo item (a message a crash left suspect, recovery.ts) runs
// in a run of its own that nothing joins; an isolated one also has the daemon to itself: no
// other run anywhere while it runs.
import type { RunStatus } from "../agent/events.ts";
import type { SteeringSource } from "../agent/steering.ts";
import type { ReplyOutcome } from "../channels/channel.ts";
import type { Logger } from "../process/log.ts";
import type { QueueMode } from "../fields/config-fields.ts";
import { internalErrorText, isDiskFull } from "../state/storage.ts";
import { ReplyFanout } from "./delivery/reply-fanout.ts";
import type { LaneItem, RunExecutor, RunOutcome } from "./lane-item.ts";

export interface LaneOptions {
  execute: RunExecutor;
  maxConcurrentRuns: number;
  /** Called with the inbox ids whose replies were handed over (or that were given up). */
  onItemsDone: (entryIds: string[]) => void;
  /**
   * Called with the inbox ids of a run that was given up (it ignored its abort: the chat was
   * told "I had to give up on this answer"): closed as abandoned, not done. Absent: onItemsDone.
   */
  onItemsAbandoned?: (entryIds: string[], reason: string) => void;
  /** Called with the inbox ids of a run that could not be recorded (disk full): not done, to be run again. */
  onItemsKept?: (entryIds: string[]) => void;
  /**
   * Called with the inbox ids of items the model is about to see: the run's next model request
   * carries them (its first turn, or the turn after steering took them). Items stopped before
   * that are never reported. `isolated`: the run holds one isolated item and nothing else runs.
   */
  onItemsStarted?: (entryIds: string[], isolated: boolean) => void;
  /** Item `entryId` is answered by the reply that item `replyOwner` opened (same chat, one run). */
  onReplyJoined?: (replyOwner: string, entryId: string) => void;
  log: Logger;
  /** How long collect mode waits after the last message before its follow-up run starts. */
  collectDebounceMs?: number;
  /** A run with no event for this long is aborted. */
  inactivityLimitMs: number;
  /** After an abort, how long a run may take to wind down before its lane is released anyway. */
  abortGraceMs?: number;
  backlogCap?: number;
  clock?: () => number;
}

interface Group {
  /** "solo": one solo or isolated item, in a run of its own (see LaneItem.solo). */
  kind: "single" | "collect" | "solo";
  items: LaneItem[];
}

class ActiveRun {
  readonly abort = new AbortController();
  readonly fanout: ReplyFanout;
  readonly items: LaneItem[];
  /** Steering messages not yet taken by the loop. */
  pendingSteer: LaneItem[] = [];
  /** How many of `items` were reported as started (they reached a model request). */
  reported = 0;
  /** False once the loop returned: later messages must not be pushed as steering. */
  open = true;
  /** The run holds one isolated item: nothing joins it and it has the daemon's runs to itself. */
  isolated = false;
  /**
   * performance.now() at the run's last event. Silence is a duration, timed on the monotonic
   * clock: a wall-clock step forward (NTP, a resumed laptop) must not make every run look wedged.
   */
  lastEventAt = performance.now();
  startedAt: number;
  abortReason: "stop" | "interrupt" | "shutdown" | "watchdog" | null = null;

  constructor(items: LaneItem[], log: Logger, now: number) {
    this.items = [...items];
    this.fanout = new ReplyFanout(log);
    this.startedAt = now;
  }
}

interface Lane {
  key: string;
  active: ActiveRun | null;
  backlog: Group[];
  pumping: boolean;
  debounce: NodeJS.Timeout | null;
}

export interface LaneSnapshot {
  key: string;
  running: boolean;
  runningSinceMs: number | null;
  queued: number;
}

const STOPPED = "Stopped.";

export class LaneManager {
  readonly #lanes = new Map<string, Lane>();
  readonly #opts: Required<LaneOptions>;
  #slotsInUse = 0;
  /** An isolated run holds every slot. */
  #exclusive = false;
  readonly #slotWaiters: Array<{ exclusive: boolean; grant: () => void }> = [];
  readonly #watchdog: NodeJS.Timeout;
  #closing = false;

  constructor(opts: LaneOptions) {
    this.#opts = { collectDebounceMs: 500, abortGraceMs: 10_000, backlogCap: 20, clock: Date.now, onItemsKept: () => {}, onItemsStarted: () => {}, onReplyJoined: () => {}, onItemsAbandoned: (ids) => opts.onItemsDone(ids), ...opts };
    this.#watchdog = setInterval(() => this.#checkWedged(), Math.min(5_000, this.#opts.inactivityLimitMs / 2));
    this.#watchdog.unref();
  }

  /** Queues `item` on its session's lane according to `mode`. */
  submit(sessionKey: string, item: LaneItem, mode: QueueMode): void {
    const lane = this.#lane(sessionKey);
    const run = lane.active;
    if (item.solo || item.isolated) {
      this.#enqueue(lane, { kind: "solo", items: [item] });
    } else if (!run) {
      this.#enqueue(lane, { kind: "single", items: [item] });
    } else {
      switch (mode) {
        case "steer":
          if (run.open && !run.abort.signal.aborted && run.items.every((i) => i.person === item.person)) run.pendingSteer.push(item);
          else this.#enqueue(lane, { kind: "single", items: [item] }, true);
          break;
        case "followup":
          this.#enqueue(lane, { kind: "single", items: [item] });
          break;
        case "collect": {
          const last = lane.backlog.at(-1);
          if (last?.kind === "collect" && last.items.every((i) => i.person === item.person)) last.items.push(item);
          else this.#enqueue(lane, { kind: "collect", items: [item] });
          break;
        }
        case "interrupt":
          lane.backlog.unshift({ kind: "single", items: [item] });
          this.#abortRun(run, "interrupt");
          break;
        default:
          mode satisfies never;
      }
    }
    this.#capBacklog(lane);
    void this.#pump(lane);
  }

  /** /stop: aborts the active run and clears the backlog. Returns what it stopped. */
  stop(sessionKey: string): { stoppedRun: boolean; cleared: number } {
    const lane = this.#lanes.get(sessionKey);
    if (!lane) return { stoppedRun: false, cleared: 0 };
    const dropped = lane.backlog.flatMap((g) => g.items);
    lane.backlog = [];
    const stoppedRun = lane.active !== null && !lane.active.abort.signal.aborted;
    if (lane.active) {
      dropped.push(...lane.active.pendingSteer);
      lane.active.pendingSteer = [];
      this.#abortRun(lane.active, "stop");
    }
    void this.#answerWithoutRun(dropped, STOPPED);
    return { stoppedRun, cleared: dropped.length };
  }

  /**
   * Runs `task` on the session's lane while nothing else runs there (compaction): messages that
   * arrive meanwhile wait behind it. Returns "busy" without running it when a run is active.
   */
  async exclusive<T>(sessionKey: string, task: (signal: AbortSignal) => Promise<T>): Promise<T | "busy"> {
    const lane = this.#lane(sessionKey);
    if (lane.active || lane.pumping) return "busy";
    const run = new ActiveRun([], this.#opts.log, this.#opts.clock());
    run.open = false; // steering has nothing to join: new messages queue as follow-ups
    lane.active = run;
    lane.pumping = true;
    try {
      return await task(run.abort.signal);
    } finally {
      lane.pumping = false;
      lane.active = null;
      void this.#pump(lane);
    }
  }

  isRunning(sessionKey: string): boolean {
    return this.#lanes.get(sessionKey)?.active != null;
  }

  snapshot(): LaneSnapshot[] {
    const now = this.#opts.clock();
    return [...this.#lanes.values()].map((l) => ({
      key: l.key,
      running: l.active !== null,
      runningSinceMs: l.active ? now - l.active.startedAt : null,
      queued: l.backlog.reduce((n, g) => n + g.items.length, 0) + (l.active?.pendingSteer.length ?? 0),
    }));
  }

  /**
   * Shutdown: no new runs start; active runs may finish for `graceMs`, then they are aborted
   * (their partial state is saved by the loop). Queued items stay in the inbox for next start.
   */
  async drain(graceMs: number): Promise<void> {
    this.#closing = true;
    for (const lane of this.#lanes.values()) {
      lane.backlog = [];
      if (lane.debounce) clearTimeout(lane.debounce);
    }
    const idle = () => [...this.#lanes.values()].every((l) => l.active === null);
    const deadline = this.#opts.clock() + graceMs;
    while (!idle() && this.#opts.clock() < deadline) await sleep(25);
    for (const lane of this.#lanes.values()) if (lane.active) this.#abortRun(lane.active, "shutdown");
    const hardDeadline = this.#opts.clock() + this.#opts.abortGraceMs;
    while (!idle() && this.#opts.clock() < hardDeadline) await sleep(25);
    clearInterval(this.#watchdog);
  }

  #lane(key: string): Lane {
    let lane = this.#lanes.get(key);
    if (!lane) {
      lane = { key, active: null, backlog: [], pumping: false, debounce: null };
      this.#lanes.set(key, lane);
    }
    return lane;
  }

  #enqueue(lane: Lane, group: Group, front = false): void {
    if (front) lane.backlog.unshift(group);
    else lane.backlog.push(group);
  }

  /** More than `backlogCap` waiting messages are merged into one follow-up run (solo ones stay alone). */
  #capBacklog(lane: Lane): void {
    const mergeable = lane.backlog.filter((g) => g.kind !== "solo");
    const count = mergeable.reduce((n, g) => n + g.items.length, 0);
    if (count <= this.#opts.backlogCap || mergeable.length <= 1) return;
    this.#opts.log.warn("lane.backlog_merged", { session: lane.key, messages: count });
    lane.backlog = [...lane.backlog.filter((g) => g.kind === "solo"), { kind: "single", items: mergeable.flatMap((g) => g.items) }];
  }

  async #pump(lane: Lane): Promise<void> {
    if (lane.active || lane.pumping || this.#closing) return;
    const group = lane.backlog[0];
    if (!group) return;
    if (group.kind === "collect") {
      const wait = group.items.at(-1)!.arrivedAt + this.#opts.collectDebounceMs - this.#opts.clock();
      if (wait > 0) {
        if (!lane.debounce) {
          lane.debounce = setTimeout(() => {
            lane.debounce = null;
            void this.#pump(lane);
          }, wait);
        }
        return;
      }
    }
    lane.backlog.shift();
    const run = new ActiveRun(group.items, this.#opts.log, this.#opts.clock());
    run.isolated = group.kind === "solo" && group.items[0]?.isolated === true;
    run.open = group.kind !== "solo" && group.items.every((i) => i.steerable !== false);
    lane.active = run;
    lane.pumping = true;
    try {
      await this.#acquireSlot(run.isolated);
      try {
        await this.#execute(lane, run);
      } finally {
        this.#releaseSlot();
      }
    } finally {
      lane.pumping = false;
      lane.active = null;
    }
    if (run.pendingSteer.length > 0) lane.backlog.unshift({ kind: "single", items: run.pendingSteer });
    void this.#pump(lane);
  }

  async #execute(lane: Lane, run: ActiveRun): Promise<void> {
    // Messages that arrived while the run waited for a slot simply start with it.
    run.items.push(...run.pendingSteer);
    run.pendingSteer = [];
    for (const item of run.items) this.#attach(run.fanout, item);
    if (run.abort.signal.aborted) {
      run.open = false;
      await run.fanout.finish(STOPPED, "stopped");
      this.#opts.onItemsDone(run.items.map((i) => i.entryId));
      return;
    }
    const steering: SteeringSource = {
      pending: () => run.pendingSteer.length > 0,
      take: () => {
        const taken = run.pendingSteer;
        run.pendingSteer = [];
        for (const item of taken) {
          run.items.push(item);
          this.#attach(run.fanout, item);
        }
        return taken.map((i) => i.turn);
      },
    };
    const finished = this.#opts
      .execute({
        sessionKey: lane.key,
        items: run.items,
        signal: run.abort.signal,
        steering,
        emit: (e) => {
          run.lastEventAt = performance.now();
          // A model request is about to carry these items: from now on the run counts as an
          // attempt for each of them (steering adds items between turns).
          if (e.type === "turn_start" && run.reported < run.items.length) {
            this.#opts.onItemsStarted(run.items.slice(run.reported).map((i) => i.entryId), run.isolated);
            run.reported = run.items.length;
          }
          run.fanout.emit(e);
        },
      })
      .catch((err: unknown): RunOutcome => {
        this.#opts.log.error("run.threw", { session: lane.key, error: err });
        return { status: "error", text: internalErrorText(err), ...(isDiskFull(err) ? { keep: true } : {}) };
      });
    // A run that ignores its abort must not hold the lane forever: once aborted, it has
    // abortGraceMs to return.
    const wedged = new Promise<"wedged">((resolve) => {
      let timer: NodeJS.Timeout | undefined;
      const onAbort = () => (timer = setTimeout(() => resolve("wedged"), this.#opts.abortGraceMs));
      if (run.abort.signal.aborted) onAbort();
      else run.abort.signal.addEventListener("abort", onAbort, { once: true });
      void finished.finally(() => {
        clearTimeout(timer);
        run.abort.signal.removeEventListener("abort", onAbort);
      });
    });
    const outcome = await Promise.race([finished, wedged]);
    run.open = false;
    if (outcome === "wedged") {
      this.#opts.log.error("run.wedged", { session: lane.key, reason: run.abortReason });
      await run.fanout.fail("I had to give up on this answer: it stopped responding. Please try again.");
    } else {
      await run.fanout.finish(replyText(outcome, run.abortReason), outcome.keep ? "kept" : outcomeOf(outcome.status));
    }
    if (outcome === "wedged") return this.#opts.onItemsAbandoned(run.items.map((i) => i.entryId), "its run stopped responding and ignored its abort");
    if (outcome.keep) return this.#opts.onItemsKept(run.items.map((i) => i.entryId));
    this.#opts.onItemsDone(run.items.map((i) => i.entryId));
  }

  /** Attaches the item's reply to the run; one reply per chat, so a second item may join one. */
  #attach(fanout: ReplyFanout, item: LaneItem): void {
    const owner = fanout.attach(item.replyKey, item.openReply, item.entryId);
    if (owner !== null) this.#opts.onReplyJoined(owner, item.entryId);
  }

  #abortRun(run: ActiveRun, reason: NonNullable<ActiveRun["abortReason"]>): void {
    if (run.abort.signal.aborted) return;
    run.abortReason = reason;
    run.abort.abort();
  }

  #checkWedged(): void {
    const now = performance.now();
    for (const lane of this.#lanes.values()) {
      const run = lane.active;
      if (run && !run.abort.signal.aborted && lane.pumping && now - run.lastEventAt > this.#opts.inactivityLimitMs) {
        this.#opts.log.error("run.inactive", { session: lane.key, silentMs: now - run.lastEventAt });
        this.#abortRun(run, "watchdog");
      }
    }
  }

  /** Answers items that will not run (stopped) and marks them done. */
  async #answerWithoutRun(items: LaneItem[], text: string): Promise<void> {
    if (items.length === 0) return;
    const fanout = new ReplyFanout(this.#opts.log);
    for (const item of items) this.#attach(fanout, item);
    await fanout.finish(text, "stopped");
    this.#opts.onItemsDone(items.map((i) => i.entryId));
  }

  /** A slot for a run; `exclusive`: every slot (no other run at the same time). FIFO. */
  async #acquireSlot(exclusive: boolean): Promise<void> {
    if (this.#slotWaiters.length === 0 && this.#canGrant(exclusive)) return this.#take(exclusive);
    await new Promise<void>((grant) => this.#slotWaiters.push({ exclusive, grant }));
  }

  #releaseSlot(): void {
    this.#slotsInUse--;
    this.#exclusive = false;
    // Waiters are served in order: an exclusive one waits for the runs before it to end, and
    // the runs behind it wait for it.
    while (this.#slotWaiters.length > 0 && this.#canGrant(this.#slotWaiters[0]!.exclusive)) {
      const next = this.#slotWaiters.shift()!;
      this.#take(next.exclusive);
      next.grant();
    }
  }

  #canGrant(exclusive: boolean): boolean {
    if (this.#exclusive) return false;
    return exclusive ? this.#slotsInUse === 0 : this.#slotsInUse < this.#opts.maxConcurrentRuns;
  }

  #take(exclusive: boolean): void {
    this.#slotsInUse++;
    this.#exclusive = exclusive;
  }
}

function outcomeOf(status: RunStatus): ReplyOutcome {
  return status === "aborted" ? "stopped" : status === "error" ? "failed" : "answered";
}

function replyText(outcome: RunOutcome, abortReason: ActiveRun["abortReason"]): string {
  if (outcome.status !== "aborted") return outcome.text;
  const note =
    abortReason === "watchdog"
      ? "(I stopped this answer: it made no progress for too long.)"
      : abortReason === "shutdown"
        ? "(Interrupted: Hearth is shutting down.)"
        : abortReason === "interrupt"
          ? "(Interrupted by your new message.)"
          : "(Stopped.)";
  return outcome.text ? `${outcome.text}\n\n${note}` : note;
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
