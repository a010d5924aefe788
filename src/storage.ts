// Small durable files: JSON-lines logs read back after a crash, and whole files replaced
// atomically. Every store in Hearth (transcripts, inbox, cron, sessions, pairing) uses these.
import { closeSync, fsyncSync, mkdirSync, openSync, readFileSync, renameSync, writeFileSync, writeSync } from "node:fs";
import { dirname } from "node:path";

export interface JsonLines<T> {
  values: T[];
  /** 1-based numbers of the lines that are not JSON (a torn last line after a crash, say). */
  badLines: number[];
}

/**
 * Reads a JSON-lines file. A missing file is empty; blank lines are skipped; a line that does
 * not parse, or that `accept` rejects, is skipped and reported in `badLines`.
 */
export function readJsonLines<T>(path: string, accept: (v: unknown) => v is T = (v): v is T => true): JsonLines<T> {
  let text: string;
  try {
    text = readFileSync(path, "utf8");
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === "ENOENT") return { values: [], badLines: [] };
    throw err;
  }
  const values: T[] = [];
  const badLines: number[] = [];
  for (const [i, line] of text.split("\n").entries()) {
    if (!line.trim()) continue;
    try {
      const v: unknown = JSON.parse(line);
      if (accept(v)) values.push(v);
      else badLines.push(i + 1);
    } catch {
      badLines.push(i + 1);
    }
  }
  return { values, badLines };
}

/**
 * Replaces `path` with `text` so that a reader (or a crash) sees the old file or the new one,
 * never half of either: a temp file in the same folder, then a rename. The temp name carries
 * the pid, so the daemon and a CLI command writing at once do not share one.
 */
export function writeFileAtomic(path: string, text: string, mode = 0o600): void {
  mkdirSync(dirname(path), { recursive: true, mode: 0o700 });
  const tmp = `${path}.tmp-${process.pid}`;
  writeFileSync(tmp, text, { mode });
  renameSync(tmp, path);
}

/**
 * Appends `text` to `path` and waits until it is on disk (fsync) before returning: for records
 * that must survive a power loss once the caller acts on them (an acknowledged message).
 */
export function appendDurable(path: string, text: string): void {
  const fd = openSync(path, "a", 0o600);
  try {
    writeSync(fd, text);
    fsyncSync(fd);
  } finally {
    closeSync(fd);
  }
}
