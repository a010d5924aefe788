// Bounded per-session state (issue 19): which sessions' in-memory state (transcript view,
// context budget, context snapshot) may be dropped. A session idle for `idleMs`, or the least
// recently used beyond `maxSessions`, is released; its state is reloaded from disk on demand
// (the transcript from its last compaction, the budget's calibration from its last run record).
// A session with a run in progress is never released.

export interface SessionActivityOptions {
  idleMs: number;
  maxSessions: number;
  clock: () => number;
  /** Drops the session's state. Called at most once per release; must not throw. */
  release: (key: string) => void;
}

export class SessionActivity {
  readonly #opts: SessionActivityOptions;
  /** Last use per session, oldest first (a use moves the key to the end). */
  readonly #usedAt = new Map<string, number>();
  readonly #busy = new Map<string, number>();

  constructor(opts: SessionActivityOptions) {
    this.#opts = opts;
  }

  /** The session's state was just used (created or read). */
  touch(key: string): void {
    this.#usedAt.delete(key);
    this.#usedAt.set(key, this.#opts.clock());
    this.releaseIdle();
  }

  /** Marks a run in progress until the returned function is called. */
  hold(key: string): () => void {
    this.#busy.set(key, (this.#busy.get(key) ?? 0) + 1);
    this.touch(key);
    let done = false;
    return () => {
      if (done) return;
      done = true;
      const n = (this.#busy.get(key) ?? 1) - 1;
      if (n > 0) this.#busy.set(key, n);
      else this.#busy.delete(key);
      this.touch(key);
    };
  }

  /** Sessions whose state is held in memory. */
  get size(): number {
    return this.#usedAt.size;
  }

  /** Releases the sessions idle too long and the oldest beyond the cap; returns how many. */
  releaseIdle(): number {
    const now = this.#opts.clock();
    let released = 0;
    for (const [key, at] of this.#usedAt) {
      const over = this.#usedAt.size > this.#opts.maxSessions;
      if (!over && now - at < this.#opts.idleMs) break; // the rest were used later
      if (this.#busy.has(key)) continue;
      this.#usedAt.delete(key);
      this.#opts.release(key);
      released++;
    }
    return released;
  }
}
