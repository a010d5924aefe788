// Long history work (the first commit of a large workspace, a scan that hashes every file) runs in
// slices of a few milliseconds with a turn of the event loop in between, so the daemon answers
// meanwhile, and it stops between slices when asked to (shutdown).

export class Slices {
  private readonly sliceMs: number;
  private readonly shouldStop: () => boolean;
  private sliceEnd: number;

  /** `shouldStop`: called between slices; true ends the work there. Must be quick and must not throw. */
  constructor(opts: { shouldStop?: () => boolean; sliceMs?: number } = {}) {
    this.sliceMs = opts.sliceMs ?? 20;
    this.shouldStop = opts.shouldStop ?? (() => false);
    this.sliceEnd = performance.now() + this.sliceMs;
  }

  /** Called between two pieces of work: yields to the event loop once the slice is used up. Returns false when the work must stop. */
  async next(): Promise<boolean> {
    if (performance.now() >= this.sliceEnd) {
      await new Promise((resolve) => setImmediate(resolve));
      this.sliceEnd = performance.now() + this.sliceMs;
    }
    return !this.shouldStop();
  }
}
