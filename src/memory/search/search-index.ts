// The memory search index (DESIGN §7): SQLite FTS5 over the workspace's markdown and the text
// of stored media (voice-note transcripts, PDF text: index-files.ts), chunked by chunker.ts, at
// <home>/index/memory.db. It is a cache of the files: a damaged or outdated database is deleted
// and rebuilt, and a full reconcile on start catches up with every edit made while the daemon
// was down. Scope filtering happens in SQL, so `limit` counts only hits the scope may see, and
// every hit is checked again with `canSee` before it leaves this file.
//
// Speed on large indexes (100,000 chunks = ten years of logs): FTS5's bm25 costs about a
// microsecond per matching row, and a common word can match half of them. So a query ranks at
// most the CANDIDATES newest matching chunks, where "newest" is rowid order: notes (MEMORY.md,
// USER.md, anything not a daily log or media text) sort above every log, and logs and media
// text sort by when they were first indexed (date order on a first scan). Rarer words are
// ranked in full.
import { createHash } from "node:crypto";
import { closeSync, mkdirSync, realpathSync, rmSync, type Stats } from "node:fs";
import path from "node:path";
import type { DatabaseSync } from "node:sqlite";
import type { Logger } from "../../process/log.ts";
import { chunkMarkdown } from "./chunker.ts";
import { errorMessage, inIndexOrder, isDated, isIndexablePath, lineEnds, MAX_INDEXED_BYTES, readIndexableText, walkIndexable } from "./index-files.ts";
import { openDatabase, prepareStatements, type FileRow, type HitRow, type Statements } from "./search-db.ts";
import { matchExpression, queryTerms, scopeToken } from "./search-query.ts";
import { CHATS_DIR, canSee, type MemoryScope } from "../visibility.ts";
import { problemLogFor, type ProblemLog } from "../workspace-files.ts";
import { isSharedVisible, openWorkspaceFile } from "../workspace-open.ts";

export interface SearchHit {
  /** Relative to the workspace, forward slashes. */
  path: string;
  /** 1-based line of the best match: the chunk's line holding the first highlighted word. */
  line: number;
  /** The nearest heading above the hit (`## Pets`), or "". */
  heading: string;
  /** About 12 words around the match, matched words in `[`…`]`, on one line. */
  snippet: string;
  /** Relevance, higher is better (negated bm25). */
  score: number;
  /** The chunk it comes from (its rowid): the same chunk found by two searches is one hit. */
  chunk: number;
}

/** One indexed chunk, as the embeddings pass reads them (hybrid.ts). */
export interface IndexedChunk {
  rowid: number;
  path: string;
  line: number;
  heading: string;
  text: string;
}

export type SyncResult = "added" | "updated" | "unchanged";
export type RefreshResult = SyncResult | "removed" | "skipped";

export interface ReconcileResult {
  added: number;
  updated: number;
  removed: number;
}

export { MAX_INDEXED_BYTES };

/** At most this many matching chunks (the newest) are ranked per query; see the top comment. */
const CANDIDATES = 2000;

/**
 * Chunk rowids are `fileId * ROWS_PER_FILE + n`, so a file's chunks are one rowid range that
 * FTS5 deletes without scanning (path is UNINDEXED: `DELETE … WHERE path = ?` would read every
 * row). 2^20 is above the most chunks 2 MB of text can make.
 */
const ROWS_PER_FILE = 2 ** 20;

/** File ids: daily logs and media text below 2^31, every other file above, so notes come first in rowid DESC. */
const LOG_IDS = { lo: 1n, hi: 2n ** 31n - 1n };
const NOTE_IDS = { lo: 2n ** 31n, hi: 2n ** 32n - 1n };

const DEFAULT_LIMIT = 8;
const MAX_LIMIT = 50;

/** What the index did since it was opened: lets tests see that an append wrote one chunk. */
export interface IndexWork {
  /** Files read from their first byte (a full sync, even when nothing changed). */
  filesRead: number;
  chunksWritten: number;
  chunksDeleted: number;
}

export class SearchIndex {
  readonly #db: DatabaseSync;
  readonly #log: Logger;
  /** Shared with the context loader and the tools when they log to the same logger. */
  readonly #problems: ProblemLog;
  readonly #sql: Statements;
  readonly work: IndexWork = { filesRead: 0, chunksWritten: 0, chunksDeleted: 0 };
  #building = false;
  /** Files synced by someone else (an append, a watcher event) while a sliced build runs. */
  readonly #syncedDuringBuild = new Set<string>();

  private constructor(db: DatabaseSync, log: Logger) {
    this.#db = db;
    this.#log = log;
    this.#problems = problemLogFor(log);
    this.#sql = prepareStatements(db);
  }

  /**
   * Opens (or creates) the index at `dbPath`, creating its folder. A file that is not a usable
   * index (garbage, damaged, an older schema) is logged once, deleted with its -wal/-shm and
   * created afresh: the index is a cache. If even a fresh file cannot be created (a read-only
   * folder), the index lives in memory for this run. Never throws.
   */
  static open(dbPath: string, log: Logger): SearchIndex {
    try {
      mkdirSync(path.dirname(dbPath), { recursive: true });
      return new SearchIndex(openDatabase(dbPath), log);
    } catch (err) {
      log.warn("memory_index_rebuilt", { path: dbPath, reason: errorMessage(err) });
    }
    try {
      for (const suffix of ["", "-wal", "-shm", "-journal"]) rmSync(dbPath + suffix, { force: true });
      return new SearchIndex(openDatabase(dbPath), log);
    } catch (err) {
      log.error("memory_index_in_memory", { path: dbPath, reason: errorMessage(err), fix: `make ${path.dirname(dbPath)} writable` });
      return new SearchIndex(openDatabase(":memory:"), log);
    }
  }

  /**
   * Replaces the chunks of `relPath` (forward slashes, relative to the workspace) with those of
   * `text`, in one transaction. Unchanged content (same hash) rewrites nothing; a changed
   * mtime/size alone is only recorded. `relPath` must be the file's real path, not one through
   * a symlink or a hard link's second name: the path decides which scopes see the text.
   */
  syncFile(relPath: string, text: string, stat: { mtimeMs: number; size: number }): SyncResult {
    if (this.#building) this.#syncedDuringBuild.add(relPath);
    const hash = createHash("sha1").update(text).digest("hex");
    const row = this.#getFile(relPath);
    if (row && row.hash === hash) {
      if (row.mtimeMs !== stat.mtimeMs || row.size !== stat.size) this.#sql.updateFile.run(stat.mtimeMs, stat.size, hash, row.id);
      return "unchanged";
    }
    const chunks = chunkMarkdown(text).slice(0, ROWS_PER_FILE);
    this.#transaction(() => {
      let id: number;
      if (row) {
        id = row.id;
        this.#deleteChunksOf(id);
        this.#sql.updateFile.run(stat.mtimeMs, stat.size, hash, id);
      } else {
        const ids = isDated(relPath) ? LOG_IDS : NOTE_IDS;
        const values = { ...ids, path: relPath, mtimeMs: stat.mtimeMs, size: stat.size, hash };
        id = Number(this.#sql.insertFile.run(values).lastInsertRowid);
      }
      // BigInt: node:sqlite binds every JS number as REAL, and FTS5 wants integer rowids.
      const base = BigInt(id) * BigInt(ROWS_PER_FILE);
      const scope = scopeToken(relPath);
      chunks.forEach((c, n) => this.#sql.insertChunk.run(base + BigInt(n), relPath, BigInt(c.line), c.heading, c.text, scope));
      this.work.chunksWritten += chunks.length;
      this.#sql.updateExtent.run(Buffer.byteLength(text), lineEnds(text), chunks.length, id);
    });
    return row ? "updated" : "added";
  }

  /**
   * After the daemon appended to `relPath` (a daily log) at byte `offset`: indexes only the text
   * from `offset` on, as new chunks after the file's others, when the index holds exactly the
   * file's first `offset` bytes. Otherwise (first sight of the file, a hand edit in between, a
   * file past MAX_INDEXED_BYTES) it falls back to refreshFile. The file is opened by
   * openWorkspaceFile like every read here. Never throws for a bad file.
   */
  appendToFile(workspace: string, relPath: string, offset: number): RefreshResult {
    const rel = path.posix.normalize(toPosix(relPath));
    const row = this.#getFile(rel);
    if (!row || !isIndexablePath(rel) || row.size !== offset || (row.bytes !== offset && offset < MAX_INDEXED_BYTES) || offset === 0) return this.refreshFile(workspace, rel);
    let root: string;
    try {
      root = realpathSync(workspace);
    } catch {
      return this.refreshFile(workspace, rel);
    }
    const opened = openWorkspaceFile({ workspace: root, relPath: rel, scope: { kind: "main" }, mode: "read" }, this.#problems);
    if (opened.type !== "ok") return this.refreshFile(workspace, rel);
    let text: string | undefined;
    try {
      if (opened.relPath === rel && offset >= MAX_INDEXED_BYTES && opened.stat.size >= offset) {
        // Past the indexed part of an oversized file: nothing more to index, as a full sync would.
        this.#sql.updateFile.run(opened.stat.mtimeMs, opened.stat.size, row.hash, row.id);
        return "unchanged";
      }
      if (opened.relPath === rel && opened.stat.size >= offset && opened.stat.size <= MAX_INDEXED_BYTES) {
        text = readIndexableText(opened.fd, opened.stat.size - offset, offset);
      }
    } catch (err) {
      this.#log.warn("memory_index_read_failed", { path: rel, reason: errorMessage(err) });
    } finally {
      closeSync(opened.fd);
    }
    // A partial line or a cut character at `offset` means the prefix is not what was indexed.
    if (text === undefined || text.includes("\uFFFD")) return this.refreshFile(workspace, rel);
    if (this.#building) this.#syncedDuringBuild.add(rel);
    const chunks = chunkMarkdown(text).slice(0, ROWS_PER_FILE - row.chunks);
    const hash = createHash("sha1").update(row.hash).update(text).digest("hex");
    this.#transaction(() => {
      const base = BigInt(row.id) * BigInt(ROWS_PER_FILE) + BigInt(row.chunks);
      const scope = scopeToken(rel);
      chunks.forEach((c, n) => this.#sql.insertChunk.run(base + BigInt(n), rel, BigInt(row.lines + c.line), c.heading, c.text, scope));
      this.work.chunksWritten += chunks.length;
      this.#sql.updateFile.run(opened.stat.mtimeMs, opened.stat.size, hash, row.id);
      this.#sql.updateExtent.run(offset + Buffer.byteLength(text), row.lines + lineEnds(text), row.chunks + chunks.length, row.id);
    });
    return "updated";
  }

  /** Drops `relPath` from the index; nothing happens if it is not there. */
  removeFile(relPath: string): void {
    const row = this.#getFile(relPath);
    if (!row) return;
    this.#transaction(() => {
      this.#deleteChunksOf(row.id);
      this.#sql.deleteFile.run(row.id);
    });
  }

  /**
   * Brings the index of one file up to date with the disk, for watcher events and the
   * daemon's own writes: syncs it, removes it when it is gone or no longer indexable, or skips
   * it (not indexable, or refused by openWorkspaceFile: a symlink, a path through a linked folder,
   * a file with a second name).
   * Never throws for a bad file; logs instead.
   */
  refreshFile(workspace: string, relPath: string): RefreshResult {
    const rel = path.posix.normalize(toPosix(relPath));
    if (!isIndexablePath(rel)) return "skipped";
    let root: string;
    try {
      root = realpathSync(workspace);
    } catch (err) {
      this.#log.warn("memory_index_workspace_unreadable", { workspace, reason: errorMessage(err) });
      return "skipped";
    }
    const synced = this.#syncFromDisk(root, rel);
    if (synced) return synced;
    const wasIndexed = this.#getFile(rel) !== undefined;
    this.removeFile(rel);
    return wasIndexed ? "removed" : "skipped";
  }

  /**
   * A full scan, run on start: syncs every changed indexable file under `workspace` (mtime or size
   * differ from the index) and removes files that vanished. Indexes only the first 2 MB of a
   * larger file; skips dot-folders, node_modules and every symlink: a link inside the
   * workspace leads to a file indexed under its real path anyway, and indexing it under the
   * link's path would let a chat folder's link expose a private file. A file that cannot be
   * read is logged and left out. Never throws for a bad file.
   */
  reconcile(workspace: string): ReconcileResult {
    const result: ReconcileResult = { added: 0, updated: 0, removed: 0 };
    const root = this.#realRoot(workspace);
    if (root === null) return result;
    const seen = new Set<string>();
    this.#transaction(() => {
      for (const file of inIndexOrder([...walkIndexable(root, this.#log)])) this.#reconcileOne(root, file, seen, result);
      this.#removeUnseen(seen, result);
    });
    return result;
  }

  /** The workspace's real path; null (logged) when it cannot be resolved. */
  #realRoot(workspace: string): string | null {
    try {
      return realpathSync(workspace);
    } catch (err) {
      this.#log.warn("memory_index_workspace_unreadable", { workspace, reason: errorMessage(err) });
      return null;
    }
  }

  /** True while reconcileInSlices runs: searches then answer from what is indexed so far. */
  get building(): boolean {
    return this.#building;
  }

  /**
   * reconcile, for start-up and large rebuilds: the same work in slices of about `sliceMs`, each
   * its own transaction, yielding to the event loop in between so the daemon answers meanwhile
   * (searches see what is indexed so far; `building` is true). After each slice the WAL is
   * checkpointed and truncated, so disk use stays near the final database's size.
   * `shouldStop` ends it early (shutdown). Never throws for a bad file.
   */
  async reconcileInSlices(workspace: string, opts: { sliceMs?: number; shouldStop?: () => boolean } = {}): Promise<ReconcileResult> {
    const sliceMs = opts.sliceMs ?? 25;
    const result: ReconcileResult = { added: 0, updated: 0, removed: 0 };
    const root = this.#realRoot(workspace);
    if (root === null) return result;
    this.#building = true;
    this.#syncedDuringBuild.clear();
    try {
      // The walk itself (a readdir and an lstat per file) yields too: 10,000 files take ~100 ms.
      const found: Array<{ rel: string; info: Stats }> = [];
      let walkSliceEnd = performance.now() + sliceMs;
      for (const file of walkIndexable(root, this.#log)) {
        found.push(file);
        if (performance.now() < walkSliceEnd) continue;
        await new Promise((resolve) => setImmediate(resolve));
        if (opts.shouldStop?.() || !this.#db.isOpen) return result;
        walkSliceEnd = performance.now() + sliceMs;
      }
      const files = inIndexOrder(found);
      const seen = new Set<string>();
      let i = 0;
      while (i < files.length) {
        if (opts.shouldStop?.() || !this.#db.isOpen) return result;
        const sliceEnd = performance.now() + sliceMs;
        this.#transaction(() => {
          while (i < files.length && performance.now() < sliceEnd) this.#reconcileOne(root, files[i++]!, seen, result);
        });
        this.#checkpoint();
        await new Promise((resolve) => setImmediate(resolve));
      }
      if (opts.shouldStop?.() || !this.#db.isOpen) return result;
      this.#transaction(() => this.#removeUnseen(seen, result));
      this.#checkpoint();
      return result;
    } finally {
      this.#building = false;
      this.#syncedDuringBuild.clear();
    }
  }

  #reconcileOne(root: string, { rel, info }: { rel: string; info: Stats }, seen: Set<string>, result: ReconcileResult): void {
    const row = this.#getFile(rel);
    // A shared-visible file that gained a second name keeps its mtime and size: open it
    // again so the opener refuses it.
    if (row && (info.nlink === 1 || !isSharedVisible(rel)) && row.mtimeMs === info.mtimeMs && row.size === info.size) {
      seen.add(rel);
      return;
    }
    const synced = this.#syncFromDisk(root, rel);
    if (synced === undefined) return;
    seen.add(rel);
    if (synced !== "unchanged") result[synced]++;
  }

  #removeUnseen(seen: Set<string>, result: ReconcileResult): void {
    for (const { path: rel } of this.#sql.allPaths.all() as unknown as Array<{ path: string }>) {
      // A file created after the walk (a new day's log) was indexed by its writer: it stays.
      if (seen.has(rel) || this.#syncedDuringBuild.has(rel)) continue;
      this.removeFile(rel);
      result.removed++;
    }
  }

  #checkpoint(): void {
    try {
      this.#db.exec("PRAGMA wal_checkpoint(TRUNCATE)");
    } catch (err) {
      this.#log.debug("memory_index_checkpoint_failed", { reason: errorMessage(err) });
    }
  }

  /**
   * The best chunks for the free-text `query` that `scope` may see, best first. Words are
   * matched stemmed (running → run), stop words dropped. Chunks with all the words come first;
   * when they are fewer than `limit`, chunks with any of the rarer words follow, then chunks with
   * any word. Punctuation and FTS5 syntax in the query are ignored, so no query raises an
   * error; a query without words finds nothing.
   */
  search(query: string, scope: MemoryScope, limit = DEFAULT_LIMIT): SearchHit[] {
    const max = Math.max(1, Math.min(MAX_LIMIT, Math.floor(limit) || DEFAULT_LIMIT));
    const terms = queryTerms(query);
    if (terms.length === 0) return [];
    const hits: SearchHit[] = [];
    const found = new Set<number>();
    const collect = (rows: HitRow[]) => {
      for (const row of rows) {
        if (found.has(row.rowid) || hits.length >= max) continue;
        found.add(row.rowid);
        if (!canSee(scope, row.path)) {
          // The SQL filter makes this impossible; if it ever happens, the hit stays here.
          this.#log.error("memory_search_scope_leak_blocked", { path: row.path, scope: scope.kind });
          continue;
        }
        hits.push(toHit(row));
      }
    };
    collect(this.#rank(matchExpression(terms, "AND", scope), scope, max));
    if (hits.length < max && terms.length > 1) {
      // Any of the words: the rare ones carry the meaning, and ranking every chunk with a common
      // word would drown an old note about "Kilimanjaro" in recent ones about "trip".
      const rare = terms.filter((t) => {
        const n = this.#countUpTo(matchExpression([t], "AND", scope), CANDIDATES + 1);
        return n > 0 && n <= CANDIDATES;
      });
      if (rare.length > 0) collect(this.#rank(matchExpression(rare, "OR", scope), scope, max));
      if (hits.length < max && rare.length < terms.length) collect(this.#rank(matchExpression(terms, "OR", scope), scope, max));
    }
    return hits;
  }

  /** Every chunk of the index (for the embeddings pass; a few thousand rows, read in one go). */
  chunks(): IndexedChunk[] {
    return this.#sql.allChunks.all() as unknown as IndexedChunk[];
  }

  close(): void {
    if (this.#db.isOpen) this.#db.close();
  }

  /** The best `limit` visible chunks among the CANDIDATES newest that match. */
  #rank(match: string, scope: MemoryScope, limit: number): HitRow[] {
    const nth = this.#sql.nthNewest.get({ match, skip: CANDIDATES - 1 }) as { rowid: number } | undefined;
    const floor = BigInt(nth?.rowid ?? 0);
    const rows =
      scope.kind === "main"
        ? this.#sql.searchAll.all({ match, floor, limit })
        : this.#sql.searchShared.all({ match, floor, limit, prefix: `${CHATS_DIR}/${scope.chat}/` });
    return rows as unknown as HitRow[];
  }

  #countUpTo(match: string, max: number): number {
    return (this.#sql.countUpTo.get({ match, max }) as { n: number }).n;
  }

  /** Reads and syncs one file; undefined (logged) when it cannot be read. */
  /**
   * Indexes the file at `rel` (under the real workspace `root`) as it is on disk, opened by
   * openWorkspaceFile as the main scope would read it, and only under its own name: a symlink
   * to another note would index that note twice. Undefined when it is gone or refused; the
   * caller then drops it from the index.
   */
  #syncFromDisk(root: string, rel: string): SyncResult | undefined {
    const opened = openWorkspaceFile({ workspace: root, relPath: rel, scope: { kind: "main" }, mode: "read" }, this.#problems);
    if (opened.type !== "ok") {
      return undefined;
    }
    let text: string;
    try {
      if (opened.relPath !== rel) {
        this.#log.debug("memory_index_skipped", { path: rel, reason: "a symlink to another note, indexed under its own name" });
          return undefined;
      }
      text = readIndexableText(opened.fd, opened.stat.size);
      this.work.filesRead++;
    } catch (err) {
      this.#log.warn("memory_index_read_failed", { path: rel, reason: errorMessage(err) });
      return undefined;
    } finally {
      closeSync(opened.fd);
    }
    const info = opened.stat;
    if (info.size > MAX_INDEXED_BYTES) {
      this.#log.warn("memory_index_file_truncated", { path: rel, bytes: info.size, indexed: MAX_INDEXED_BYTES });
    }
    return this.syncFile(rel, text, { mtimeMs: info.mtimeMs, size: info.size });
  }

  #getFile(relPath: string): FileRow | undefined {
    return this.#sql.getFile.get(relPath) as unknown as FileRow | undefined;
  }

  #deleteChunksOf(fileId: number): void {
    const base = BigInt(fileId) * BigInt(ROWS_PER_FILE);
    this.work.chunksDeleted += Number(this.#sql.deleteChunks.run(base, base + BigInt(ROWS_PER_FILE)).changes);
  }

  // A savepoint, not BEGIN: syncFile and removeFile also run inside reconcile's transaction.
  #transaction(work: () => void): void {
    this.#db.exec("SAVEPOINT hearth_index");
    try {
      work();
    } catch (err) {
      this.#db.exec("ROLLBACK TO hearth_index");
      this.#db.exec("RELEASE hearth_index");
      throw err;
    }
    this.#db.exec("RELEASE hearth_index");
  }
}

const toPosix = (p: string): string => p.split(path.sep).join("/");

const MARK_OPEN = "\u0002";
const MARK_CLOSE = "\u0003";

function toHit(row: HitRow): SearchHit {
  const snippet = row.snippet.replaceAll(MARK_OPEN, "[").replaceAll(MARK_CLOSE, "]").replace(/\s+/g, " ").trim();
  return { path: row.path, line: matchLine(row), heading: row.heading, snippet, score: -row.bm25, chunk: row.rowid };
}

/** The line of the chunk that holds the snippet's first highlighted word, else the chunk's first. */
function matchLine(row: HitRow): number {
  const open = row.snippet.indexOf(MARK_OPEN);
  const close = row.snippet.indexOf(MARK_CLOSE, open);
  if (open === -1 || close === -1) return row.line;
  const marked = row.snippet.slice(open + 1, close);
  const index = row.text.split("\n").findIndex((l) => l.includes(marked));
  return row.line + Math.max(0, index);
}
