// The workspace's files as the search index reads them: which files and folders are indexed
// (markdown notes and the text of stored media), in which order a first scan takes them, and
// how much of a file's text. The watcher takes the same files (isIndexablePath).
import { type Dirent, lstatSync, readdirSync, readSync, type Stats } from "node:fs";
import path from "node:path";
import type { Logger } from "../../process/log.ts";
import { isMediaText } from "../visibility.ts";

/**
 * Only the first 2 MB of a file are indexed (cut at a line end), with a warning: a markdown file
 * that size is a dump, not notes, and reading all of a 1 GB file would stall the daemon.
 */
export const MAX_INDEXED_BYTES = 2 * 1024 * 1024;

/** A daily log's path: `memory/2026-11-23.md` or `memory/chats/<chat>/2026-11-23.md`. */
export const DAILY_LOG = /^memory\/(?:.+\/)?\d{4}-\d{2}-\d{2}\.md$/;

/**
 * Files a first scan orders by date and that rank below notes: daily logs, and media text
 * (its name starts with the day it was received: `media/2026-11/2026-11-23-<hash>.ogg.txt`).
 */
export const isDated = (rel: string): boolean => DAILY_LOG.test(rel) || isMediaText(rel);

/** Folders never indexed: dot-folders (.git, editors' state) and node_modules (others' docs). */
const SKIPPED_DIR = /^(?:\..*|node_modules)$/;

/**
 * Every indexable file under `root` (a real path: `.md` files and media text), with
 * forward-slash paths relative to it. Symlinks are neither files nor folders here: they are
 * never followed.
 */
export function* walkIndexable(root: string, log: Logger): Generator<{ rel: string; abs: string; info: Stats }> {
  const pending = [root];
  while (pending.length > 0) {
    const dir = pending.pop()!;
    let entries: Dirent[];
    try {
      entries = readdirSync(dir, { withFileTypes: true });
    } catch (err) {
      log.warn("memory_index_folder_unreadable", { path: toPosix(path.relative(root, dir)) || ".", reason: errorMessage(err) });
      continue;
    }
    for (const entry of entries) {
      if (entry.isDirectory() && !SKIPPED_DIR.test(entry.name)) pending.push(path.join(dir, entry.name));
      if (!entry.isFile() || entry.name.startsWith(".") || !(entry.name.endsWith(".md") || entry.name.endsWith(".txt"))) continue;
      const abs = path.join(dir, entry.name);
      const rel = toPosix(path.relative(root, abs));
      if (!entry.name.endsWith(".md") && !isMediaText(rel)) continue;
      try {
        yield { rel, abs, info: lstatSync(abs) };
      } catch (err) {
        log.warn("memory_index_stat_failed", { path: rel, reason: errorMessage(err) });
      }
    }
  }
}

/**
 * Files in the order a first scan should index them: daily logs and media text by date, across
 * the main and chat folders, so their file ids (and rowids) follow the calendar; other files by
 * path.
 */
export function inIndexOrder<T extends { rel: string }>(files: T[]): T[] {
  const key = (rel: string) => (isDated(rel) ? `${path.posix.basename(rel)}\0${rel}` : rel);
  return files.map((f) => ({ f, k: key(f.rel) })).sort((a, b) => (a.k < b.k ? -1 : a.k > b.k ? 1 : 0)).map(({ f }) => f);
}

/**
 * The file's text for indexing: at most MAX_INDEXED_BYTES (cut at the last line end), invalid
 * UTF-8 replaced by U+FFFD, NUL bytes dropped (they would end the text early in SQLite).
 */
export function readIndexableText(fd: number, size: number, from = 0): string {
  const buf = Buffer.alloc(Math.min(size, MAX_INDEXED_BYTES));
  let got = 0;
  while (got < buf.length) {
    const n = readSync(fd, buf, got, buf.length - got, from + got);
    if (n === 0) break;
    got += n;
  }
  let bytes = buf.subarray(0, got);
  if (size > MAX_INDEXED_BYTES) {
    const end = bytes.lastIndexOf(0x0a);
    if (end > 0) bytes = bytes.subarray(0, end + 1);
  }
  return new TextDecoder("utf-8").decode(bytes).replaceAll("\0", "");
}

export function lineEnds(text: string): number {
  let n = 0;
  for (let i = text.indexOf("\n"); i !== -1; i = text.indexOf("\n", i + 1)) n++;
  return n;
}

/** A workspace-relative path (normalised, forward slashes) that reconcile would index. */
export function isIndexablePath(rel: string): boolean {
  if (!(rel.endsWith(".md") || isMediaText(rel)) || rel.startsWith("/") || rel.startsWith("../") || rel === "..") return false;
  return rel.split("/").every((part) => !SKIPPED_DIR.test(part));
}

const toPosix = (p: string): string => p.split(path.sep).join("/");
export const errorMessage = (err: unknown): string => (err instanceof Error ? err.message : String(err));
