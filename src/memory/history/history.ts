// The memory history (the daemon's side): every change to the workspace's markdown files is
// recorded in `<home>/history.git`, batched per minute, with who made it. Hearth's own writes
// (memory_write, daily logs) are announced as they happen and snapshotted then; a hand edit is
// snapshotted when the watcher reports it; whatever changed without either (a chat folder edited
// by hand, an edit while the daemon was down) is found by a scan at each batch and is the
// owner's. A batch becomes one commit per run of same-author changes, in the order they happened.
//
// A batch works in slices that yield to the event loop (history/slices.ts): the first commit of
// a large workspace takes seconds of disk work, and the daemon must answer meanwhile. Shutdown
// gives the history HISTORY_STOP_MS to finish what it is recording; a batch still running then
// stops between slices without moving the head (objects are written before the ref that names
// them, git-store.ts), and what it did not record is found by the next start's scan.
import type { Logger } from "../../process/log.ts";
import { GitStore, type Author, type HistoryCommit, blobOid } from "./git-store.ts";
import { Slices } from "./slices.ts";
import { isDailyLog, isTracked, TrackedFiles } from "./tracked.ts";

export const HISTORY_BATCH_MS = 60_000;

/** How long close() lets the history record before it stops: well inside shutdown's 5 s. */
export const HISTORY_STOP_MS = 1_000;

/** Files whose blobs are written at once (in parallel, off the event loop). */
const BLOBS_AT_ONCE = 32;

/** The batch length: a minute, or `HEARTH_HISTORY_BATCH_MS` (tests only, not a configuration key). */
export function historyBatchMs(env: NodeJS.ProcessEnv = process.env): number {
  const n = Number(env.HEARTH_HISTORY_BATCH_MS);
  return Number.isInteger(n) && n > 0 ? n : HISTORY_BATCH_MS;
}

interface Change {
  path: string;
  author: Author;
  /** null: the file is gone; undefined: read when the batch is recorded (Hearth's daily-log appends). */
  bytes: Buffer | null | undefined;
}

export type UndoResult =
  | { type: "undone"; commit: HistoryCommit; files: string[] }
  | { type: "nothing" }
  | { type: "changed-since"; files: string[]; commit: HistoryCommit }
  /** The history could not be read or a file not written (a folder replaced by a link…): logged. */
  | { type: "failed"; reason: string };

export interface MemoryHistoryOptions {
  gitdir: string;
  workspace: string;
  log: Logger;
  clock: () => number;
  batchMs?: number;
}

export class MemoryHistory {
  private readonly opts: MemoryHistoryOptions;
  private readonly files: TrackedFiles;
  private changes: Change[] = [];
  private store: GitStore | null = null;
  /** The newest commit and its files (path → blob id), once loaded. */
  private head: { oid: string | null; files: Map<string, string> } | null = null;
  private timer: NodeJS.Timeout | null = null;
  private running: Promise<void> = Promise.resolve();
  private closed = false;
  /** Set by close(): when (performance.now()) a batch still running stops between slices. */
  private stopAt: number | null = null;
  private readonly shouldStop = () => this.stopAt !== null && performance.now() >= this.stopAt;

  constructor(opts: MemoryHistoryOptions) {
    this.opts = opts;
    this.files = new TrackedFiles(opts.workspace);
  }

  /** Records the first commit (or what changed while the daemon was down) and starts the batches. */
  start(): void {
    if (this.timer || this.closed) return;
    void this.flush();
    this.timer = setInterval(() => void this.flush(), this.opts.batchMs ?? historyBatchMs());
    this.timer.unref();
  }

  /**
   * `relPath` was just written by `author` (Hearth's own write, or a hand edit the watcher saw):
   * its bytes now are kept for the next batch. Quick, never throws.
   */
  note(relPath: string, author: Author): void {
    if (this.closed || !isTracked(relPath)) return;
    // Hearth appends to the day's log once per message: a copy of the whole file each time cost
    // time and memory that grew with the day (5,000 messages: megabytes per message, held until
    // the batch). Its bytes are read once, when the batch is recorded; a run of its appends is
    // one change. A daily log is never undone (undoLast), so what its commit holds beyond
    // Hearth's appends (a hand edit racing them) changes nothing /undo does.
    if (author === "hearth" && isDailyLog(relPath)) {
      for (let i = this.changes.length - 1; i >= 0 && this.changes[i]!.author === "hearth"; i--) {
        if (this.changes[i]!.path === relPath && this.changes[i]!.bytes === undefined) return;
      }
      this.changes.push({ path: relPath, author, bytes: undefined });
      return;
    }
    try {
      // Before someone else's change to the file: its pending appends are recorded as they are now.
      if (author !== "hearth") this.changes = this.readPending(this.changes, relPath);
      this.changes.push({ path: relPath, author, bytes: this.files.read(relPath) });
    } catch (err) {
      this.opts.log.warn("memory.history_note_failed", { path: relPath, error: err });
    }
  }

  /**
   * `changes` with the bytes of those noted without them read now (all, or those of `relPath`).
   * One that cannot be read is left out: the batch's scan finds what the file holds.
   */
  private readPending(changes: Change[], relPath?: string): Change[] {
    return changes.filter((c) => {
      if (c.bytes !== undefined || (relPath !== undefined && c.path !== relPath)) return true;
      try {
        c.bytes = this.files.read(c.path);
        return true;
      } catch (err) {
        this.opts.log.warn("memory.history_note_failed", { path: c.path, error: err });
        return false;
      }
    });
  }

  /** Records everything pending now. Batches never overlap; errors are logged, never thrown. */
  flush(): Promise<void> {
    this.running = this.running.then(() => this.record()).catch((err: unknown) => this.opts.log.error("memory.history_failed", { error: err }));
    return this.running;
  }

  /**
   * Reverts Hearth's newest change to the memory that was not undone yet (daily logs are the
   * record of what was said and stay): each file goes back to its bytes before that change,
   * provided nobody changed it since. Recorded at once as the owner's commit.
   */
  async undoLast(): Promise<UndoResult> {
    await this.flush();
    let result: UndoResult = { type: "nothing" };
    this.running = this.running.then(async () => {
      try {
        result = await this.undo();
      } catch (err) {
        this.opts.log.error("memory.undo_failed", { error: err });
        result = { type: "failed", reason: err instanceof Error ? err.message : String(err) };
      }
    });
    await this.running;
    return result;
  }

  /**
   * Records what is pending, for at most `withinMs` (the batch under way included), then stops:
   * a batch cut off moves no head, and the next start's scan records what it left (as the
   * owner's change, or within the first commit when there was none yet).
   */
  async close(withinMs = HISTORY_STOP_MS): Promise<void> {
    if (this.timer) clearInterval(this.timer);
    this.timer = null;
    this.stopAt ??= performance.now() + withinMs;
    await this.flush();
    this.closed = true;
  }

  private async loadHead(): Promise<{ store: GitStore; head: { oid: string | null; files: Map<string, string> } }> {
    this.store ??= (await GitStore.open(this.opts.gitdir, { create: true }))!;
    this.head ??= await this.store.headFiles();
    return { store: this.store, head: this.head };
  }

  private async record(): Promise<void> {
    if (this.shouldStop()) return;
    const { store, head } = await this.loadHead();
    const changes = this.readPending(this.changes);
    this.changes = [];
    if (!(await this.recordBatch(store, head, changes))) {
      this.opts.log.info("memory.history_stopped", { pending: changes.length, action: "the next start records what changed" });
    }
  }

  /** Records one batch; false when it stopped before the end (close), its last commit not made. */
  private async recordBatch(store: GitStore, head: { oid: string | null; files: Map<string, string> }, changes: Change[]): Promise<boolean> {
    const slices = new Slices({ shouldStop: this.shouldStop });
    const now = await this.files.scanInSlices({ shouldStop: this.shouldStop });
    if (!now) return false;
    if (head.oid === null) {
      const paths = [...now.keys()];
      const files = new Map<string, string>();
      for (let i = 0; i < paths.length; i += BLOBS_AT_ONCE) {
        await Promise.all(
          paths.slice(i, i + BLOBS_AT_ONCE).map(async (p) => {
            const bytes = this.files.read(p);
            if (bytes) files.set(p, await store.writeBlob(bytes));
          }),
        );
        if (!(await slices.next())) return false;
      }
      await this.commitTree(store, files, "hearth", `Hearth: the memory history starts (${files.size} files)`, [...files.keys()]);
      return true;
    }
    // What changed with no announcement: before the batch's first change of that file (a file
    // nobody announced), or after its last one.
    const last = new Map<string, string | null>();
    for (const c of changes) last.set(c.path, c.bytes ? blobOid(c.bytes) : null);
    const before: Change[] = [];
    const after: Change[] = [];
    for (const p of new Set([...now.keys(), ...head.files.keys()])) {
      const current = now.get(p) ?? null;
      if (last.has(p)) {
        if (last.get(p) !== current) after.push({ path: p, author: "owner", bytes: this.files.read(p) });
      } else if (current !== (head.files.get(p) ?? null)) before.push({ path: p, author: "owner", bytes: this.files.read(p) });
      else continue;
      if (!(await slices.next())) return false;
    }
    let run: Change[] = [];
    for (const c of [...before, ...changes, ...after]) {
      if (run.length && run[0]!.author !== c.author) {
        if (!(await this.commitRun(store, run, slices))) return false;
        run = [];
      }
      run.push(c);
    }
    return run.length === 0 || (await this.commitRun(store, run, slices));
  }

  /** One commit for a run of one author's changes; nothing when they change nothing. False when stopped before it. */
  private async commitRun(store: GitStore, run: Change[], slices: Slices): Promise<boolean> {
    const oids: Array<string | null> = [];
    for (let i = 0; i < run.length; i += BLOBS_AT_ONCE) {
      oids.push(...(await Promise.all(run.slice(i, i + BLOBS_AT_ONCE).map((c) => (c.bytes ? store.writeBlob(c.bytes) : null)))));
      if (!(await slices.next())) return false;
    }
    const files = new Map(this.head!.files);
    const touched = new Set<string>();
    for (const [i, c] of run.entries()) {
      const oid = oids[i] ?? null;
      if ((files.get(c.path) ?? null) === oid) continue;
      if (oid) files.set(c.path, oid);
      else files.delete(c.path);
      touched.add(c.path);
    }
    const changed = [...touched].filter((p) => (files.get(p) ?? null) !== (this.head!.files.get(p) ?? null));
    if (changed.length === 0) return true;
    const author = run[0]!.author;
    await this.commitTree(store, files, author, `${author === "hearth" ? "Hearth" : "owner"}: ${listFiles(changed)}`, changed);
    return true;
  }

  private async commitTree(store: GitStore, files: Map<string, string>, author: Author, message: string, changed: string[]): Promise<string> {
    const oid = await store.commit(files, this.head!.oid, author, `${message}\n`, this.opts.clock());
    this.head = { oid, files };
    this.opts.log.info("memory.history_commit", { commit: oid.slice(0, 7), author, files: changed.length });
    return oid;
  }

  private async undo(): Promise<UndoResult> {
    const { store, head } = await this.loadHead();
    const undone = new Set<string>();
    for (let oid = head.oid, seen = 0; oid && seen < 500; seen++) {
      const commit = await store.readCommit(oid);
      for (const m of commit.message.matchAll(/^Undoes: ([0-9a-f]{40})$/gmu)) undone.add(m[1]!);
      if (commit.author === "hearth" && commit.parent && !undone.has(commit.oid)) {
        const [mine, before] = [await store.files(commit.oid), await store.files(commit.parent)];
        const files = [...new Set([...mine.keys(), ...before.keys()])].filter((p) => !isDailyLog(p) && mine.get(p) !== before.get(p)).sort();
        if (files.length > 0) {
          const now = (await this.files.scanInSlices())!;
          const changedSince = files.filter((p) => (now.get(p) ?? undefined) !== mine.get(p));
          if (changedSince.length) return { type: "changed-since", files: changedSince, commit };
          const next = new Map(head.files);
          for (const p of files) {
            const oid = before.get(p);
            this.files.write(p, oid ? await store.readBlob(oid) : null);
            if (oid) next.set(p, oid);
            else next.delete(p);
          }
          await this.commitTree(store, next, "owner", `owner: /undo of ${commit.oid.slice(0, 7)} (${listFiles(files)})\n\nUndoes: ${commit.oid}`, files);
          return { type: "undone", commit, files };
        }
      }
      oid = commit.parent;
    }
    return { type: "nothing" };
  }
}

/** "MEMORY.md, USER.md" (at most five names, then how many more). */
export function listFiles(paths: string[]): string {
  const sorted = [...paths].sort();
  return sorted.length <= 5 ? sorted.join(", ") : `${sorted.slice(0, 5).join(", ")} and ${sorted.length - 5} more`;
}
