// The memory history (the daemon's side): every change to the workspace's markdown files is
// recorded in `<home>/history.git`, batched per minute, with who made it. Hearth's own writes
// (memory_write, daily logs) are announced as they happen and snapshotted then; a hand edit is
// snapshotted when the watcher reports it; whatever changed without either (a chat folder edited
// by hand, an edit while the daemon was down) is found by a scan at each batch and is the
// owner's. A batch becomes one commit per run of same-author changes, in the order they happened.
import type { Logger } from "../../log.ts";
import { GitStore, type Author, type HistoryCommit, blobOid } from "./git-store.ts";
import { isDailyLog, isTracked, TrackedFiles } from "./tracked.ts";

export const HISTORY_BATCH_MS = 60_000;

/** The batch length: a minute, or `HEARTH_HISTORY_BATCH_MS` (tests only, not a configuration key). */
export function historyBatchMs(env: NodeJS.ProcessEnv = process.env): number {
  const n = Number(env.HEARTH_HISTORY_BATCH_MS);
  return Number.isInteger(n) && n > 0 ? n : HISTORY_BATCH_MS;
}

interface Change {
  path: string;
  author: Author;
  /** null: the file is gone. */
  bytes: Buffer | null;
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
    try {
      this.changes.push({ path: relPath, author, bytes: this.files.read(relPath) });
    } catch (err) {
      this.opts.log.warn("memory.history_note_failed", { path: relPath, error: err });
    }
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

  async close(): Promise<void> {
    if (this.timer) clearInterval(this.timer);
    this.timer = null;
    await this.flush();
    this.closed = true;
  }

  private async loadHead(): Promise<{ store: GitStore; head: { oid: string | null; files: Map<string, string> } }> {
    this.store ??= (await GitStore.open(this.opts.gitdir, { create: true }))!;
    this.head ??= await this.store.headFiles();
    return { store: this.store, head: this.head };
  }

  private async record(): Promise<void> {
    const { store, head } = await this.loadHead();
    const changes = this.changes;
    this.changes = [];
    const now = this.files.scan();
    if (head.oid === null) {
      const files = new Map<string, string>();
      for (const p of now.keys()) {
        const bytes = this.files.read(p);
        if (bytes) files.set(p, await store.writeBlob(bytes));
      }
      await this.commitTree(store, files, "hearth", `Hearth: the memory history starts (${files.size} files)`, [...files.keys()]);
      return;
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
    }
    let run: Change[] = [];
    for (const c of [...before, ...changes, ...after]) {
      if (run.length && run[0]!.author !== c.author) {
        await this.commitRun(store, run);
        run = [];
      }
      run.push(c);
    }
    if (run.length) await this.commitRun(store, run);
  }

  /** One commit for a run of one author's changes; nothing when they change nothing. */
  private async commitRun(store: GitStore, run: Change[]): Promise<void> {
    const files = new Map(this.head!.files);
    const touched = new Set<string>();
    for (const c of run) {
      const oid = c.bytes ? await store.writeBlob(c.bytes) : null;
      if ((files.get(c.path) ?? null) === oid) continue;
      if (oid) files.set(c.path, oid);
      else files.delete(c.path);
      touched.add(c.path);
    }
    const changed = [...touched].filter((p) => (files.get(p) ?? null) !== (this.head!.files.get(p) ?? null));
    if (changed.length === 0) return;
    const author = run[0]!.author;
    await this.commitTree(store, files, author, `${author === "hearth" ? "Hearth" : "owner"}: ${listFiles(changed)}`, changed);
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
          const now = this.files.scan();
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
