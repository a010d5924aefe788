// Gives memory back after many sessions were released (issue 19, bounded memory). Dropping a
// session's state frees its objects, but V8 keeps the emptied heap pages (and a grown young
// generation) for reuse: after 5,000 chats went idle the JS heap was back within 8 MB of idle
// while the process still held ~90 MB more. One memory-reducing collection — the one V8 runs
// under memory pressure — compacts the heap and returns those pages to the system.
//
// The same collection runs once the daemon falls quiet after answering: a run leaves garbage in
// the old generation that V8 collects only when the heap has grown by half again, so RSS after
// the first twenty answers stood 15 MB above what the daemon held (bench telegram-memory). One
// collection a few seconds after the last run ends, at most once a minute, costs tens of
// milliseconds while nothing is waiting.

/** Sessions released since the last reduction before a sweep reduces again. */
const RELEASES_PER_REDUCTION = 100;
/** How long no run may be in progress before the quiet collection. */
const QUIET_MS = 3_000;
/** The least time between two quiet collections. */
const QUIET_INTERVAL_MS = 60_000;

type GcFunction = (options?: { type?: "major" | "minor"; execution?: "sync" | "async"; flavor?: "regular" | "last-resort" }) => void;

export interface MemoryReducerOptions {
  /** Runs the collection (tests count calls). Default: V8's memory-reducing full collection. */
  collect?: () => void;
  /** Schedules `fn` soon, off the caller's stack. Default: setImmediate. */
  defer?: (fn: () => void) => void;
  /** Runs `fn` after `ms` (unref'd); returns how to cancel it. Default: setTimeout. */
  after?: (ms: number, fn: () => void) => () => void;
  clock?: () => number;
}

export class MemoryReducer {
  readonly #collect: () => void;
  readonly #defer: (fn: () => void) => void;
  readonly #after: (ms: number, fn: () => void) => () => void;
  readonly #clock: () => number;
  #released = 0;
  #scheduled = false;
  #running = 0;
  /** Whether a run ended since the last collection. */
  #ranSince = false;
  #lastCollectedAt = Number.NEGATIVE_INFINITY;
  #cancelQuiet: (() => void) | null = null;

  constructor(opts: MemoryReducerOptions = {}) {
    this.#collect = opts.collect ?? lastResortCollection;
    this.#defer = opts.defer ?? ((fn) => void setImmediate(fn).unref());
    this.#after =
      opts.after ??
      ((ms, fn) => {
        const t = setTimeout(fn, ms);
        t.unref();
        return () => clearTimeout(t);
      });
    this.#clock = opts.clock ?? Date.now;
  }

  /** Runs `work` as a run: the quiet collection waits until no run is in progress. */
  async whileRunning<T>(work: () => Promise<T>): Promise<T> {
    this.#running++;
    this.#cancelQuiet?.();
    this.#cancelQuiet = null;
    try {
      return await work();
    } finally {
      this.#running--;
      this.#ranSince = true;
      if (this.#running === 0) this.#awaitQuiet(QUIET_MS);
    }
  }

  #awaitQuiet(ms: number): void {
    this.#cancelQuiet?.();
    this.#cancelQuiet = this.#after(ms, () => {
      this.#cancelQuiet = null;
      if (this.#running > 0 || !this.#ranSince) return;
      const wait = this.#lastCollectedAt + QUIET_INTERVAL_MS - this.#clock();
      if (wait > 0) return this.#awaitQuiet(wait);
      this.#collectNow();
    });
  }

  #collectNow(): void {
    this.#ranSince = false;
    this.#released = 0;
    this.#lastCollectedAt = this.#clock();
    this.#collect();
  }

  /** Stops a pending quiet collection (shutdown). */
  stop(): void {
    this.#cancelQuiet?.();
    this.#cancelQuiet = null;
  }

  /** A session's in-memory state was dropped. */
  noteReleased(): void {
    this.#released++;
  }

  /**
   * Call after a release sweep. When enough sessions were released since the last reduction,
   * one collection runs soon after (once, however many sweeps ask meanwhile). A single session
   * going idle never costs a full collection.
   */
  afterSweep(): void {
    if (this.#released < RELEASES_PER_REDUCTION || this.#scheduled) return;
    this.#scheduled = true;
    this.#defer(() => {
      this.#scheduled = false;
      this.#collectNow();
    });
  }
}

let gc: GcFunction | null | undefined;

/**
 * V8's "last resort" collection (full, compacting, releasing pooled pages and shrinking the
 * young generation), the one it runs itself only near its heap limit. Node offers it through
 * the `gc` function, which exists only with --expose-gc; a fresh context made after turning
 * the flag on carries it, without exposing it to the daemon's own code.
 */
function lastResortCollection(): void {
  gc ??= findGc();
  gc?.({ type: "major", execution: "sync", flavor: "last-resort" });
}

function findGc(): GcFunction | null {
  const own = (globalThis as { gc?: GcFunction }).gc;
  if (own) return own;
  try {
    // Loaded here: most daemons never release a hundred sessions.
    const { setFlagsFromString } = process.getBuiltinModule("node:v8");
    const { runInNewContext } = process.getBuiltinModule("node:vm");
    setFlagsFromString("--expose-gc");
    const found = runInNewContext("gc") as GcFunction;
    setFlagsFromString("--no-expose-gc");
    return typeof found === "function" ? found : null;
  } catch {
    return null;
  }
}
