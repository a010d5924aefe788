// After many sessions were released, one memory-reducing collection gives V8's emptied pages
// back; a session or two going idle never costs a full collection.
import { execFileSync } from "node:child_process";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";
import { MemoryReducer } from "../../src/gateway/memory-reducer.ts";

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

  it("without --expose-gc, the real collection shrinks the heap and leaves no gc function on the global", () => {
    const mod = fileURLToPath(new URL("../../src/gateway/memory-reducer.ts", import.meta.url));
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
