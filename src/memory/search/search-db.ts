// The index's SQLite side: the schema, opening (and rebuilding) the database file, the prepared
// statements, and turning a ranked row into a hit. search-index.ts decides what to run when.
import { DatabaseSync, type StatementSync } from "node:sqlite";
import { IDENTITY_FILES } from "../visibility.ts";

/** Bumped whenever the schema or the chunking changes: an older database is rebuilt. */
// 3: members' notes in a chat (people/<id>.md) carry a scope token of their own.
const SCHEMA_VERSION = 3;

const SCHEMA = `
  CREATE TABLE files (
    id INTEGER PRIMARY KEY,
    path TEXT NOT NULL UNIQUE,
    mtimeMs REAL NOT NULL,
    size INTEGER NOT NULL,
    hash TEXT NOT NULL,
    -- What the chunks hold: the indexed prefix's bytes and line ends, and the number of chunks,
    -- so that an append indexes only the new text (appendToFile).
    bytes INTEGER NOT NULL DEFAULT 0,
    lines INTEGER NOT NULL DEFAULT 0,
    chunks INTEGER NOT NULL DEFAULT 0
  );
  CREATE VIRTUAL TABLE chunks USING fts5(path UNINDEXED, line UNINDEXED, heading, text, scope, tokenize = 'porter unicode61');
  PRAGMA user_version = ${SCHEMA_VERSION};
`;

// bm25 weights per column: a heading word counts double; path, line and scope never count.
// `ORDER BY bm25(…)` rather than `ORDER BY rank`: with a rank configured, FTS5 sorts every match
// itself and ignores the rowid floor (measured 10x slower). snippet() marks matches with control
// characters, not brackets, so `- [x]` in a note is never taken for a match (toHit in search-index.ts converts).
const SELECT_HITS = `SELECT rowid, path, line, heading, text, snippet(chunks, 3, char(2), char(3), '…', 12) AS snippet,
    bm25(chunks, 0.0, 0.0, 2.0, 1.0, 0.0) AS bm25
  FROM chunks WHERE chunks MATCH :match AND rowid >= :floor`;
const SHARED_FILTER = `AND (path IN (${IDENTITY_FILES.map((f) => `'${f}'`).join(", ")}) OR substr(path, 1, length(:prefix)) = :prefix)`;

export interface Statements {
  getFile: StatementSync;
  insertFile: StatementSync;
  updateFile: StatementSync;
  updateExtent: StatementSync;
  deleteFile: StatementSync;
  allPaths: StatementSync;
  insertChunk: StatementSync;
  deleteChunks: StatementSync;
  searchAll: StatementSync;
  searchShared: StatementSync;
  nthNewest: StatementSync;
  countUpTo: StatementSync;
  allChunks: StatementSync;
}

export interface FileRow {
  id: number;
  mtimeMs: number;
  size: number;
  hash: string;
  bytes: number;
  lines: number;
  chunks: number;
}

export interface HitRow {
  rowid: number;
  path: string;
  line: number;
  heading: string;
  text: string;
  snippet: string;
  bm25: number;
}

/** The statements the index runs, prepared once per database. */
export function prepareStatements(db: DatabaseSync): Statements {
  const prepare = (sql: string) => db.prepare(sql);
  return {
    getFile: prepare("SELECT id, mtimeMs, size, hash, bytes, lines, chunks FROM files WHERE path = ?"),
    insertFile: prepare(`INSERT INTO files (id, path, mtimeMs, size, hash)
      VALUES ((SELECT coalesce(max(id), :lo - 1) + 1 FROM files WHERE id BETWEEN :lo AND :hi), :path, :mtimeMs, :size, :hash)`),
    updateFile: prepare("UPDATE files SET mtimeMs = ?, size = ?, hash = ? WHERE id = ?"),
    updateExtent: prepare("UPDATE files SET bytes = ?, lines = ?, chunks = ? WHERE id = ?"),
    deleteFile: prepare("DELETE FROM files WHERE id = ?"),
    allPaths: prepare("SELECT path FROM files"),
    insertChunk: prepare("INSERT INTO chunks (rowid, path, line, heading, text, scope) VALUES (?, ?, ?, ?, ?, ?)"),
    deleteChunks: prepare("DELETE FROM chunks WHERE rowid >= ? AND rowid < ?"),
    searchAll: prepare(`${SELECT_HITS} ORDER BY bm25 LIMIT :limit`),
    searchShared: prepare(`${SELECT_HITS} ${SHARED_FILTER} ORDER BY bm25 LIMIT :limit`),
    nthNewest: prepare("SELECT rowid FROM chunks WHERE chunks MATCH :match ORDER BY rowid DESC LIMIT 1 OFFSET :skip"),
    countUpTo: prepare("SELECT count(*) AS n FROM (SELECT rowid FROM chunks WHERE chunks MATCH :match LIMIT :max)"),
    allChunks: prepare("SELECT rowid, path, line, heading, text FROM chunks"),
  };
}

/** Opens `file` and makes sure it holds the current schema; throws if it is not a usable index. */
export function openDatabase(file: string): DatabaseSync {
  const db = new DatabaseSync(file);
  try {
    db.exec("PRAGMA journal_mode = WAL; PRAGMA synchronous = NORMAL; PRAGMA busy_timeout = 2000;");
    const { user_version: version } = db.prepare("PRAGMA user_version").get() as { user_version: number };
    if (version !== SCHEMA_VERSION) {
      db.exec(`BEGIN; DROP TABLE IF EXISTS chunks; DROP TABLE IF EXISTS files; ${SCHEMA} COMMIT;`);
    }
    // Touch both tables so a damaged file fails here rather than in the middle of a search.
    db.prepare("SELECT count(*) FROM files").get();
    db.prepare("SELECT rowid FROM chunks WHERE chunks MATCH 'hearth' LIMIT 1").get();
    return db;
  } catch (err) {
    db.close();
    throw err;
  }
}
