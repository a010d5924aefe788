// After many sessions were released, one memory-reducing collection gives V8's emptied pages
// back; a session or two going idle never costs a full collection.
import { execFileSync } from "node:child_process";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";
import { MemoryReducer } from "../../../src/gateway/upkeep/memory-reducer.ts";

function reducer() {
  const pending: Array<() => void> = [];
  let collections = 0;
  const r = new MemoryReducer({ collect: () => collections++, defer: (fn) => pending.push(fn) });
  return { r, runPending: () => pending.splice(0).forEach((fn) => fn()), collections: () => collections, pending: () => pending.length };
}

describe("MemoryReducer", () => {
  it("collects once after a sweep that follows 100 releases, not before", () => {
    const t = reducer();
    for (let i = 0; i < 99; i++) t.r.noteReleased();
    t.r.afterSweep();
    t.runPending();
    expect(t.collections()).toBe(0);
    t.r.noteReleased();
    t.r.afterSweep();
    t.r.afterSweep();
    expect(t.pending()).toBe(1);
    t.runPending();
    expect(t.collections()).toBe(1);
  });

  it("counts afresh after a collection", () => {
    const t = reducer();
    for (let i = 0; i < 150; i++) t.r.noteReleased();
    t.r.afterSweep();
    t.runPending();
    for (let i = 0; i < 50; i++) t.r.noteReleased();
    t.r.afterSweep();
    t.runPending();
    expect(t.collections()).toBe(1);
  });

  it("collects once the daemon is quiet after a run, never during one, at most once a minute", async () => {
    let now = 0;
    let collections = 0;
    const timers: Array<{ at: number; fn: () => void; live: boolean }> = [];
    const r = new MemoryReducer({
      collect: () => collections++,
      clock: () => now,
      after: (ms, fn) => {
        const t = { at: now + ms, fn, live: true };
        timers.push(t);
        return () => void (t.live = false);
      },
    });
    const advance = (ms: number) => {
      const until = now + ms;
      for (;;) {
        const next = timers.filter((t) => t.live && t.at <= until).sort((a, b) => a.at - b.at)[0];
        if (!next) break;
        now = next.at;
        next.live = false;
        next.fn();
      }
      now = until;
    };
    let finish!: () => void;
    const long = r.whileRunning(() => new Promise<void>((resolve) => (finish = resolve)));
    await r.whileRunning(async () => {});
    advance(10_000);
    expect(collections).toBe(0); // the long run is still going
    finish();
    await long;
    advance(2_999);
    expect(collections).toBe(0);
    advance(1);
    expect(collections).toBe(1);
    // Another run soon after: its quiet collection waits for the minute to pass.
    await r.whileRunning(async () => {});
    advance(10_000);
    expect(collections).toBe(1);
    advance(50_000);
    expect(collections).toBe(2);
    // Quiet with no run since: nothing more.
    advance(600_000);
    expect(collections).toBe(2);
    // A run that starts before the quiet time is up postpones it.
    await r.whileRunning(async () => {});
    advance(2_000);
    const again = r.whileRunning(async () => {});
    await again;
    advance(2_000);
    expect(collections).toBe(2);
    advance(1_000);
    expect(collections).toBe(3);
  });

  it("without --expose-gc, the real collection shrinks the heap and leaves no gc function on the global", () => {
    const mod = fileURLToPath(new URL("../../../src/gateway/upkeep/memory-reducer.ts", import.meta.url));
    const script = `
      const { MemoryReducer } = await import(${JSON.stringify(mod)});
      let keep = []; for (let i = 0; i < 500000; i++) keep.push({ i, s: "x" + i }); keep = [];
      const before = process.memoryUsage().heapTotal;
      const r = new MemoryReducer({ defer: (fn) => fn() });
      for (let i = 0; i < 100; i++) r.noteReleased();
      r.afterSweep();
      process.stdout.write(JSON.stringify({ shrank: process.memoryUsage().heapTotal < before / 2, gc: typeof globalThis.gc }));`;
    const out = execFileSync(process.execPath, ["--input-type=module", "-e", script], { encoding: "utf8" });
    expect(JSON.parse(out)).toEqual({ shrank: true, gc: "undefined" });
  });
});
