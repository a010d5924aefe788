// Hybrid recall: keyword search (FTS5, search-index.ts) fused with vector search over embeddings
// of the same chunks, by reciprocal rank fusion. Optional: without `memory.embeddings` nothing
// here runs.
//
// Vectors live in their own SQLite file beside the index (`<home>/index/vectors.db`, a cache like
// it), keyed by a hash of the model, the dimensions and the chunk's text, and are searched in
// process (a dot product over normalised vectors: a few thousand chunks take milliseconds).
// Chunks are embedded in the background, in batches, only those whose key is not stored yet —
// new or changed text, or all of them after the model changed — so a restart embeds nothing new
// and an answer never waits for it. Scopes are kept exactly as keyword search keeps them: a vector
// hit is a chunk `canSee` admits for the scope, checked on every search.
import { createHash } from "node:crypto";
import { mkdirSync, rmSync } from "node:fs";
import path from "node:path";
import { DatabaseSync, type StatementSync } from "node:sqlite";
import type { Held } from "../../agent/paid-call.ts";
import type { Logger } from "../../process/log.ts";
import { canSee, type MemoryScope } from "../visibility.ts";
import { dot, embed, type EmbeddingsConfig } from "./embeddings.ts";
import type { IndexedChunk, SearchHit, SearchIndex } from "./search-index.ts";

/** How many of each list take part in the fusion. */
const CANDIDATES = 50;
/** The reciprocal rank fusion constant (the usual 60): rank r adds 1 / (K + r). */
const RRF_K = 60;
const BATCH = 64;
/** A query waits at most this long for its vector; then keywords alone answer. */
const QUERY_TIMEOUT_MS = 10_000;

export interface HybridHooks {
  /**
   * Asked before each embeddings call (a background batch, a query) with the texts it sends: the
   * budget's hold, settled once with the tokens the service read, or null when it answered
   * nothing usable. Refused: a batch pauses the pass until the next change, a query is answered
   * by keywords alone. Absent: every call is made, nothing is counted. Must not throw.
   */
  reserve?: (texts: readonly string[], purpose: "index" | "query") => Held<number>;
}

export interface HybridOptions {
  index: SearchIndex;
  /** `<home>/index/vectors.db`. */
  file: string;
  config: EmbeddingsConfig;
  log: Logger;
  hooks?: HybridHooks;
}

interface ChunkEntry {
  chunk: IndexedChunk;
  key: string;
}

export class HybridSearch {
  readonly #o: HybridOptions;
  readonly #db: DatabaseSync;
  readonly #insert: StatementSync;
  readonly #vectors = new Map<string, Float32Array>();
  #chunks: ChunkEntry[] = [];
  #running: Promise<number> | null = null;
  #again = false;
  #timer: NodeJS.Timeout | undefined;
  hooks: HybridHooks;

  private constructor(o: HybridOptions, db: DatabaseSync) {
    this.#o = o;
    this.#db = db;
    this.hooks = o.hooks ?? {};
    this.#insert = db.prepare("INSERT OR REPLACE INTO vectors (key, v) VALUES (?, ?)");
    for (const row of db.prepare("SELECT key, v FROM vectors").all() as Array<{ key: string; v: Uint8Array }>) {
      this.#vectors.set(row.key, new Float32Array(row.v.buffer.slice(row.v.byteOffset, row.v.byteOffset + row.v.byteLength)));
    }
  }

  /** Opens (or creates) the vector file; a damaged one is replaced, as the index is. */
  static open(o: HybridOptions): HybridSearch {
    mkdirSync(path.dirname(o.file), { recursive: true });
    const create = () => {
      const db = new DatabaseSync(o.file);
      db.exec("PRAGMA journal_mode = WAL; PRAGMA synchronous = NORMAL; CREATE TABLE IF NOT EXISTS vectors (key TEXT PRIMARY KEY, v BLOB NOT NULL);");
      return new HybridSearch(o, db);
    };
    try {
      return create();
    } catch (error) {
      o.log.warn("memory.vectors_rebuilt", { error });
      for (const suffix of ["", "-wal", "-shm"]) rmQuiet(`${o.file}${suffix}`);
      return create();
    }
  }

  /** Vectors stored (for tests and status). */
  get stored(): number {
    return this.#vectors.size;
  }

  /** A pass soon (after a change settles); never delays the caller. */
  schedule(delayMs = 1_000): void {
    clearTimeout(this.#timer);
    this.#timer = setTimeout(() => void this.pass(), delayMs);
    this.#timer.unref();
  }

  /**
   * Embeds every chunk whose key is not stored, in batches; resolves with how many it embedded.
   * One pass at a time (a call meanwhile runs another after it). Never rejects.
   */
  pass(): Promise<number> {
    if (this.#running) {
      this.#again = true;
      return this.#running;
    }
    this.#running = this.#pass().finally(() => {
      this.#running = null;
      if (this.#again) {
        this.#again = false;
        void this.pass();
      }
    });
    return this.#running;
  }

  async #pass(): Promise<number> {
    const entries = this.#o.index.chunks().map((chunk) => ({ chunk, key: this.#keyOf(chunk) }));
    this.#chunks = entries;
    const missing = entries.filter((e) => !this.#vectors.has(e.key));
    let done = 0;
    for (let i = 0; i < missing.length; i += BATCH) {
      const batch = missing.slice(i, i + BATCH);
      const texts = batch.map((e) => textOf(e.chunk));
      const held = this.hooks.reserve?.(texts, "index");
      if (held?.type === "refused") {
        this.#o.log.info("memory.embeddings_paused", { reason: "budget", left: missing.length - i });
        return done;
      }
      const r = await embed(this.#o.config, texts);
      if (held) held.settle(r.type === "ok" ? r.tokens : null);
      if (r.type === "failed") {
        this.#o.log.warn("memory.embeddings_failed", { reason: r.reason, left: missing.length - i });
        return done;
      }
      this.#db.exec("BEGIN");
      try {
        for (const [j, e] of batch.entries()) {
          const v = r.vectors[j]!;
          this.#insert.run(e.key, new Uint8Array(v.buffer, v.byteOffset, v.byteLength));
          this.#vectors.set(e.key, v);
        }
        this.#db.exec("COMMIT");
      } catch (error) {
        this.#db.exec("ROLLBACK");
        this.#o.log.warn("memory.embeddings_not_stored", { error });
        return done;
      }
      done += batch.length;
    }
    this.#prune(entries);
    if (done > 0) this.#o.log.info("memory.embedded", { chunks: done, stored: this.#vectors.size });
    this.#o.log.debug("memory.embeddings_pass", { embedded: done, chunks: entries.length });
    return done;
  }

  /**
   * The best chunks for `query` that `scope` may see: keyword hits and vector hits fused by
   * reciprocal rank. Keywords alone when the query cannot be embedded (logged).
   */
  async search(query: string, scope: MemoryScope, limit: number): Promise<SearchHit[]> {
    const keyword = this.#o.index.search(query, scope, CANDIDATES);
    const held = this.hooks.reserve?.([query], "query");
    if (held?.type === "refused") {
      this.#o.log.info("memory.query_not_embedded", { reason: "budget" });
      return keyword.slice(0, limit);
    }
    const q = await embed(this.#o.config, [query], QUERY_TIMEOUT_MS);
    if (held) held.settle(q.type === "ok" ? q.tokens : null);
    if (q.type === "failed") {
      this.#o.log.warn("memory.query_embedding_failed", { reason: q.reason });
      return keyword.slice(0, limit);
    }
    return fuse([keyword, this.#nearest(q.vectors[0]!, scope)], limit);
  }

  close(): void {
    clearTimeout(this.#timer);
    if (this.#db.isOpen) this.#db.close();
  }

  #nearest(q: Float32Array, scope: MemoryScope): SearchHit[] {
    if (this.#chunks.length === 0) this.#chunks = this.#o.index.chunks().map((chunk) => ({ chunk, key: this.#keyOf(chunk) }));
    const scored: Array<{ e: ChunkEntry; score: number }> = [];
    for (const e of this.#chunks) {
      const v = this.#vectors.get(e.key);
      if (!v || !canSee(scope, e.chunk.path)) continue;
      scored.push({ e, score: dot(q, v) });
    }
    scored.sort((a, b) => b.score - a.score);
    return scored.slice(0, CANDIDATES).map(({ e, score }) => ({
      path: e.chunk.path,
      line: e.chunk.line,
      heading: e.chunk.heading,
      snippet: e.chunk.text.replace(/\s+/g, " ").trim().split(" ").slice(0, 16).join(" "),
      score,
      chunk: e.chunk.rowid,
    }));
  }

  /** After a full pass: vectors of text no chunk holds any more (an edit, another model) go. */
  #prune(entries: ChunkEntry[]): void {
    const live = new Set(entries.map((e) => e.key));
    const gone = [...this.#vectors.keys()].filter((k) => !live.has(k));
    if (gone.length === 0) return;
    const del = this.#db.prepare("DELETE FROM vectors WHERE key = ?");
    this.#db.exec("BEGIN");
    for (const k of gone) {
      del.run(k);
      this.#vectors.delete(k);
    }
    this.#db.exec("COMMIT");
  }

  #keyOf(chunk: IndexedChunk): string {
    const c = this.#o.config;
    return createHash("sha256").update(`${c.model}\0${c.dimensions ?? ""}\0${textOf(chunk)}`).digest("hex").slice(0, 32);
  }
}

const textOf = (c: IndexedChunk): string => (c.heading ? `${c.heading}\n${c.text}` : c.text);

/** Reciprocal rank fusion of ranked lists of hits; a chunk in several lists is one hit (its first list's). */
export function fuse(lists: SearchHit[][], limit: number): SearchHit[] {
  const fused = new Map<number, { hit: SearchHit; score: number }>();
  for (const list of lists) {
    for (const [rank, hit] of list.entries()) {
      const f = fused.get(hit.chunk) ?? { hit, score: 0 };
      f.score += 1 / (RRF_K + rank + 1);
      fused.set(hit.chunk, f);
    }
  }
  return [...fused.values()].sort((a, b) => b.score - a.score).slice(0, limit).map((f) => ({ ...f.hit, score: f.score }));
}

function rmQuiet(file: string): void {
  try {
    rmSync(file, { force: true });
  } catch {
    // nothing to remove
  }
}
