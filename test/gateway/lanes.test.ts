import { setTimeout as sleep } from "node:timers/promises";
import { afterEach, describe, expect, it } from "vitest";
import type { ReplySink } from "../../src/channels/channel.ts";
import type { LaneItem, RunContext, RunExecutor } from "../../src/gateway/lane-item.ts";
import { LaneManager } from "../../src/gateway/lanes.ts";
import { silentLogger } from "../../src/process/log.ts";

interface Recorded {
  finals: Map<string, string[]>;
  done: string[];
}

function item(id: string, rec: Recorded, replyKey = `cli:${id}`): LaneItem {
  const sink: ReplySink = {
    textDelta: () => {},
    textReset: () => {},
    toolStarted: () => {},
    toolFinished: () => {},
    finish: async (t) => void rec.finals.set(id, [...(rec.finals.get(id) ?? []), t]),
    fail: async (m) => void rec.finals.set(id, [...(rec.finals.get(id) ?? []), `FAIL ${m}`]),
  };
  return {
    entryId: id,
    turn: { role: "user", kind: "message", text: id, ts: 0 },
    source: { channel: "cli", sender: "owner", text: id },
    replyKey,
    openReply: () => sink,
    arrivedAt: Date.now(),
  };
}

let lanes: LaneManager | undefined;
afterEach(async () => {
  await lanes?.drain(0);
});

function manager(execute: RunExecutor, over: Partial<ConstructorParameters<typeof LaneManager>[0]> = {}) {
  const rec: Recorded = { finals: new Map(), done: [] };
  lanes = new LaneManager({ execute, maxConcurrentRuns: 4, onItemsDone: (ids) => rec.done.push(...ids), log: silentLogger, inactivityLimitMs: 60_000, ...over });
  return { lanes, rec };
}

const until = async (what: string, check: () => boolean) => {
  const deadline = Date.now() + 5000;
  while (!check()) {
    if (Date.now() > deadline) throw new Error(`timed out: ${what}`);
    await sleep(5);
  }
};

describe("lanes", () => {
  it("merges a backlog past 20 messages into one follow-up run, dropping none", async () => {
    let release!: () => void;
    const gate = new Promise<void>((r) => (release = r));
    const runs: string[][] = [];
    const { lanes, rec } = manager(async (ctx) => {
      runs.push(ctx.items.map((i) => i.entryId));
      if (runs.length === 1) await gate;
      return { status: "completed", text: `answer ${runs.length}` };
    });
    lanes.submit("s", item("m0", rec), "followup");
    await until("first run", () => runs.length === 1);
    for (let i = 1; i <= 25; i++) lanes.submit("s", item(`m${i}`, rec), "followup");
    expect(lanes.snapshot()[0]!.queued).toBe(25);
    release();
    await until("all done", () => rec.done.length === 26);
    expect(runs).toHaveLength(2);
    expect(runs[1]).toHaveLength(25);
    for (let i = 1; i <= 25; i++) expect(rec.finals.get(`m${i}`)).toEqual(["answer 2"]);
  });

  it("never runs more than maxConcurrentRuns at once across sessions", async () => {
    let running = 0;
    let peak = 0;
    const { lanes, rec } = manager(
      async () => {
        running++;
        peak = Math.max(peak, running);
        await sleep(30);
        running--;
        return { status: "completed", text: "ok" };
      },
      { maxConcurrentRuns: 2 },
    );
    for (let i = 0; i < 6; i++) lanes.submit(`s${i}`, item(`m${i}`, rec), "steer");
    await until("all done", () => rec.done.length === 6);
    expect(peak).toBe(2);
  });

  it("releases a lane whose run ignores its abort, tells the user, and reports its messages abandoned, not done", async () => {
    const abandoned: string[] = [];
    const { lanes, rec } = manager(() => new Promise(() => {}), {
      inactivityLimitMs: 100,
      abortGraceMs: 100,
      onItemsAbandoned: (ids, reason) => void abandoned.push(...ids.map((id) => `${id}: ${reason}`)),
    });
    lanes.submit("s", item("stuck", rec), "steer");
    await until("the run to be given up", () => abandoned.length === 1);
    expect(abandoned).toEqual(["stuck: its run stopped responding and ignored its abort"]);
    expect(rec.done).toEqual([]);
    expect(rec.finals.get("stuck")![0]).toMatch(/^FAIL I had to give up/);
    expect(lanes.isRunning("s")).toBe(false);
    // The lane takes new work (which wedges too here, and is given up in turn).
    lanes.submit("s", item("after", rec), "steer");
    await until("the lane to take new work", () => abandoned.length === 2);
  });

  it("times a run's silence on the monotonic clock: a wall-clock step forward (NTP, a resumed laptop) does not abort it as wedged", async () => {
    let offset = 0;
    const { lanes, rec } = manager(
      async (ctx) => {
        offset = 10 * 60_000;
        await sleep(300, undefined, { signal: ctx.signal }).catch(() => undefined);
        return { status: "completed", text: ctx.signal.aborted ? "aborted" : "done" };
      },
      { inactivityLimitMs: 400, clock: () => Date.now() + offset },
    );
    lanes.submit("s", item("a", rec), "steer");
    await until("a", () => rec.done.includes("a"));
    expect(rec.finals.get("a")).toEqual(["done"]);
  });

  it("turns a throwing run into an error reply and keeps the lane usable", async () => {
    let calls = 0;
    const { lanes, rec } = manager(async () => {
      if (++calls === 1) throw new Error("boom");
      return { status: "completed", text: "fine" };
    });
    lanes.submit("s", item("a", rec), "steer");
    await until("a", () => rec.done.includes("a"));
    expect(rec.finals.get("a")![0]).toMatch(/went wrong/);
    lanes.submit("s", item("b", rec), "steer");
    await until("b", () => rec.done.includes("b"));
    expect(rec.finals.get("b")).toEqual(["fine"]);
  });

  it("runs a steering message the loop never took as the next run, with its own reply", async () => {
    let release!: () => void;
    const gate = new Promise<void>((r) => (release = r));
    const runs: string[][] = [];
    const { lanes, rec } = manager(async (ctx: RunContext) => {
      runs.push(ctx.items.map((i) => i.entryId));
      if (runs.length === 1) await gate; // the loop has already made its last steering check
      return { status: "completed", text: `answer ${runs.length}` };
    });
    lanes.submit("s", item("a", rec), "steer");
    await until("run 1", () => runs.length === 1);
    lanes.submit("s", item("b", rec), "steer");
    release();
    await until("both done", () => rec.done.length === 2);
    expect(runs).toEqual([["a"], ["b"]]);
    expect(rec.finals.get("a")).toEqual(["answer 1"]);
    expect(rec.finals.get("b")).toEqual(["answer 2"]);
  });

  it("a group member's message never steers into, or is collected with, a run that answers another member (their notes are in it)", async () => {
    let release!: () => void;
    const gate = new Promise<void>((r) => (release = r));
    const runs: Array<{ items: string[]; steered: string[] }> = [];
    const { lanes, rec } = manager(async (ctx) => {
      const run = { items: ctx.items.map((i) => i.entryId), steered: [] as string[] };
      runs.push(run);
      if (runs.length === 1) {
        await gate;
        run.steered = ctx.steering.take().map((t) => t.text);
      }
      return { status: "completed", text: "ok" };
    });
    const from = (id: string, person: string) => ({ ...item(id, rec, "telegram:-1"), person });
    lanes.submit("g", from("ann1", "200"), "steer");
    await until("run 1", () => runs.length === 1);
    lanes.submit("g", from("bob1", "300"), "steer");
    lanes.submit("g", from("ann2", "200"), "steer");
    release();
    await until("all done", () => rec.done.length === 3);
    expect(runs).toEqual([
      { items: ["ann1"], steered: ["ann2"] },
      { items: ["bob1"], steered: [] },
    ]);
  });

  it("gives a taken steering message the run's final answer, once", async () => {
    const { lanes, rec } = manager(async (ctx) => {
      await until("b to be queued", () => ctx.steering.pending());
      const taken = ctx.steering.take();
      return { status: "completed", text: `saw ${taken.map((t) => t.text).join(",")}` };
    });
    lanes.submit("s", item("a", rec), "steer");
    await sleep(10);
    lanes.submit("s", item("b", rec), "steer");
    await until("done", () => rec.done.length === 2);
    expect(rec.finals.get("a")).toEqual(["saw b"]);
    expect(rec.finals.get("b")).toEqual(["saw b"]);
  });

  it("/stop aborts the run and answers queued messages without running them", async () => {
    const runs: string[] = [];
    const { lanes, rec } = manager(async (ctx) => {
      runs.push(ctx.items[0]!.entryId);
      await new Promise<void>((r) => ctx.signal.addEventListener("abort", () => r()));
      return { status: "aborted", text: "partial" };
    });
    lanes.submit("s", item("a", rec), "followup");
    await until("a runs", () => runs.length === 1);
    lanes.submit("s", item("b", rec), "followup");
    expect(lanes.stop("s")).toEqual({ stoppedRun: true, cleared: 1 });
    await until("both answered", () => rec.done.length === 2);
    expect(runs).toEqual(["a"]);
    expect(rec.finals.get("a")).toEqual(["partial\n\n(Stopped.)"]);
    expect(rec.finals.get("b")).toEqual(["Stopped."]);
  });
});

describe("lanes: what the inbox and outbox are told", () => {
  it("an item counts as started only when a model request carries it; steering joins its reply to the run's", async () => {
    const started: string[][] = [];
    const joined: Array<[string, string]> = [];
    let release!: () => void;
    const gate = new Promise<void>((r) => (release = r));
    const { lanes, rec } = manager(
      async (ctx) => {
        if (ctx.items[0]!.entryId === "a") {
          ctx.emit({ type: "run_start", sessionKey: "s" });
          expect(started).toEqual([]); // nothing reached the model yet
          ctx.emit({ type: "turn_start", turn: 1 });
          await until("b to be queued", () => ctx.steering.pending());
          ctx.steering.take();
          ctx.emit({ type: "turn_start", turn: 2 });
          await gate;
        }
        return { status: "completed", text: "ok" };
      },
      { onItemsStarted: (ids) => void started.push(ids), onReplyJoined: (owner, id) => void joined.push([owner, id]) },
    );
    lanes.submit("s", item("a", rec, "chat:1"), "steer");
    await until("a started", () => started.length === 1);
    lanes.submit("s", item("b", rec, "chat:1"), "steer");
    await until("b taken", () => started.length === 2);
    // c waits behind the run and is stopped before any model saw it: never reported as started.
    lanes.submit("s", item("c", rec, "chat:1"), "followup");
    lanes.stop("s");
    release();
    await until("all done", () => rec.done.length === 3);
    expect(started).toEqual([["a"], ["b"]]);
    expect(joined).toEqual([["a", "b"]]);
  });
});

describe("lanes: runs that answer someone else", () => {
  it("queues a message behind a non-steerable run instead of joining it", async () => {
    let release!: () => void;
    const gate = new Promise<void>((r) => (release = r));
    const runs: string[][] = [];
    const { lanes, rec } = manager(async (ctx) => {
      runs.push(ctx.items.map((i) => i.entryId));
      if (runs.length === 1) await gate;
      return { status: "completed", text: `answer ${runs.length}` };
    });
    lanes.submit("main", { ...item("job", rec), steerable: false }, "followup");
    await until("the job runs", () => runs.length === 1);
    lanes.submit("main", item("owner", rec), "steer");
    release();
    await until("both done", () => rec.done.length === 2);
    expect(runs).toEqual([["job"], ["owner"]]);
    expect(rec.finals.get("owner")).toEqual(["answer 2"]);
  });
});

describe("lanes: messages a crash left suspect", () => {
  it("a solo item runs in a run of its own: a message that arrives meanwhile is not steered into it", async () => {
    let release!: () => void;
    const gate = new Promise<void>((r) => (release = r));
    const runs: string[][] = [];
    const { lanes, rec } = manager(async (ctx) => {
      runs.push(ctx.items.map((i) => i.entryId));
      if (runs.length === 1) await gate;
      return { status: "completed", text: `answer ${runs.length}` };
    });
    lanes.submit("s", { ...item("suspect", rec, "chat"), solo: true }, "steer");
    await until("the solo run", () => runs.length === 1);
    lanes.submit("s", item("new", rec, "chat"), "steer");
    release();
    await until("both done", () => rec.done.length === 2);
    expect(runs).toEqual([["suspect"], ["new"]]);
    expect(rec.finals.get("suspect")).toEqual(["answer 1"]);
    expect(rec.finals.get("new")).toEqual(["answer 2"]);
  });

  it("an isolated item waits for the runs before it, runs with no other run anywhere, and is reported as such", async () => {
    const active = new Set<string>();
    const overlaps: string[] = [];
    const started: Array<[string[], boolean]> = [];
    const { lanes, rec } = manager(
      async (ctx) => {
        const id = ctx.items[0]!.entryId;
        if (active.size > 0 && (id === "trial" || active.has("trial"))) overlaps.push(`${id} with ${[...active].join(",")}`);
        active.add(id);
        ctx.emit({ type: "turn_start", turn: 1 });
        await sleep(40);
        active.delete(id);
        return { status: "completed", text: "ok" };
      },
      { onItemsStarted: (ids, isolated) => void started.push([ids, isolated]) },
    );
    lanes.submit("a", item("a1", rec), "followup");
    lanes.submit("b", item("b1", rec), "followup");
    lanes.submit("t", { ...item("trial", rec), solo: true, isolated: true }, "followup");
    lanes.submit("c", item("c1", rec), "followup");
    await until("all done", () => rec.done.length === 4);
    expect(overlaps).toEqual([]);
    expect(started.find(([ids]) => ids[0] === "trial")).toEqual([["trial"], true]);
    expect(started.filter(([, isolated]) => isolated)).toHaveLength(1);
  });
});
