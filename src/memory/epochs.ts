// Context epochs (DESIGN §7 "stable prefix"): a session keeps one snapshot of its context for
// as long as it can, so its system prompt stays byte-identical from run to run and the model
// provider's prompt cache keeps hitting. The daemon's own appends to today's log do not start
// a new epoch; the owner's hand edits, a new day, /new and compaction do.
import { contextFiles, normalizeRel, scopeKey, type ContextCache } from "./context.ts";
import type { MemoryScope } from "./visibility.ts";

export interface EpochContext {
  text: string;
  /** Counts this session's snapshots: changes exactly when the text was re-assembled. */
  epoch: number;
}

interface Snapshot {
  text: string;
  epoch: number;
  date: string;
  scope: string;
  /** The generation the snapshot was built at. */
  generation: number;
  /** The files it was assembled from (present or not). */
  deps: readonly string[];
}

export class ContextEpochs {
  readonly #cache: ContextCache;
  readonly #snapshots = new Map<string, Snapshot>();
  /**
   * One copy of each distinct context text, however many sessions hold it (groups with nothing
   * of their own yet all show the same identity files), counted by the snapshots using it.
   */
  readonly #texts = new Map<string, { text: string; users: number }>();
  readonly #epochs = new Map<string, number>();
  /** Bumped by every hand edit; a snapshot older than an edit of one of its files is stale. */
  #generation = 0;
  readonly #editedAt = new Map<string, number>();
  #everythingEditedAt = 0;

  constructor(cache: ContextCache) {
    this.#cache = cache;
  }

  /**
   * The session's context snapshot. Re-assembled only when there is none yet, the owner's
   * local date changed since it was taken, or one of its files was edited by hand since.
   */
  get(sessionKey: string, scope: MemoryScope, now: number): EpochContext {
    const date = this.#cache.dateAt(now);
    const snap = this.#snapshots.get(sessionKey);
    if (snap && snap.date === date && snap.scope === scopeKey(scope) && !this.#editedSince(snap)) {
      return { text: snap.text, epoch: snap.epoch };
    }
    const epoch = (this.#epochs.get(sessionKey) ?? 0) + 1;
    const next: Snapshot = {
      text: this.#share(this.#cache.assemble(scope, now)),
      epoch,
      date,
      scope: scopeKey(scope),
      generation: this.#generation,
      deps: contextFiles(scope, date).map((f) => f.relPath),
    };
    this.#epochs.set(sessionKey, epoch);
    this.#drop(sessionKey);
    this.#snapshots.set(sessionKey, next);
    return { text: next.text, epoch };
  }

  /** Ends the session's epoch (/new, compaction): the next `get` re-assembles. */
  reset(sessionKey: string): void {
    this.#drop(sessionKey);
  }

  /**
   * The session went idle: its snapshot is dropped (the provider's cache of it expired long
   * ago). Its epoch count stays, so a later snapshot is a new epoch.
   */
  forget(sessionKey: string): void {
    this.#drop(sessionKey);
  }

  /** Sessions holding a snapshot, and distinct texts among them. */
  stats(): { snapshots: number; texts: number } {
    return { snapshots: this.#snapshots.size, texts: this.#texts.size };
  }

  #share(text: string): string {
    const entry = this.#texts.get(text);
    if (entry) {
      entry.users++;
      return entry.text;
    }
    this.#texts.set(text, { text, users: 1 });
    return text;
  }

  #drop(sessionKey: string): void {
    const snap = this.#snapshots.get(sessionKey);
    if (!snap) return;
    this.#snapshots.delete(sessionKey);
    const entry = this.#texts.get(snap.text);
    if (entry && --entry.users === 0) this.#texts.delete(snap.text);
  }

  /** The owner changed `relPath`: every session that shows it starts a new epoch on its next run. */
  noteHandEdit(relPath: string): void {
    const p = normalizeRel(relPath);
    this.#cache.invalidate(p);
    this.#editedAt.set(p, ++this.#generation);
  }

  /**
   * The daemon itself wrote `relPath` (a daily-log append). Running sessions keep their
   * snapshot byte for byte; the next epoch (a new session, /new, tomorrow) sees the write.
   */
  noteOwnWrite(relPath: string): void {
    this.#cache.invalidate(normalizeRel(relPath));
  }

  /** The whole workspace was replaced (deleted and recreated): every session starts anew. */
  noteWorkspaceReplaced(): void {
    this.#cache.invalidateAll();
    this.#everythingEditedAt = ++this.#generation;
    this.#editedAt.clear();
  }

  #editedSince(snap: Snapshot): boolean {
    if (this.#everythingEditedAt > snap.generation) return true;
    return snap.deps.some((p) => (this.#editedAt.get(p) ?? 0) > snap.generation);
  }
}
