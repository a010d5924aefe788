// Gives memory back after many sessions were released (issue 19, bounded memory). Dropping a
// session's state frees its objects, but V8 keeps the emptied heap pages (and a grown young
// generation) for reuse: after 5,000 chats went idle the JS heap was back within 8 MB of idle
// while the process still held ~90 MB more. One memory-reducing collection — the one V8 runs
// under memory pressure — compacts the heap and returns those pages to the system.

/** Sessions released since the last reduction before a sweep reduces again. */
const RELEASES_PER_REDUCTION = 100;

type GcFunction = (options?: { type?: "major" | "minor"; execution?: "sync" | "async"; flavor?: "regular" | "last-resort" }) => void;

export interface MemoryReducerOptions {
  /** Runs the collection (tests count calls). Default: V8's memory-reducing full collection. */
  collect?: () => void;
  /** Schedules `fn` soon, off the caller's stack. Default: setImmediate. */
  defer?: (fn: () => void) => void;
}

export class MemoryReducer {
  readonly #collect: () => void;
  readonly #defer: (fn: () => void) => void;
  #released = 0;
  #scheduled = false;

  constructor(opts: MemoryReducerOptions = {}) {
    this.#collect = opts.collect ?? lastResortCollection;
    this.#defer = opts.defer ?? ((fn) => void setImmediate(fn).unref());
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
      this.#released = 0;
      this.#collect();
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
