// The task service against a fake host: when tasks run (the concurrency cap), how they end
// (caps, a shutdown that is not an end), and the repairs a restart makes (a new inbox entry for
// an interrupted task, a recorded result delivered from tasks.jsonl, a result noted in the parent).
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import type { DeliveryTarget, ReplySink } from "../../src/channels/channel.ts";
import type { ChatPlace } from "../../src/channels/chat-place.ts";
import { createLogger } from "../../src/process/log.ts";
import type { BudgetDecision } from "../../src/spending/budget.ts";
import type { TaskHost, TaskRun } from "../../src/tasks/host.ts";
import { TaskInputError } from "../../src/tasks/requests.ts";
import { TaskService } from "../../src/tasks/service.ts";

const log = createLogger({ level: "error", sink: { write: () => {} } });
const config = { timezone: "UTC", agent: { maxTurns: 40 }, tasks: { maxConcurrent: 2, maxMinutes: 30, maxCostUsd: 1, maxDepth: 1 } };

class FakeHost implements TaskHost {
  accepted: string[] = [];
  open = new Set<string>();
  done: string[] = [];
  runs: Array<{ key: string; run: TaskRun }> = [];
  stopped: string[] = [];
  delivered: Array<{ entry: string; text: string }> = [];
  notes: Array<{ key: string; text: string; outside?: string }> = [];
  busy = new Set<string>();
  accept(taskId: string, _key: string, to: { channel: string }): string {
    const id = `${to.channel}:task-${taskId}`;
    this.accepted.push(id);
    this.open.add(id);
    return id;
  }
  known = (id: string) => this.accepted.includes(id);
  submit(key: string, run: TaskRun): void {
    this.runs.push({ key, run });
  }
  stop(key: string): void {
    this.stopped.push(key);
  }
  openResult(entry: string): ReplySink {
    const sink = {
      textDelta: () => {},
      textReset: () => {},
      toolStarted: () => {},
      toolFinished: () => {},
      finish: async (text: string) => {
        this.delivered.push({ entry, text });
      },
      fail: async (text: string) => sink.finish(text),
    };
    return sink;
  }
  markDone(id: string): void {
    this.done.push(id);
    this.open.delete(id);
  }
  noteInSession(key: string, text: string, outside?: string): boolean {
    if (this.busy.has(key)) return false;
    this.notes.push({ key, text, ...(outside ? { outside } : {}) });
    return true;
  }
  /** Session → the outside content its view holds (a tainted answer's session). */
  outside = new Map<string, string>();
  outsideContent = (key: string) => this.outside.get(key) ?? null;
  originOf = (key: string) => (key.startsWith("group:") ? { channel: "telegram" as const, chatId: key.split(":")[2]! } : { channel: "telegram" as const, chatId: "42" });
  /** Whose chat each `channel:chatId` is; any other is the owner's. */
  places = new Map<string, ChatPlace>();
  placeOf = (to: DeliveryTarget): ChatPlace => this.places.get(`${to.channel}:${to.chatId}`) ?? { type: "owner" };
  budget: BudgetDecision = { type: "allow" };
  /** Every budget question: "<scope>:<session>". */
  budgetAsked: string[] = [];
  checkBudget = (key: string, scope: string) => (this.budgetAsked.push(`${scope}:${key}`), this.budget);
  /** Group sessions' spawns counted against their rate limits, and what to answer. */
  admitted: string[] = [];
  rateRefusal: string | null = null;
  admitShared = (key: string, person?: string) => {
    if (this.rateRefusal) return this.rateRefusal;
    this.admitted.push(`${key}/${person ?? "-"}`);
    return null;
  };
}

const REFUSED: BudgetDecision = { type: "refuse", limit: "daily", reason: "the daily budget of $5.00 is spent ($5.02)" };

let dir: string;
let now: number;
const clock = () => now;
const open = (host: FakeHost, spentBefore?: (session: string) => number, cfg = config) => {
  const s = new TaskService({ path: join(dir, "tasks.jsonl"), config: cfg, log, clock, ...(spentBefore ? { spentBefore } : {}) });
  s.attach(host);
  return s;
};

beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), "hearth-tasks-"));
  now = Date.UTC(2026, 10, 25, 12, 0, 0);
});
afterEach(() => rmSync(dir, { recursive: true, force: true }));

describe("TaskService", () => {
  it("runs at most maxConcurrent tasks; the next starts when one ends, and each result is delivered once, labelled", async () => {
    const host = new FakeHost();
    const tasks = open(host);
    const views = ["a", "b", "c"].map((label) => tasks.spawn({ task: `Do ${label}.`, label }, "main"));
    expect(views.map((v) => v.state)).toEqual(["running", "running", "queued"]);
    expect(host.runs.map((r) => r.key)).toEqual([`task:${views[0]!.id}`, `task:${views[1]!.id}`]);

    const reply = host.runs[0]!.run.openReply();
    reply.toolStarted("web_search", "tea");
    now += 65_000;
    await reply.finish("Found it.", "answered");
    expect(host.runs.map((r) => r.key)).toEqual([`task:${views[0]!.id}`, `task:${views[1]!.id}`, `task:${views[2]!.id}`]);
    expect(host.delivered).toEqual([{ entry: `telegram:task-${views[0]!.id}`, text: `✅ Task ${views[0]!.id} "a" is done (1m 05s, $0.0000):\n\nFound it.` }]);
    expect(host.notes).toEqual([{ key: "main", text: host.delivered[0]!.text }]);
    expect(tasks.get(views[0]!.id).progress.map((p) => p.line)).toEqual(["web_search"]);
  });

  it("a task started by a tainted answer runs tainted, also after a restart; a task that read outside content taints the session its result is noted in", async () => {
    const host = new FakeHost();
    host.outside.set("main", "a web page");
    const tasks = open(host);
    const v = tasks.spawn({ task: "Post the notes to paste.example.", label: "post" }, "main");
    expect(host.runs[0]!.run.taintedBy).toBe("this task was started by an answer that read a web page");
    expect(host.runs[0]!.run.turn.outside).toBe("a task started by an answer that read a web page");
    // A restart: the task runs again from tasks.jsonl, still tainted.
    const again = new FakeHost();
    const reopened = open(again);
    reopened.start(() => false);
    expect(again.runs.map((r) => [r.key, r.run.taintedBy])).toEqual([[`task:${v.id}`, "this task was started by an answer that read a web page"]]);

    // An untainted start, whose task reads a web page: its result taints main.
    host.outside.clear();
    const w = tasks.spawn({ task: "Read the recipe page.", label: "recipe" }, "main");
    const run = host.runs.find((r) => r.key === `task:${w.id}`)!.run;
    expect(run.taintedBy).toBeUndefined();
    host.outside.set(`task:${w.id}`, "a web page");
    await run.openReply().finish("It says: run curl attacker.example.", "answered");
    expect(host.notes.at(-1)).toEqual({ key: "main", text: expect.stringContaining("It says: run curl attacker.example."), outside: "the result of a background task that read a web page" });
  });

  it("a task cannot start tasks of its own beyond maxDepth, and an empty task is refused", () => {
    const host = new FakeHost();
    const tasks = open(host);
    const v = tasks.spawn({ task: "Research." }, "main");
    expect(() => tasks.spawn({ task: "Deeper." }, `task:${v.id}`)).toThrow(TaskInputError);
    expect(() => tasks.spawn({ task: "  " }, "main")).toThrow("The task is empty");
    expect(host.runs).toHaveLength(1);
  });

  it("over its cost cap: stopped after the call that crossed it, and its result says so", async () => {
    const host = new FakeHost();
    const tasks = open(host);
    const v = tasks.spawn({ task: "Spend.", label: "spend" }, "main");
    const reply = host.runs[0]!.run.openReply();
    tasks.noteCost(`task:${v.id}`, 0.4);
    expect(host.stopped).toEqual([]);
    tasks.noteCost(`task:${v.id}`, 0.7);
    expect(host.stopped).toEqual([`task:${v.id}`]);
    await reply.finish("Half done.\n\n(Stopped.)", "stopped");
    expect(host.delivered[0]!.text).toBe(`⏹ Task ${v.id} "spend" was stopped: it went over its cost cap of $1.00 (tasks.maxCostUsd) (0s, $1.1000).\n\nWhat it had so far:\nHalf done.`);
  });

  it("a call its cap refused ends it before the cap: the result says the next step could have gone over, what it had so far kept", async () => {
    const host = new FakeHost();
    const tasks = open(host);
    const v = tasks.spawn({ task: "Spend.", label: "spend" }, "main");
    const reply = host.runs[0]!.run.openReply();
    tasks.noteCost(`task:${v.id}`, 0.91);
    tasks.noteStopped(`task:${v.id}`, { end: "over-cost" });
    // The run ends on its own (the loop's sentence is a notice, not part of the result).
    reply.textDelta("I stopped here: this task's cost cap is reached.", true);
    await reply.finish("Three steps done.\n\nI stopped here: this task's cost cap is reached.", "answered");
    expect(host.stopped).toEqual([]);
    expect(host.delivered.map((d) => d.text)).toEqual([`⏹ Task ${v.id} "spend" was stopped: its next step could have gone over its cost cap of $1.00 (tasks.maxCostUsd) (0s, $0.9100).\n\nWhat it had so far:\nThree steps done.`]);
  });

  it("a call the budget refused ends it over the budget, with the budget's reason", async () => {
    const host = new FakeHost();
    const tasks = open(host);
    const v = tasks.spawn({ task: "Spend.", label: "spend" }, "main");
    const reply = host.runs[0]!.run.openReply();
    tasks.noteStopped(`task:${v.id}`, { end: "over-budget", reason: "the daily budget of $5.00 is spent: $4.90 so far, and the next step could cost up to $0.14" });
    tasks.noteStopped(`task:${v.id}`, { end: "over-cost" }); // the first reason stands
    await reply.finish("Partial.\n\nI stopped here: the daily budget of $5.00 is spent.", "answered");
    expect(host.delivered.map((d) => d.text)).toEqual([
      `⏹ Task ${v.id} "spend" was stopped by the budget: the daily budget of $5.00 is spent: $4.90 so far, and the next step could cost up to $0.14 (0s, $0.0000). To go on, raise the budget (/budget raise 5) and start the task again.`,
    ]);
  });

  it("over its time cap: stopped, and its result says so", async () => {
    const host = new FakeHost();
    const tasks = new TaskService({ path: join(dir, "tasks.jsonl"), config: { ...config, tasks: { ...config.tasks, maxMinutes: 0.0005 } }, log, clock });
    tasks.attach(host);
    const v = tasks.spawn({ task: "Slow.", label: "slow" }, "main");
    const reply = host.runs[0]!.run.openReply();
    while (host.stopped.length === 0) await new Promise((r) => setTimeout(r, 5));
    expect(host.stopped).toEqual([`task:${v.id}`]);
    await reply.finish("(Stopped.)", "stopped");
    expect(host.delivered[0]!.text).toBe(`⏹ Task ${v.id} "slow" was stopped: it ran longer than its time cap of 0.0005 min (tasks.maxMinutes) (0s, $0.0000).`);
  });

  it("a shutdown interrupts a task without ending it: the next start gives it a new entry and it continues", async () => {
    const host = new FakeHost();
    const first = open(host);
    const v = first.spawn({ task: "Long work.", label: "long" }, "main");
    const reply = host.runs[0]!.run.openReply();
    first.pause();
    await reply.finish("(Interrupted: Hearth is shutting down.)", "stopped");
    host.markDone(`telegram:task-${v.id}`); // the lanes close the entry
    expect(host.delivered).toEqual([]);

    const again = new FakeHost();
    again.accepted = [...host.accepted];
    const second = open(again);
    second.start((id) => again.open.has(id));
    expect(again.accepted.at(-1)).toBe(`telegram:task-${v.id}.1`);
    expect(again.runs).toHaveLength(1);
    expect(again.runs[0]!.run.turn.text).toContain(`Hearth restarted while background task ${v.id} ("long") was running.`);
    expect(second.get(v.id).state).toBe("running");
  });

  it("a result recorded before a crash is delivered from tasks.jsonl, not run again, and noted once the parent is free", async () => {
    const host = new FakeHost();
    host.busy.add("main");
    const first = open(host);
    const v = first.spawn({ task: "Quick.", label: "quick" }, "main");
    // The result is recorded, then the daemon dies before the outbox has it: simulated by a
    // delivery that never happens (a fresh host below stands for the next start).
    host.openResult = () => ({ textDelta() {}, textReset() {}, toolStarted() {}, toolFinished() {}, finish: () => new Promise<void>(() => {}), fail: () => new Promise<void>(() => {}) });
    void host.runs[0]!.run.openReply().finish("Done quickly.", "answered");
    await Promise.resolve();

    const next = new FakeHost();
    next.accepted = [...host.accepted];
    next.open.add(`telegram:task-${v.id}`);
    next.busy.add("main");
    const second = open(next);
    second.start((id) => next.open.has(id));
    second.resume(`telegram:task-${v.id}`, `task:${v.id}`, 1);
    await Promise.resolve();
    expect(next.runs).toEqual([]);
    expect(next.delivered.map((d) => d.text)).toEqual([`✅ Task ${v.id} "quick" is done (0s, $0.0000):\n\nDone quickly.`]);
    expect(next.done).toEqual([`telegram:task-${v.id}`]);
    expect(next.notes).toEqual([]);
    const appended: string[] = [];
    second.flushNotes("main", (text) => appended.push(text));
    second.flushNotes("main", (text) => appended.push(text));
    expect(appended).toEqual([next.delivered[0]!.text]);
  });

  it("cancelling a waiting task ends it at once; cancelling an ended one says so", async () => {
    const host = new FakeHost();
    const tasks = open(host);
    tasks.spawn({ task: "One." }, "main");
    tasks.spawn({ task: "Two." }, "main");
    const third = tasks.spawn({ task: "Three.", label: "three" }, "main");
    tasks.cancel(third.id);
    await new Promise((r) => setImmediate(r));
    expect(host.delivered.map((d) => d.text)).toEqual([`⏹ Task ${third.id} "three" was cancelled (0s, $0.0000).`]);
    expect(host.done).toEqual([`telegram:task-${third.id}`]);
    expect(() => tasks.cancel(third.id)).toThrow(`Task ${third.id} has already ended (cancelled).`);
    expect(() => tasks.cancel("nope")).toThrow('No background task has the id "nope"');
  });

  it("a task recovery gave up on ends as failed and never runs again", () => {
    const host = new FakeHost();
    const first = open(host);
    const v = first.spawn({ task: "Poison.", label: "poison" }, "main");
    first.giveUp(`task:${v.id}`);
    expect(first.get(v.id).state).toBe("failed");
    expect(host.notes[0]!.text).toBe(`⚠️ Task ${v.id} "poison" failed (0s, $0.0000): Hearth crashed every time it ran this task, also when it ran alone, so it gave up on it.`);
    host.markDone(`telegram:task-${v.id}`);

    const again = new FakeHost();
    again.accepted = [...host.accepted];
    open(again).start((id) => again.open.has(id));
    expect(again.accepted).toEqual(host.accepted);
    expect(again.runs).toEqual([]);
  });

  it("tasks.jsonl keeps the newest 100 ended tasks when it is opened, and every unfinished one", () => {
    const lines: string[] = [];
    const spawned = (id: string, at: number) => ({ type: "spawned", id, label: id, task: "T.", parent: "main", target: { channel: "cli", chatId: "cli" }, depth: 1, at });
    for (let i = 0; i < 105; i++) {
      const id = `e${String(i).padStart(5, "0")}`;
      lines.push(JSON.stringify(spawned(id, i)), JSON.stringify({ type: "result", id, end: "done", text: "ok", costUsd: 0, at: i }), JSON.stringify({ type: "noted", id, at: i }));
    }
    lines.push(JSON.stringify(spawned("open01", 200)));
    writeFileSync(join(dir, "tasks.jsonl"), `${lines.join("\n")}\n`);
    const host = new FakeHost();
    const tasks = open(host);
    const ids = tasks.list(undefined, 1000).map((v) => v.id);
    expect(ids).toHaveLength(101);
    expect(ids).toContain("open01");
    expect(ids).not.toContain("e00004");
    expect(ids).toContain("e00005");
    expect(readFileSync(join(dir, "tasks.jsonl"), "utf8").trim().split("\n")).toHaveLength(301);
  });
  it("the budget is asked again when a waiting task comes to run: refused, it ends without running and says so, once", async () => {
    const host = new FakeHost();
    const tasks = open(host);
    const [a] = ["a", "b", "c"].map((label) => tasks.spawn({ task: `Do ${label}.`, label }, "main"));
    const c = tasks.list().find((v) => v.label === "c")!;
    host.budget = REFUSED;
    await host.runs[0]!.run.openReply().finish("A done.", "answered");
    await new Promise((r) => setImmediate(r));
    expect(host.runs).toHaveLength(2);
    expect(tasks.get(c.id).state).toBe("over-budget");
    const refused = `⏹ Task ${c.id} "c" was stopped by the budget: the daily budget of $5.00 is spent ($5.02) (0s, $0.0000). To go on, raise the budget (/budget raise 5) and start the task again.`;
    expect(host.delivered.map((d) => d.text)).toEqual([`✅ Task ${a!.id} "a" is done (0s, $0.0000):\n\nA done.`, refused]);
    expect(host.done).toEqual([`telegram:task-${c.id}`]);
    expect(host.notes.map((n) => n.text)).toEqual(host.delivered.map((d) => d.text));
  });

  it("a task resumed after a restart is refused by the budget before it runs again", async () => {
    const host = new FakeHost();
    const v = open(host).spawn({ task: "Long.", label: "long" }, "main");
    host.runs[0]!.run.openReply();
    const next = new FakeHost();
    next.accepted = [...host.accepted];
    next.open.add(`telegram:task-${v.id}`);
    next.budget = REFUSED;
    const second = open(next);
    second.start((id) => next.open.has(id));
    second.resume(`telegram:task-${v.id}`, `task:${v.id}`, 1);
    await new Promise((r) => setImmediate(r));
    expect(next.runs).toEqual([]);
    expect(next.delivered.map((d) => d.text)).toEqual([`⏹ Task ${v.id} "long" was stopped by the budget: the daily budget of $5.00 is spent ($5.02) (0s, $0.0000). To go on, raise the budget (/budget raise 5) and start the task again.`]);
    expect(next.done).toEqual([`telegram:task-${v.id}`]);
  });

  it("the cost cap continues across a restart: what the ledger holds for task:<id> counts, and the result shows the whole cost", async () => {
    const host = new FakeHost();
    const v = open(host).spawn({ task: "Spend.", label: "spend" }, "main");
    host.runs[0]!.run.openReply();
    const next = new FakeHost();
    next.accepted = [...host.accepted];
    next.open.add(`telegram:task-${v.id}`);
    const second = open(next, (session) => (session === `task:${v.id}` ? 0.8 : 0));
    second.start((id) => next.open.has(id));
    second.resume(`telegram:task-${v.id}`, `task:${v.id}`, 1);
    expect(second.get(v.id)).toMatchObject({ state: "running", costUsd: 0.8 });
    const reply = next.runs[0]!.run.openReply();
    second.noteCost(`task:${v.id}`, 0.3);
    expect(next.stopped).toEqual([`task:${v.id}`]);
    await reply.finish("(Stopped.)", "stopped");
    expect(next.delivered.map((d) => d.text)).toEqual([`⏹ Task ${v.id} "spend" was stopped: it went over its cost cap of $1.00 (tasks.maxCostUsd) (0s, $1.1000).`]);
  });

  it("a task already over its cost cap at a restart ends without running", async () => {
    const host = new FakeHost();
    const v = open(host).spawn({ task: "Spend.", label: "spend" }, "main");
    const next = new FakeHost();
    next.accepted = [...host.accepted];
    next.open.add(`telegram:task-${v.id}`);
    const second = open(next, () => 1.25);
    second.start((id) => next.open.has(id));
    second.resume(`telegram:task-${v.id}`, `task:${v.id}`, 1);
    await new Promise((r) => setImmediate(r));
    expect(next.runs).toEqual([]);
    expect(next.delivered.map((d) => d.text)).toEqual([`⏹ Task ${v.id} "spend" was stopped: it went over its cost cap of $1.00 (tasks.maxCostUsd) (0s, $1.2500).`]);
  });

  it("the time cap counts from the task's first start, across a restart", async () => {
    const cfg = { ...config, tasks: { ...config.tasks, maxMinutes: 1 } };
    const host = new FakeHost();
    const v = open(host, undefined, cfg).spawn({ task: "Slow.", label: "slow" }, "main");
    host.runs[0]!.run.openReply(); // its first start
    // 59.9 s later the daemon is back: 100 ms of its minute are left, not a whole minute.
    now += 59_900;
    const next = new FakeHost();
    next.accepted = [...host.accepted];
    next.open.add(`telegram:task-${v.id}`);
    const second = open(next, undefined, cfg);
    second.start((id) => next.open.has(id));
    second.resume(`telegram:task-${v.id}`, `task:${v.id}`, 1);
    const reply = next.runs[0]!.run.openReply();
    const deadline = Date.now() + 5_000;
    while (next.stopped.length === 0 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 10));
    expect(next.stopped).toEqual([`task:${v.id}`]);
    await reply.finish("(Stopped.)", "stopped");
    expect(next.delivered.map((d) => d.text)).toEqual([`⏹ Task ${v.id} "slow" was stopped: it ran longer than its time cap of 1 min (tasks.maxMinutes) (1m 00s, $0.0000).`]);

    // Past it at the next start: ended without running.
    const late = new FakeHost();
    const third = open(late, undefined, cfg);
    const w = third.spawn({ task: "Later.", label: "later" }, "main");
    late.runs[0]!.run.openReply();
    now += 61_000;
    const again = new FakeHost();
    again.accepted = [...late.accepted];
    again.open.add(`telegram:task-${w.id}`);
    const fourth = open(again, undefined, cfg);
    fourth.start((id) => again.open.has(id));
    fourth.resume(`telegram:task-${w.id}`, `task:${w.id}`, 1);
    await new Promise((r) => setImmediate(r));
    expect(again.runs).toEqual([]);
    expect(fourth.get(w.id).state).toBe("over-time");
  });

  it("a task stopped at agent.maxTurns ends as stopped at its turn cap, without the chat's \"Say continue\"", async () => {
    const host = new FakeHost();
    const tasks = open(host);
    const v = tasks.spawn({ task: "Many steps.", label: "steps" }, "main");
    const reply = host.runs[0]!.run.openReply();
    reply.textDelta("Looked at 40 pages.");
    const notice = '\n\nI stopped after 40 steps, the limit set by agent.maxTurns. Say "continue" if I should go on.';
    reply.textDelta(notice, true);
    reply.turnCapReached!();
    await reply.finish(`Looked at 40 pages.${notice}`, "answered");
    expect(tasks.get(v.id).state).toBe("over-turns");
    expect(host.delivered.map((d) => d.text)).toEqual([`⏹ Task ${v.id} "steps" was stopped: it reached its turn cap of 40 steps (agent.maxTurns) (0s, $0.0000).\n\nWhat it had so far:\nLooked at 40 pages.`]);
  });

  it("cancelling a running task: the run's end waits for the result's delivery, so its entry is closed only after it", async () => {
    const host = new FakeHost();
    const tasks = open(host);
    const v = tasks.spawn({ task: "Forever.", label: "forever" }, "main");
    const reply = host.runs[0]!.run.openReply();
    const delivery = Promise.withResolvers<void>();
    const finish = host.openResult.bind(host);
    host.openResult = (entry) => ({ ...finish(entry), finish: async (text: string) => (await delivery.promise, host.delivered.push({ entry, text })) as unknown as void });
    tasks.cancel(v.id);
    expect(host.stopped).toEqual([`task:${v.id}`]);
    let ended = false;
    const runEnd = reply.finish("(Stopped.)", "stopped").then(() => (ended = true));
    await new Promise((r) => setImmediate(r));
    expect(ended).toBe(false);
    delivery.resolve();
    await runEnd;
    expect(host.delivered.map((d) => d.text)).toEqual([`⏹ Task ${v.id} "forever" was cancelled (0s, $0.0000).`]);
  });
});

describe("TaskService in a group opened to tasks", () => {
  const GROUP = "group:telegram:-100200";
  const OTHER = "group:telegram:-100300";
  const member = { sessionKey: GROUP, scope: "shared" as const };

  it("runs the group's task in the shared scope with the group's memory, reports to the group, and asks the shared budget and the group's rate limits", () => {
    const host = new FakeHost();
    const tasks = open(host);
    const v = tasks.spawn({ task: "Find a restaurant.", label: "dinner" }, GROUP, { scope: "shared", person: "77" });
    expect(tasks.originOf(`task:${v.id}`)).toEqual({ target: { channel: "telegram", chatId: "-100200" }, label: "dinner", id: v.id, scope: "shared", chatKey: GROUP });
    // Asked when it is started and again when its run is about to start.
    expect(host.budgetAsked).toEqual([`shared:${GROUP}`, `shared:${GROUP}`]);
    expect(host.admitted).toEqual([`${GROUP}/77`]);
    expect(JSON.stringify(host.runs[0]!.run.turn)).toContain("That answer is sent to the group chat that started the task.");
    // The owner's task is main, and is not counted against any group.
    const mine = tasks.spawn({ task: "Mine." }, "main");
    expect(tasks.originOf(`task:${mine.id}`)).toMatchObject({ scope: "main" });
    expect(host.admitted).toHaveLength(1);
  });

  it("task_status and cancel in a group see only that group's tasks; another chat's id is answered as unknown", () => {
    const host = new FakeHost();
    const tasks = open(host);
    const owners = tasks.spawn({ task: "Owner's secret research.", label: "secret" }, "main");
    const ours = tasks.spawn({ task: "Ours.", label: "ours" }, GROUP, { scope: "shared" });
    const theirs = tasks.spawn({ task: "Theirs.", label: "theirs" }, OTHER, { scope: "shared" });
    expect(tasks.list(member).map((v) => v.label)).toEqual(["ours"]);
    expect(tasks.list({ sessionKey: "main", scope: "main" }).map((v) => v.label)).toEqual(["secret", "ours", "theirs"]);
    expect(tasks.list().map((v) => v.label)).toEqual(["secret", "ours", "theirs"]);
    for (const id of [owners.id, theirs.id]) {
      expect(() => tasks.get(id, member)).toThrow(`No background task has the id "${id}". task_status (or /tasks) lists them.`);
      expect(() => tasks.cancel(id, member)).toThrow(`No background task has the id "${id}".`);
    }
    expect(host.stopped).toEqual([]);
    expect(tasks.get(ours.id, member).label).toBe("ours");
    expect(tasks.cancel(ours.id, member).id).toBe(ours.id);
    expect(host.stopped).toEqual([`task:${ours.id}`]);
    // A paired person's DM (shared, not opened) sees nothing.
    expect(tasks.list({ sessionKey: "dm:telegram:5", scope: "shared" })).toEqual([]);
  });

  it("refused by the budget or the rate limits, a group's task is not started, and the owner's amounts are not named", () => {
    const host = new FakeHost();
    const tasks = open(host);
    host.budget = REFUSED;
    expect(() => tasks.spawn({ task: "X." }, GROUP, { scope: "shared" })).toThrow("No background task was started: the owner's budget for shared chats is spent for now.");
    // A limit too small for one answer, with nothing spent, is not called spent.
    host.budget = { ...REFUSED, tooSmall: true };
    expect(() => tasks.spawn({ task: "X." }, GROUP, { scope: "shared" })).toThrow("No background task was started: the owner's budget for shared chats is too small for one answer.");
    host.budget = { type: "allow" };
    host.rateRefusal = "this chat has asked for a lot in a short time (a task counts as a message). It can start one again in about 12 minutes.";
    expect(() => tasks.spawn({ task: "X." }, GROUP, { scope: "shared" })).toThrow("No background task was started: this chat has asked for a lot in a short time");
    expect(host.accepted).toEqual([]);
    expect(tasks.list()).toEqual([]);
  });

  it("a group's task cannot start tasks of its own, whatever tasks.maxDepth allows", () => {
    const host = new FakeHost();
    const tasks = open(host, undefined, { ...config, tasks: { ...config.tasks, maxDepth: 3 } });
    const v = tasks.spawn({ task: "Ours." }, GROUP, { scope: "shared" });
    expect(() => tasks.spawn({ task: "Deeper." }, `task:${v.id}`, { scope: "main" })).toThrow("A background task started in a group cannot start tasks of its own.");
  });
});

describe("a task for a shared chat runs in that chat's scope, whoever started it", () => {
  const GROUP = "group:telegram:-1001";

  it("a job's task for a group (parent: the job's session) runs shared with the group's memory, is the group's to see, and asks the shared budget", () => {
    const host = new FakeHost();
    host.places.set("telegram:-1001", { type: "shared", sessionKey: GROUP });
    const tasks = open(host);
    const v = tasks.spawn({ task: "Post the weekly plan.", label: "plan" }, "cron:abc", { by: 'cron job "Plan" (abc)', to: { channel: "telegram", chatId: "-1001" } });
    expect(tasks.originOf(`task:${v.id}`)).toEqual({ target: { channel: "telegram", chatId: "-1001" }, label: "plan", id: v.id, scope: "shared", chatKey: GROUP });
    expect(host.budgetAsked).toEqual(["shared:cron:abc", "shared:cron:abc"]);
    expect(JSON.stringify(host.runs[0]!.run.turn)).toContain("That answer is sent to the shared chat it was started for.");
    expect(tasks.list({ sessionKey: GROUP, scope: "shared" }).map((t) => t.label)).toEqual(["plan"]);
  });

  it("a task for a chat no answer may go to is not started, with the reason", () => {
    const host = new FakeHost();
    const reason = "telegram:555 is not the owner's chat, an allowed group (channels.telegram.groups.allow) or a person paired with Hearth";
    host.places.set("telegram:555", { type: "refused", reason });
    const tasks = open(host);
    expect(() => tasks.spawn({ task: "Leak." }, "main", { to: { channel: "telegram", chatId: "555" } })).toThrow(`No background task was started: ${reason}.`);
    expect(host.accepted).toEqual([]);
  });
});
