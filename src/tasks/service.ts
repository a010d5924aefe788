// Background tasks: a child agent run in its own session `task:<id>`, started by spawn_task (or a
// scheduled job), which reports back once. A task is a message in the durable inbox, so the
// gateway's recovery runs it again after a crash, and its result is the reply to that message,
// so the outbox delivers it exactly once. This service decides when tasks run (tasks.maxConcurrent),
// stops them at their caps, labels their results and adds them to the parent's transcript.
//
// Its caps (cost, time, the budget) are checked again each time its run is about to start: a task
// that waited for a slot, or one resumed after a restart, may be past one by then. Cost so far
// comes from the usage ledger (records of session `task:<id>`), time from its first start, so a
// restart continues both.
//
// The order at the end of a task: the labelled result is recorded in tasks.jsonl (fsynced), then
// handed to the outbox (which records it before delivering it), then noted in the parent session.
// A crash between any two steps is repaired at the next start: a result recorded but not in the
// outbox is delivered from tasks.jsonl; one in the outbox is delivered from there by recovery; a
// result not yet noted is noted.
import { randomBytes } from "node:crypto";
import type { Scope } from "../agent/messages.ts";
import { userTurn } from "../agent/user-turn.ts";
import type { DeliveryTarget, ReplySink } from "../channels/channel.ts";
import type { ChatPlace } from "../channels/chat-place.ts";
import type { Config } from "../config/schema.ts";
import type { Logger } from "../process/log.ts";
import type { TaskHost, TaskRun } from "./host.ts";
import { TaskLog, type TaskEnd, type TaskEntry } from "./task-log.ts";
import { labelledResult, taskView, type TaskView } from "./view.ts";
import { resumeText, stripStopNote, taskText } from "./task-turns.ts";
import { openTaskReply, type Running } from "./task-reply.ts";
import { entryIdOf, isTaskSession, TASK_PREFIX, TaskInputError, taskIdOf, visibleTo, type SpawnInput, type SpawnOptions, type TaskViewer } from "./requests.ts";

/** What a group's task says, in its result or to the model, when the budget refuses it: the owner's amounts are not the group's business. */
const SHARED_BUDGET_TEXT = "the owner's budget for shared chats is spent for now";
/** The same, when the limit is too small for one answer even with nothing spent. */
const SHARED_TOO_SMALL_TEXT = "the owner's budget for shared chats is too small for one answer";
const sharedRefusal = (d: { tooSmall?: true }): string => (d.tooSmall ? SHARED_TOO_SMALL_TEXT : SHARED_BUDGET_TEXT);

export interface TaskServiceOptions {
  path: string;
  config: Pick<Config, "tasks" | "timezone"> & { agent: Pick<Config["agent"], "maxTurns"> };
  log: Logger;
  clock?: () => number;
  /**
   * What session `sessionKey` spent before this daemon started (the usage ledger's records of
   * it). Called once per unfinished task, at construction, before any new usage is recorded.
   * Absent: nothing.
   */
  spentBefore?: (sessionKey: string) => number;
}

interface Waiting {
  id: string;
  entryId: string;
  resumed: boolean;
  alone?: "solo" | "isolated" | undefined;
}

export class TaskService {
  readonly #o: Required<TaskServiceOptions>;
  readonly #log: TaskLog;
  #host: TaskHost | null = null;
  readonly #queue: Waiting[] = [];
  readonly #running = new Map<string, Running>();
  /** Cost of each unfinished task's model calls so far (before this daemon's start too). */
  readonly #cost = new Map<string, number>();
  /** Parent session → results waiting for its lane to be free. */
  readonly #notes = new Map<string, string[]>();
  #stopping = false;

  constructor(opts: TaskServiceOptions) {
    this.#o = { clock: Date.now, spentBefore: () => 0, ...opts };
    this.#log = TaskLog.open(opts.path, opts.log);
    for (const t of this.#log.tasks.values()) {
      if (!t.result) this.#cost.set(t.spawned.id, this.#o.spentBefore(`${TASK_PREFIX}${t.spawned.id}`));
    }
  }

  attach(host: TaskHost): void {
    this.#host = host;
  }

  /**
   * At start, before the inbox's recovery: results not yet in their parent's transcript are
   * noted, and a task whose inbox entry was closed without a result (a shutdown stopped it, or
   * the daemon died before its entry was written) gets a new entry and runs again.
   */
  start(isOpen: (entryId: string) => boolean): void {
    const host = this.#need();
    for (const t of this.#log.tasks.values()) {
      if (t.result) {
        if (!t.noted) this.#note(t);
        continue;
      }
      let n = 0;
      while (host.known(entryIdOf(t, n + 1))) n++;
      const current = entryIdOf(t, n);
      if (host.known(current) && isOpen(current)) continue; // recovery puts it back on its lane
      const next = host.known(current) ? n + 1 : n;
      const entryId = this.#accept(t, next);
      this.#o.log.warn("task.resuming", { task: t.spawned.id, entry: entryId });
      this.#queue.push({ id: t.spawned.id, entryId, resumed: next > 0 });
    }
    this.#pump();
  }

  /** Shutdown: runs stopped from now on were interrupted, not ended; they run again at the next start. */
  pause(): void {
    this.#stopping = true;
    for (const r of this.#running.values()) clearTimeout(r.timer);
  }

  /**
   * Starts a task for session `parent`; returns its view at once. Throws TaskInputError. A task
   * of a shared parent runs in that scope, never wider.
   */
  spawn(input: SpawnInput, parent: string, opts: SpawnOptions = {}): TaskView {
    const host = this.#need();
    const { tasks } = this.#o.config;
    const parentTask = isTaskSession(parent) ? this.#log.tasks.get(taskIdOf(parent)) : undefined;
    const parentScope: Scope = parentTask ? (parentTask.spawned.scope ?? "main") : (opts.scope ?? "main");
    // A group's task has no task tools (its run is not opened to them); refused here too.
    if (parentScope === "shared" && parentTask) throw new TaskInputError("A background task started in a group cannot start tasks of its own. Do the work yourself.");
    const depth = (parentTask?.spawned.depth ?? 0) + 1;
    if (depth > tasks.maxDepth) {
      throw new TaskInputError(`A background task cannot start tasks of its own here (tasks.maxDepth is ${tasks.maxDepth}). Do the work yourself.`);
    }
    const target = opts.to ?? parentTask?.spawned.target ?? host.originOf(parent);
    if (!target) throw new TaskInputError("No background task was started: the chat to report back to is unknown.");
    // Where its result goes decides the scope it is made in: a task for a shared chat runs in that
    // chat's scope, whoever started it. Without `to` it reports to its parent's own chat.
    const place: ChatPlace = opts.to ? host.placeOf(opts.to) : parentScope === "shared" ? { type: "shared", sessionKey: parent } : { type: "owner" };
    if (place.type === "refused") throw new TaskInputError(`No background task was started: ${place.reason}.`);
    const scope: Scope = place.type === "shared" ? "shared" : parentScope;
    const chat = place.type === "shared" && place.sessionKey !== parent ? place.sessionKey : undefined;
    const text = input.task.trim();
    if (!text) throw new TaskInputError("The task is empty: say what the background task should do.");
    const budget = host.checkBudget(parent, scope);
    if (budget.type === "refuse") throw new TaskInputError(`No background task was started: ${scope === "shared" ? sharedRefusal(budget) : budget.reason}.`);
    if (scope === "shared") {
      // A group's task counts against its rate limits like one more message of the group.
      const limited = host.admitShared(parent, opts.person);
      if (limited) throw new TaskInputError(`No background task was started: ${limited}`);
    }
    // An id no task has now, nor had recently (its inbox entry would be taken for a duplicate).
    const id = this.#newId((candidate) => host.known(`${target.channel}:task-${candidate}`));
    const label = (input.label?.trim() || text.split("\n")[0]!).slice(0, 60);
    const model = input.model?.trim() || tasks.model;
    // A tainted answer must not launder its taint through a task: the task runs tainted too.
    const taintedBy = opts.outside ?? host.outsideContent(parent);
    this.#log.append({
      type: "spawned",
      id,
      label,
      task: text,
      ...(input.context?.trim() ? { context: input.context.trim() } : {}),
      parent,
      target: { channel: target.channel, chatId: target.chatId, ...(target.threadId ? { threadId: target.threadId } : {}) },
      ...(model ? { model } : {}),
      ...(input.tools?.length ? { tools: input.tools.map((t) => t.trim()).filter(Boolean) } : {}),
      depth,
      ...(opts.by ? { by: opts.by } : {}),
      ...(taintedBy ? { taintedBy } : {}),
      ...(scope === "shared" ? { scope } : {}),
      ...(chat ? { chat } : {}),
      at: this.#o.clock(),
    });
    const t = this.#log.tasks.get(id)!;
    const entryId = this.#accept(t, 0);
    this.#o.log.info("task.spawned", { task: id, parent, scope, depth, to: `${target.channel}:${target.chatId}` });
    this.#queue.push({ id, entryId, resumed: false });
    this.#pump();
    return this.#view(t);
  }

  /**
   * The inbox's recovery puts a task's entry back (gateway/router.ts submitEntry): it waits for a
   * slot like a new task. `attempts` > 0: it ran before and continues from its transcript.
   */
  resume(entryId: string, sessionKey: string, attempts: number, alone?: "solo" | "isolated"): void {
    const host = this.#need();
    const t = this.#log.tasks.get(taskIdOf(sessionKey));
    if (!t) {
      this.#o.log.error("task.unknown_entry", { entry: entryId, session: sessionKey, action: "closed without a run" });
      host.markDone(entryId);
      return;
    }
    if (t.result) {
      void this.#deliverRecorded(t, entryId);
      return;
    }
    if (this.#queue.some((q) => q.entryId === entryId) || this.#running.has(t.spawned.id)) return;
    this.#queue.push({ id: t.spawned.id, entryId, resumed: attempts > 0, alone });
    this.#pump();
  }

  /**
   * Stops a task (cancel_task, /tasks cancel, hearth tasks cancel). Throws TaskInputError for an
   * unknown or ended one, and for one `viewer` may not see (absent: the owner, who sees all).
   */
  cancel(rawId: string, viewer?: TaskViewer): TaskView {
    const host = this.#need();
    const t = this.#find(rawId, viewer);
    if (t.result) throw new TaskInputError(`Task ${t.spawned.id} has already ended (${t.result.end}).`);
    const id = t.spawned.id;
    this.#o.log.info("task.cancelled", { task: id });
    const waiting = this.#queue.findIndex((q) => q.id === id);
    if (waiting >= 0) {
      const [q] = this.#queue.splice(waiting, 1);
      void this.#end(t, "cancelled", "").then((delivered) => delivered && host.markDone(q!.entryId));
    } else {
      const r = this.#running.get(id);
      if (r && !r.stopReason) {
        // Ended now, for the owner: the result goes out at once while the run winds down (a
        // command's process group may take a moment to die). The run's own end adds nothing but
        // waits for this delivery: the lanes close the entry after it, so a crash meanwhile
        // leaves the entry open and the result is delivered at the next start.
        r.stopReason = "cancelled";
        r.ending = this.#end(t, "cancelled", "");
        host.stop(`${TASK_PREFIX}${id}`);
      }
    }
    return this.#view(t);
  }

  /**
   * Recovery gave the task's entry up (Hearth crashed every time it ran it, alone); its chat was
   * told by recovery. Recorded as failed, so no later start runs it again; noted in the parent.
   */
  giveUp(sessionKey: string): void {
    const t = this.#log.tasks.get(taskIdOf(sessionKey));
    if (!t || t.result) return;
    const now = this.#o.clock();
    const body = "Hearth crashed every time it ran this task, also when it ran alone, so it gave up on it.";
    const text = labelledResult({ id: t.spawned.id, label: t.spawned.label, end: "failed", body, elapsedMs: now - t.spawned.at, costUsd: this.#cost.get(t.spawned.id) ?? 0, caps: this.#caps() });
    this.#log.append({ type: "result", id: t.spawned.id, end: "failed", text, costUsd: this.#cost.get(t.spawned.id) ?? 0, at: now });
    this.#o.log.warn("task.given_up", { task: t.spawned.id });
    this.#note(t);
  }

  /** A model call's cost, by the session it was made for (the usage ledger's records). */
  noteCost(session: string, costUsd: number): void {
    if (!isTaskSession(session)) return;
    const id = taskIdOf(session);
    const total = (this.#cost.get(id) ?? 0) + costUsd;
    this.#cost.set(id, total);
    const r = this.#running.get(id);
    if (r && !r.stopReason && total >= this.#o.config.tasks.maxCostUsd) {
      r.stopReason = "over-cost";
      this.#o.log.warn("task.over_cost", { task: id, costUsd: total, capUsd: this.#o.config.tasks.maxCostUsd });
      this.#need().stop(`${TASK_PREFIX}${id}`);
    }
  }

  /**
   * A model call of task session `session` did not fit its cost cap or the budget (gateway/
   * paid-calls.ts): its run is ending, and the task ends with that reason (over-budget: `reason`
   * is its result's text). Nothing for another session, or a task not running.
   */
  noteStopped(session: string, stop: { end: "over-cost" } | { end: "over-budget"; reason: string }): void {
    const r = isTaskSession(session) ? this.#running.get(taskIdOf(session)) : undefined;
    if (!r || r.stopReason) return;
    r.stopReason = stop.end;
    if (stop.end === "over-budget") r.stopBody = stop.reason;
    this.#o.log.warn("task.stopped_by_budget", { task: taskIdOf(session), end: stop.end });
  }

  /**
   * Call at the start of each run of `sessionKey`, while its lane is held: results that arrived
   * while it was busy join its transcript now, before its new turn.
   */
  flushNotes(sessionKey: string, append: (text: string, outside?: string) => void): void {
    const ids = this.#notes.get(sessionKey);
    if (!ids) return;
    this.#notes.delete(sessionKey);
    for (const id of ids) {
      const t = this.#log.tasks.get(id);
      if (!t?.result || t.noted) continue;
      append(t.result.text, resultOutside(t));
      this.#recordNoted(t);
    }
  }

  /** Running and waiting tasks first, then the most recent ended ones; at most `limit`. Only those `viewer` may see (absent: all). */
  list(viewer?: TaskViewer, limit = 20): TaskView[] {
    const all = [...this.#log.tasks.values()].filter((t) => visibleTo(t, viewer)).map((t) => this.#view(t));
    const live = all.filter((v) => v.state === "running" || v.state === "queued");
    const ended = all.filter((v) => v.state !== "running" && v.state !== "queued").reverse();
    return [...live, ...ended].slice(0, Math.max(limit, live.length));
  }

  get(rawId: string, viewer?: TaskViewer): TaskView {
    return this.#view(this.#find(rawId, viewer));
  }

  /**
   * What a task's run is: the chat its result goes to (where an approval for one of its tools is
   * asked), its label, its scope and, for a group's task, the group's session, whose chat folder
   * is its memory.
   */
  originOf(sessionKey: string): { target: DeliveryTarget; label: string; id: string; scope: Scope; chatKey?: string } | null {
    const t = isTaskSession(sessionKey) ? this.#log.tasks.get(taskIdOf(sessionKey)) : undefined;
    if (!t) return null;
    const s = t.spawned;
    return { target: s.target, label: s.label, id: s.id, ...(s.scope === "shared" ? { scope: "shared", chatKey: s.chat ?? s.parent } : { scope: "main" }) };
  }

  // ── running ────────────────────────────────────────────────────────────────────────────

  #pump(): void {
    if (this.#stopping) return;
    while (this.#running.size < this.#o.config.tasks.maxConcurrent && this.#queue.length > 0) {
      const q = this.#queue.shift()!;
      const t = this.#log.tasks.get(q.id);
      if (t && !t.result) this.#run(t, q);
    }
  }

  #run(t: TaskEntry, q: Waiting): void {
    const id = t.spawned.id;
    const over = this.#capReached(t);
    if (over) {
      // Not run: ended with the cap or the budget's reason; the entry closes once that is delivered.
      this.#o.log.warn("task.not_run", { task: id, end: over.end });
      void this.#end(t, over.end, over.body).then((delivered) => delivered && this.#need().markDone(q.entryId));
      return;
    }
    const running: Running = { entryId: q.entryId };
    this.#running.set(id, running);
    const now = this.#o.clock();
    const tainted = t.spawned.taintedBy;
    const run: TaskRun = {
      entryId: q.entryId,
      turn: {
        ...userTurn({ text: q.resumed ? resumeText(t) : taskText(t), channel: "task", sender: `task ${id}`, at: now, timezone: this.#o.config.timezone }, "system"),
        entry: q.entryId,
        ...(tainted ? { outside: `a task started by an answer that read ${tainted}` } : {}),
      },
      source: { channel: "task", sender: `task ${id}`, text: t.spawned.task },
      replyKey: `${TASK_PREFIX}${id}`,
      openReply: () => this.#openRun(t, running),
      arrivedAt: now,
      steerable: false,
      purpose: "task",
      ...(t.spawned.model ? { model: t.spawned.model } : {}),
      ...(t.spawned.tools ? { tools: t.spawned.tools } : {}),
      ...(tainted ? { taintedBy: `this task was started by an answer that read ${tainted}` } : {}),
    };
    this.#need().submit(`${TASK_PREFIX}${id}`, run, q.alone);
  }

  /** A cap the task is already past, or the budget's refusal, before its run starts; null: it may run. */
  #capReached(t: TaskEntry): { end: TaskEnd; body: string } | null {
    const { tasks } = this.#o.config;
    if ((this.#cost.get(t.spawned.id) ?? 0) >= tasks.maxCostUsd) return { end: "over-cost", body: "" };
    if (t.startedAt !== undefined && this.#o.clock() - t.startedAt >= tasks.maxMinutes * 60_000) return { end: "over-time", body: "" };
    const scope = t.spawned.scope ?? "main";
    const budget = this.#need().checkBudget(t.spawned.parent, scope);
    if (budget.type === "refuse") return { end: "over-budget", body: scope === "shared" ? sharedRefusal(budget) : budget.reason };
    return null;
  }

  /** The run's reply (task-reply.ts); its end is the task's end, unless Hearth stopped the run or keeps its entry open. */
  #openRun(t: TaskEntry, running: Running): ReplySink {
    const id = t.spawned.id;
    const { log, clock, config } = this.#o;
    return openTaskReply(t, running, {
      tasks: this.#log,
      log,
      clock,
      maxMinutes: config.tasks.maxMinutes,
      stop: () => this.#need().stop(`${TASK_PREFIX}${id}`),
      finish: async ({ body, outcome, turnCapReached }) => {
        this.#running.delete(id);
        try {
          if (outcome === "kept") return; // a full disk: the entry stays open and runs again
          if (t.result) {
            // Cancelled: its result went out when it was cancelled; the lanes close the entry after it.
            await running.ending;
            return;
          }
          if (outcome === "stopped" && !running.stopReason && this.#stopping) {
            // Shutdown: not an end. The entry is closed by the lanes; start() gives it a new one.
            log.info("task.interrupted", { task: id });
            return;
          }
          const end: TaskEnd = running.stopReason ?? (outcome !== "answered" ? "failed" : turnCapReached ? "over-turns" : "done");
          await this.#end(t, end, running.stopBody ?? stripStopNote(body));
        } finally {
          this.#pump();
        }
      },
    });
  }

  /**
   * Records the labelled result, delivers it through the outbox, notes it in the parent. Resolves
   * false when the delivery failed (the entry must stay open: the next start delivers it).
   */
  async #end(t: TaskEntry, end: TaskEnd, body: string): Promise<boolean> {
    const id = t.spawned.id;
    const now = this.#o.clock();
    const costUsd = this.#cost.get(id) ?? 0;
    const text = labelledResult({ id, label: t.spawned.label, end, body, elapsedMs: now - t.spawned.at, costUsd, caps: this.#caps() });
    // A result written after reading outside content may repeat it: the parent is tainted by it.
    const taintedBy = this.#need().outsideContent(`${TASK_PREFIX}${id}`) ?? t.spawned.taintedBy;
    this.#log.append({ type: "result", id, end, text, costUsd, ...(taintedBy ? { taintedBy } : {}), at: now });
    this.#o.log.info("task.ended", { task: id, end, costUsd, durationMs: now - t.spawned.at });
    const entryId = this.#entryOf(t);
    let delivered = true;
    try {
      await this.#need().openResult(entryId).finish(text);
    } catch (error) {
      delivered = false;
      this.#o.log.error("task.result_undelivered", { task: id, error, action: "delivered again at the next start" });
    }
    this.#note(t);
    return delivered;
  }

  /** A result recorded before a crash whose outbox record was not written: delivered from tasks.jsonl. */
  async #deliverRecorded(t: TaskEntry, entryId: string): Promise<void> {
    const host = this.#need();
    try {
      await host.openResult(entryId).finish(t.result!.text);
      host.markDone(entryId);
    } catch (error) {
      this.#o.log.error("task.result_undelivered", { task: t.spawned.id, error, action: "delivered again at the next start" });
    }
    if (!t.noted) this.#note(t);
  }

  #note(t: TaskEntry): void {
    const parent = t.spawned.parent;
    if (this.#need().noteInSession(parent, t.result!.text, resultOutside(t))) {
      this.#recordNoted(t);
      return;
    }
    const ids = this.#notes.get(parent) ?? [];
    if (!ids.includes(t.spawned.id)) ids.push(t.spawned.id);
    this.#notes.set(parent, ids);
  }

  #recordNoted(t: TaskEntry): void {
    try {
      this.#log.append({ type: "noted", id: t.spawned.id, at: this.#o.clock() });
    } catch (error) {
      this.#o.log.warn("task.noted_write_failed", { task: t.spawned.id, error });
    }
  }

  // ── helpers ────────────────────────────────────────────────────────────────────────────

  #caps(): { maxCostUsd: number; maxMinutes: number; maxTurns: number } {
    const { tasks, agent } = this.#o.config;
    return { maxCostUsd: tasks.maxCostUsd, maxMinutes: tasks.maxMinutes, maxTurns: agent.maxTurns };
  }

  #accept(t: TaskEntry, n: number): string {
    const s = t.spawned;
    return this.#need().accept(n === 0 ? s.id : `${s.id}.${n}`, `${TASK_PREFIX}${s.id}`, s.target, s.task);
  }

  /** The newest inbox entry of a task (a shutdown gives a task a new one). */
  #entryOf(t: TaskEntry): string {
    const r = this.#running.get(t.spawned.id);
    if (r) return r.entryId;
    let n = 0;
    while (this.#need().known(entryIdOf(t, n + 1))) n++;
    return entryIdOf(t, n);
  }

  #find(rawId: string, viewer?: TaskViewer): TaskEntry {
    const id = rawId.trim().replace(/^task:/, "");
    const t = this.#log.tasks.get(id);
    // Another chat's task is answered like one that does not exist: its id tells nothing.
    if (!t || !visibleTo(t, viewer)) throw new TaskInputError(`No background task has the id "${rawId.trim()}". task_status (or /tasks) lists them.`);
    return t;
  }

  #view(t: TaskEntry): TaskView {
    const id = t.spawned.id;
    const state = t.result ? t.result.end : this.#running.has(id) ? "running" : "queued";
    return taskView(t, state, t.result?.costUsd ?? this.#cost.get(id) ?? 0, this.#o.clock());
  }

  #newId(taken: (id: string) => boolean): string {
    for (;;) {
      const id = randomBytes(3).toString("hex");
      if (!this.#log.tasks.has(id) && !taken(id)) return id;
    }
  }

  #need(): TaskHost {
    if (!this.#host) throw new Error("TaskService: call attach(host) first");
    return this.#host;
  }
}

/** What a task's result brings into its parent as outside content; undefined: nothing. */
const resultOutside = (t: TaskEntry): string | undefined => (t.result?.taintedBy ? `the result of a background task that read ${t.result.taintedBy}` : undefined);
