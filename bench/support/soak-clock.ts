// Loaded with `node --import` into the daemon by the soak benchmark (bench/soak.bench.ts), and
// nowhere else: the daemon has no clock of its own to turn, so this makes its week pass in
// minutes, and reports from inside what only the process itself can see.
//
// The clock. `Date.now()` and `new Date()` (no arguments) run HEARTH_SOAK_FACTOR times faster
// than the wall clock from HEARTH_SOAK_EPOCH (a wall-clock ms), starting at HEARTH_SOAK_START (a
// simulated ms). Every daemon life of one soak computes the same simulated time from the same
// three numbers, so restarts see one continuous week. Croner, the usage ledger's days, the daily
// memory logs, the heartbeat's active hours and the backup's file names all read `Date`, so they
// all see seven dates. `performance.now()` and `process.hrtime` stay real: they measure work.
//
// The timers. A sped-up `Date` with real timers would leave every `setTimeout(msUntilDue)` of
// the scheduler waiting the full simulated delay in wall time (a day's backup a day away), so
// timers must be scaled too — but not all of them. Two kinds live in the daemon:
//   - calendar timers, which wait for a moment of the simulated week: the scheduler's single
//     wake-up (cron jobs and the heartbeat, src/scheduler/engine.ts), the backup's next run
//     (src/backup/service.ts) and the sweep that releases idle sessions
//     (src/gateway/agent-runtime.ts). Their delays are divided by the factor;
//   - guard and pacing timers, which measure work and I/O in real time: the model stream's idle
//     timeout, the wedged-run watchdog, exec and MCP time limits, the approval's wait, Telegram's
//     polling pause, debounces, and every timer of Node itself and of the libraries (undici's
//     request timeouts and keep-alive, grammY). Scaling those would make a 60 s idle timeout
//     60 ms: a loaded machine would "stall" every model call. They are left alone.
// A timer is a calendar timer when the function that called `setTimeout`/`setInterval` is in one
// of those three files (one stack frame is read per call: a few microseconds). The price of the
// split: code that compares `Date.now()` differences to a limit sees work take FACTOR times
// longer. Durations are timed on `performance.now()` where it matters (the wedged-run watchdog,
// the watcher's own-write window); what is left: Telegram polling's "did this long-poll return
// early" (a slow answer counts as a long poll: it polls again at once), and the scheduler's
// 60 s grace for a late wake-up, 60 ms of wall time here (a loaded machine skips a cron run as
// late; the bench reports how many).
//
// The probe. Every HEARTH_SOAK_PROBE_MS wall ms (default 1000) one JSON line is appended to
// HEARTH_SOAK_PROBE: the JS heap, the event-loop delay over the interval and since warm-up
// (HEARTH_SOAK_WARM_MS wall ms after start), and the active handles by kind (timers, sockets,
// child processes) as `process.getActiveResourcesInfo()` lists them.
import { appendFileSync } from "node:fs";
import { getHeapSpaceStatistics } from "node:v8";
import { monitorEventLoopDelay } from "node:perf_hooks";

const RealDate = Date;
const epoch = Number(process.env.HEARTH_SOAK_EPOCH);
const factor = Number(process.env.HEARTH_SOAK_FACTOR ?? "1");
const simStart = Number(process.env.HEARTH_SOAK_START ?? epoch);
if (!Number.isFinite(epoch) || !Number.isFinite(factor) || factor < 1) throw new Error("soak-clock: set HEARTH_SOAK_EPOCH (wall ms) and HEARTH_SOAK_FACTOR (≥ 1)");

const wallNow = (): number => RealDate.now();
const simNow = (): number => Math.floor(simStart + (wallNow() - epoch) * factor);

// A function, not a subclass: `Date()` called without `new` must still return a string.
function SoakDate(this: unknown, ...args: unknown[]): unknown {
  if (!new.target) return new RealDate(simNow()).toString();
  return Reflect.construct(RealDate, args.length === 0 ? [simNow()] : args, new.target);
}
SoakDate.prototype = RealDate.prototype;
Object.defineProperties(SoakDate, {
  now: { value: simNow, writable: true, configurable: true },
  parse: { value: RealDate.parse, writable: true, configurable: true },
  UTC: { value: RealDate.UTC, writable: true, configurable: true },
});
globalThis.Date = SoakDate as unknown as DateConstructor;

const CALENDAR = /\/src\/(?:scheduler\/engine|backup\/service|gateway\/agent-runtime)\.ts:/;

function callerIsCalendar(patched: Function): boolean {
  const limit = Error.stackTraceLimit;
  Error.stackTraceLimit = 1;
  const holder: { stack?: string } = {};
  Error.captureStackTrace(holder, patched);
  Error.stackTraceLimit = limit;
  return CALENDAR.test(holder.stack ?? "");
}

type TimerFn = (fn: (...a: unknown[]) => void, ms?: number, ...args: unknown[]) => unknown;
function scaled(real: TimerFn): TimerFn {
  const patched: TimerFn = function (fn, ms, ...args) {
    const delay = typeof ms === "number" && ms > 0 && callerIsCalendar(patched) ? ms / factor : ms;
    return real(fn, delay, ...args);
  };
  // util.promisify.custom and the like stay as they were.
  for (const key of Reflect.ownKeys(real)) if (key !== "length" && key !== "name" && key !== "prototype") Reflect.defineProperty(patched, key, Reflect.getOwnPropertyDescriptor(real, key)!);
  return patched;
}
const realSetTimeout = globalThis.setTimeout;
globalThis.setTimeout = scaled(realSetTimeout as unknown as TimerFn) as unknown as typeof setTimeout;
globalThis.setInterval = scaled(globalThis.setInterval as unknown as TimerFn) as unknown as typeof setInterval;

const probeFile = process.env.HEARTH_SOAK_PROBE;
// The daemon's own figures: a child it forks with the same preload (a scheduled backup) keeps
// the clock but writes no probe lines, which would mix its small heap into the daemon's.
delete process.env.HEARTH_SOAK_PROBE;
if (probeFile) {
  const every = Number(process.env.HEARTH_SOAK_PROBE_MS ?? "1000");
  const warmAt = wallNow() + Number(process.env.HEARTH_SOAK_WARM_MS ?? "0");
  const interval = monitorEventLoopDelay({ resolution: 10 });
  interval.enable();
  // A second monitor, never reset, from warm-up on (an interval histogram cannot be added to another).
  const sinceWarm = monitorEventLoopDelay({ resolution: 10 });
  let warm = false;
  const ms = (ns: number) => Math.round(ns / 1e4) / 100;
  const sample = () => {
    const mem = process.memoryUsage();
    const resources: Record<string, number> = {};
    for (const kind of process.getActiveResourcesInfo()) resources[kind] = (resources[kind] ?? 0) + 1;
    if (!warm && wallNow() >= warmAt) {
      warm = true;
      sinceWarm.enable();
    }
    const line = {
      wall: wallNow(),
      sim: simNow(),
      heapUsed: mem.heapUsed,
      heapTotal: mem.heapTotal,
      external: mem.external,
      arrayBuffers: mem.arrayBuffers,
      rss: mem.rss,
      // What V8 holds committed besides the live objects (code, new space, large objects), in MB.
      spaces: Object.fromEntries(getHeapSpaceStatistics().map((sp) => [sp.space_name.replace(/_space$/, ""), Math.round(sp.space_size / 104857.6) / 10])),
      eldP99: ms(interval.percentile(99)),
      eldMax: ms(interval.max),
      eldWarmP50: sinceWarm.count > 0 ? ms(sinceWarm.percentile(50)) : null,
      eldWarmP99: sinceWarm.count > 0 ? ms(sinceWarm.percentile(99)) : null,
      resources,
    };
    interval.reset();
    try {
      appendFileSync(probeFile, `${JSON.stringify(line)}\n`);
    } catch {
      // The bench removed the folder: the daemon is being torn down.
    }
    realSetTimeout(sample, every).unref();
  };
  realSetTimeout(sample, every).unref();
}
