// Small durable files: JSON-lines logs read back after a crash, and whole files replaced
// atomically. Every store in Hearth (transcripts, inbox, cron, sessions, pairing) reads and
// writes its state through these, so that every state file gets the same treatment:
//  - a record of the wrong shape is skipped and logged with the file and line, never a crash;
//  - a whole file that cannot be used is set aside as `<name>.damaged-<time>` (never
//    overwritten, never deleted) and the store starts with what it could keep;
//  - an append never glues two records together, even after a failed (disk full) write;
//  - a failed atomic write leaves no temp file behind.
import {
  closeSync,
  copyFileSync,
  constants,
  fstatSync,
  fsyncSync,
  ftruncateSync,
  linkSync,
  mkdirSync,
  openSync,
  readdirSync,
  readFileSync,
  readSync,
  renameSync,
  rmSync,
  unlinkSync,
  writeFileSync,
} from "node:fs";
import { basename, dirname, join } from "node:path";
import { z } from "zod";
import { DAMAGED_MARK } from "./damaged-mark.ts";
import type { Logger } from "../process/log.ts";
import { isAlive } from "../process/info.ts";
import { planStateMigration, upgradeRecord, type RecordUpgrade, type RecordVersions, type StateVersions } from "./versions.ts";

export { NewerStateError, stampRecord, type RecordVersions, type StateStep, type StateVersions } from "./versions.ts";

export { DISK_FULL_NOT_SAVED, DISK_FULL_REPLY, DiskFullError, internalErrorText, isDiskFull } from "./disk-full.ts";

// ---------------------------------------------------------------------------------------------
// Appends

/**
 * Appends `text` (one or more complete lines, each ending in "\n") to `path`, creating it.
 *
 * Records are never glued together: a torn tail left by an earlier failed or interrupted
 * append (the file does not end in a newline) is cut back to the last newline first, and a
 * write that fails (ENOSPC halfway through a line) is truncated back to where it started before
 * the error is rethrown. Cutting rather than writing a newline first is deliberate: the torn
 * fragment belongs to a write whose caller got an error (or died), so nothing acknowledged is
 * lost, and no half line stays in the file to be reported on every later read.
 *
 * `durable` adds an fsync: the record survives a power loss once this returns.
 */
export function appendRecord(path: string, text: string, opts: { durable?: boolean; mode?: number } = {}): void {
  const fd = openSync(path, "a+", opts.mode ?? 0o600);
  try {
    let size = fstatSync(fd).size;
    if (size > 0 && !endsWithNewline(fd, size)) size = cutToLastNewline(fd, size);
    try {
      writeFileSync(fd, text);
      if (opts.durable) fsyncSync(fd);
    } catch (err) {
      try {
        ftruncateSync(fd, size);
      } catch {
        // The next append cuts the torn tail instead.
      }
      throw err;
    }
  } finally {
    closeSync(fd);
  }
}

/** Appends complete lines and fsyncs them before returning (see appendRecord). */
export function appendDurable(path: string, text: string): void {
  appendRecord(path, text, { durable: true });
}

/** Truncates `path` after its last newline when its last line is incomplete; returns the bytes cut. */
export function cutTornTail(path: string): number {
  let fd: number;
  try {
    fd = openSync(path, "r+");
  } catch (err) {
    // Missing: nothing to cut. Unreadable: the loader that reads it next sets it aside.
    if ((err as NodeJS.ErrnoException).code === "ENOENT" || (err as NodeJS.ErrnoException).code === "EISDIR") return 0;
    throw err;
  }
  try {
    const size = fstatSync(fd).size;
    if (size === 0 || endsWithNewline(fd, size)) return 0;
    return size - cutToLastNewline(fd, size);
  } finally {
    closeSync(fd);
  }
}

function endsWithNewline(fd: number, size: number): boolean {
  const b = Buffer.alloc(1);
  readSync(fd, b, 0, 1, size - 1);
  return b[0] === 0x0a;
}

/** Cuts the file after its last newline (to nothing if it has none); returns the new size. */
function cutToLastNewline(fd: number, size: number): number {
  const chunk = Buffer.alloc(64 * 1024);
  let end = size;
  while (end > 0) {
    const start = Math.max(0, end - chunk.length);
    const n = readSync(fd, chunk, 0, end - start, start);
    const nl = chunk.subarray(0, n).lastIndexOf(0x0a);
    if (nl !== -1) {
      ftruncateSync(fd, start + nl + 1);
      return start + nl + 1;
    }
    end = start;
  }
  ftruncateSync(fd, 0);
  return 0;
}

// ---------------------------------------------------------------------------------------------
// Whole files

/**
 * Replaces `path` with `text` so that a reader (or a crash) sees the old file or the new one,
 * never half of either: a temp file in the same folder, then a rename. The temp name carries
 * the pid, so the daemon and a CLI command writing at once do not share one. When any step
 * fails the temp file is removed and the error rethrown; `path` is untouched.
 *
 * `sync` (default true) fsyncs the file before the rename and the folder after it, so the new
 * content also survives a power loss. A file rewritten often whose loss costs little (the
 * sessions index: usage counters) passes false: an fsync blocks the event loop.
 */
export function writeFileAtomic(path: string, text: string | Uint8Array, mode = 0o600, opts: { sync?: boolean } = {}): void {
  const sync = opts.sync ?? true;
  const dir = dirname(path);
  mkdirSync(dir, { recursive: true, mode: 0o700 });
  const tmp = `${path}.tmp-${process.pid}`;
  try {
    const fd = openSync(tmp, "w", mode);
    try {
      writeFileSync(fd, text);
      if (sync) fsyncSync(fd);
    } finally {
      closeSync(fd);
    }
    renameSync(tmp, path);
  } catch (err) {
    rmSync(tmp, { force: true });
    throw err;
  }
  if (sync) syncDir(dir);
}

/**
 * Removes the temp files of `path` (`<name>.tmp-<pid>`) whose writer is no longer alive: a kill
 * or a power loss between writing and renaming leaves one. Returns the names removed.
 */
export function removeStaleTemps(path: string): string[] {
  const prefix = `${basename(path)}.tmp-`;
  let names: string[];
  try {
    names = readdirSync(dirname(path));
  } catch {
    return [];
  }
  const removed: string[] = [];
  for (const name of names) {
    if (!name.startsWith(prefix)) continue;
    const pid = Number(name.slice(prefix.length));
    if (!Number.isInteger(pid) || pid <= 0 || isAlive(pid)) continue;
    rmSync(join(dirname(path), name), { force: true });
    removed.push(name);
  }
  return removed;
}

/** Makes a rename in `dir` durable. Best effort: some file systems do not allow it. */
function syncDir(dir: string): void {
  try {
    const fd = openSync(dir, constants.O_RDONLY);
    try {
      fsyncSync(fd);
    } finally {
      closeSync(fd);
    }
  } catch {
    // Not supported here; the rename itself is still atomic.
  }
}

// ---------------------------------------------------------------------------------------------
// Validating loaders

export { DAMAGED_MARK } from "./damaged-mark.ts";

/** Where a damaged copy of `path` goes at time `now`; never the name of an existing file. */
function damagedPath(path: string, now: number): string {
  return `${path}${DAMAGED_MARK}${new Date(now).toISOString().replace(/[:.]/g, "-")}`;
}

/**
 * Sets `path` aside under a new `.damaged-<time>` name and returns that name. `keepOriginal`
 * copies instead of moving (the caller keeps using what it salvaged and will rewrite `path`).
 * An existing file of that name is never replaced: a counter is added.
 */
export function setAsideDamaged(path: string, opts: { keepOriginal?: boolean; now?: number } = {}): string {
  const base = damagedPath(path, opts.now ?? Date.now());
  for (let i = 0; ; i++) {
    const target = i === 0 ? base : `${base}-${i}`;
    try {
      if (opts.keepOriginal) copyFileSync(path, target, constants.COPYFILE_EXCL);
      else {
        linkSync(path, target); // fails with EEXIST instead of replacing
        unlinkSync(path);
      }
      return target;
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code === "EEXIST") continue;
      if (!opts.keepOriginal && (err as NodeJS.ErrnoException).code === "EPERM") {
        // No hard links on this file system: a rename to a fresh name is the next best thing.
        renameSync(path, target);
        return target;
      }
      throw err;
    }
  }
}

/** A schema or a type guard: what a record must satisfy to be kept. */
export type RecordCheck<T> = z.ZodType<T> | ((v: unknown) => v is T);

export interface JsonLines<T> {
  values: T[];
  /** 1-based numbers of the lines that were skipped: not JSON (a torn line), or of the wrong shape. */
  badLines: number[];
  /** One entry per skipped line: "line 3: ✖ Invalid input → at message". */
  problems: string[];
}

/**
 * Reads a JSON-lines file. A missing file is empty; blank lines are skipped; a line that does
 * not parse, or that `check` rejects, is skipped and reported in `badLines` and `problems`.
 * What a zod schema returns is kept.
 *
 * With `log` (a state file being loaded) the skipped lines are logged with the file's path, and
 * a file that cannot be read at all (a folder in its place, no permission) is moved aside as
 * `<name>.damaged-<time>` and read as empty. Without it such a file throws.
 *
 * `from`: a byte offset at a line start to read from (a loader that found where the part it
 * needs begins); line numbers then count from there.
 */
export function readJsonLines<T>(path: string, check: RecordCheck<T> = (v): v is T => true, log?: Logger, from = 0): JsonLines<T> {
  return readLines(path, check, log, from);
}

/**
 * Reads an append-only JSON-lines file whose records carry versions (state-versions.ts
 * RecordVersions), as readJsonLines does: each record is first brought to `versions.current`
 * (its `"v"` removed), then checked. A record of a newer version throws NewerStateError naming
 * the file and line, and the file is left as it is; one of an unknown version is skipped.
 */
export function readVersionedJsonLines<T>(path: string, check: RecordCheck<T>, versions: RecordVersions, log?: Logger): JsonLines<T> {
  return readLines(path, check, log, 0, versions);
}

function readLines<T>(path: string, check: RecordCheck<T>, log: Logger | undefined, from: number, versions?: RecordVersions): JsonLines<T> {
  let text: string;
  try {
    text = from > 0 ? readFrom(path, from) : readFileSync(path, "utf8");
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === "ENOENT") return { values: [], badLines: [], problems: [] };
    if (!log) throw err;
    const keptAs = setAsideDamaged(path);
    log.error("state.file_damaged", { file: path, problem: `cannot be read (${(err as Error).message})`, keptAs, action: `moved it aside as ${basename(keptAs)} and started without it` });
    return { values: [], badLines: [], problems: [] };
  }
  const values: T[] = [];
  const badLines: number[] = [];
  const problems: string[] = [];
  for (const [i, line] of text.split("\n").entries()) {
    if (!line.trim()) continue;
    const r = parseRecord(line, check, versions && ((raw) => upgradeRecord(path, i + 1, raw, versions)));
    if (r.ok) values.push(r.value);
    else {
      badLines.push(i + 1);
      problems.push(`line ${i + 1}: ${r.problem}`);
    }
  }
  if (log && badLines.length > 0) {
    log.warn("state.records_skipped", { file: path, lines: badLines, problems: problems.slice(0, 10), action: "skipped these lines; the rest of the file is used" });
  }
  return { values, badLines, problems };
}

function readFrom(path: string, from: number): string {
  const fd = openSync(path, "r");
  try {
    const size = fstatSync(fd).size;
    const buf = Buffer.alloc(Math.max(0, size - from));
    let got = 0;
    while (got < buf.length) {
      const n = readSync(fd, buf, got, buf.length - got, from + got);
      if (n === 0) break;
      got += n;
    }
    return buf.subarray(0, got).toString("utf8");
  } finally {
    closeSync(fd);
  }
}

/**
 * The byte offset of the last line of `path` that `isStart` accepts, reading the file backwards
 * in 64 KB blocks (only the tail is read when that line is near the end); 0 when none is, or
 * when `path` is missing or not a file.
 * `isStart` gets each line's raw bytes, newest first, and should test a cheap prefix before
 * parsing anything.
 */
export function lastLineWhere(path: string, isStart: (line: Buffer) => boolean): number {
  let fd: number;
  try {
    fd = openSync(path, "r");
  } catch {
    return 0;
  }
  try {
    if (!fstatSync(fd).isFile()) return 0; // the loader then reports what it is
    let pos = fstatSync(fd).size;
    let carry = Buffer.alloc(0);
    while (pos > 0) {
      const n = Math.min(65_536, pos);
      pos -= n;
      const block = Buffer.alloc(n);
      readSync(fd, block, 0, n, pos);
      const data = carry.length > 0 ? Buffer.concat([block, carry]) : block;
      let end = data.length;
      // (A negative offset would make lastIndexOf count from the end: stop at 0.)
      while (end > 0) {
        const nl = data.lastIndexOf(0x0a, end - 1);
        if (nl === -1) break;
        if (nl + 1 < end && isStart(data.subarray(nl + 1, end))) return pos + nl + 1;
        end = nl;
      }
      carry = data.subarray(0, end);
    }
    // The first line starts at 0 whether it is the one or not.
    return 0;
  } finally {
    closeSync(fd);
  }
}

function parseRecord<T>(line: string, check: RecordCheck<T>, upgrade?: (raw: unknown) => RecordUpgrade): { ok: true; value: T } | { ok: false; problem: string } {
  let raw: unknown;
  try {
    raw = JSON.parse(line);
  } catch (err) {
    return { ok: false, problem: `not JSON (${(err as Error).message})` };
  }
  if (upgrade) {
    const up = upgrade(raw);
    if (!up.ok) return up;
    raw = up.value;
  }
  return checkValue(raw, check);
}

/** Validates one value against a schema or guard. */
export function checkValue<T>(raw: unknown, check: RecordCheck<T>): { ok: true; value: T } | { ok: false; problem: string } {
  if (typeof check === "function") return check(raw) ? { ok: true, value: raw } : { ok: false, problem: "a record of the wrong shape" };
  const parsed = check.safeParse(raw);
  return parsed.success ? { ok: true, value: parsed.data } : { ok: false, problem: oneLine(z.prettifyError(parsed.error)) };
}

/** zod's pretty error on one log line: "✖ message → at jobs[0].schedule; ✖ …". */
export function oneLine(pretty: string): string {
  return pretty
    .split("\n")
    .map((l) => l.trim())
    .filter(Boolean)
    .join(" ")
    .replace(/ ✖/g, "; ✖");
}

/** What a store could make of a file that did not validate as a whole. */
export interface Salvaged<T> {
  value: T;
  /** What was dropped, one entry per record: `sessions["dm:telegram:7"]: ✖ …`. */
  dropped: string[];
}

export type JsonFileLoad<T> =
  | { status: "missing" }
  /** `damagedCopy`: records were dropped, and the file as it was is kept under this name. */
  | { status: "ok"; value: T; damagedCopy?: string }
  /** Nothing usable: the file was moved to `damagedCopy`; `path` no longer exists. */
  | { status: "damaged"; problem: string; damagedCopy: string };

/**
 * Brings a whole-file store's parsed value to its current version (state-versions.ts): an older
 * file is kept as `<name>.v<N>.bak`, rewritten, and each step logged; a newer one throws.
 */
function migrateState(path: string, raw: unknown, versions: StateVersions, log: Logger): unknown {
  const plan = planStateMigration(path, raw, versions);
  if (!plan) return raw;
  const backup = `${path}.v${plan.from}.bak`;
  try {
    copyFileSync(path, backup, constants.COPYFILE_EXCL);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== "EEXIST") throw err;
    // An interrupted upgrade kept it already: that copy is the older one.
  }
  writeFileAtomic(path, `${JSON.stringify(plan.value, null, 1)}\n`);
  for (const step of plan.steps) log.info("state.migrated", { file: path, from: step.from, to: step.from + 1, step: step.name, keptAs: backup });
  return plan.value;
}

export interface JsonFileOptions<T> {
  schema: z.ZodType<T>;
  log: Logger;
  /** The file's format versions; see StateVersions. */
  versions?: StateVersions;
  /**
   * Called when the file is JSON but does not match `schema`: keeps the records that are valid
   * and names those dropped. Returns null when nothing can be kept (the file is set aside).
   */
  salvage?: (raw: unknown) => Salvaged<T> | null;
  now?: number;
}

/**
 * Reads a whole-file JSON store (sessions/index.json, pairing.json, cron/jobs.json). A missing
 * file is `missing`. A file that cannot be read or parsed, or that nothing can be salvaged
 * from, is moved aside to `<name>.damaged-<time>` and reported: the caller starts empty, and a
 * later save cannot overwrite what the owner may still need. When only some records are bad,
 * the good ones are returned and a copy of the file as it was is kept the same way. With
 * `versions`, an older file is migrated first and a newer one throws NewerStateError.
 */
export function loadJsonFile<T>(path: string, opts: JsonFileOptions<T>): JsonFileLoad<T> {
  const { log } = opts;
  const stale = removeStaleTemps(path);
  if (stale.length > 0) log.warn("state.temp_removed", { file: path, removed: stale, reason: "left by a process that died while writing" });
  let text: string;
  try {
    text = readFileSync(path, "utf8");
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === "ENOENT") return { status: "missing" };
    return setAside(path, `cannot be read (${(err as Error).message})`, opts);
  }
  let raw: unknown;
  try {
    raw = JSON.parse(text.charCodeAt(0) === 0xfeff ? text.slice(1) : text);
  } catch (err) {
    return setAside(path, `is not valid JSON (${(err as Error).message})`, opts);
  }
  if (opts.versions) raw = migrateState(path, raw, opts.versions, log);
  const whole = checkValue(raw, opts.schema);
  if (whole.ok) return { status: "ok", value: whole.value };
  const salvaged = opts.salvage?.(raw) ?? null;
  if (!salvaged) return setAside(path, `has the wrong shape (${whole.problem})`, opts);
  if (salvaged.dropped.length === 0) return { status: "ok", value: salvaged.value };
  const damagedCopy = setAsideDamaged(path, { keepOriginal: true, ...(opts.now !== undefined ? { now: opts.now } : {}) });
  log.error("state.records_dropped", {
    file: path,
    dropped: salvaged.dropped,
    keptAs: damagedCopy,
    action: `started with the valid records; the file as it was is kept as ${basename(damagedCopy)}`,
  });
  return { status: "ok", value: salvaged.value, damagedCopy };
}

function setAside<T>(path: string, problem: string, opts: JsonFileOptions<T>): JsonFileLoad<T> {
  const damagedCopy = setAsideDamaged(path, opts.now !== undefined ? { now: opts.now } : {});
  opts.log.error("state.file_damaged", {
    file: path,
    problem,
    keptAs: damagedCopy,
    action: `moved it aside as ${basename(damagedCopy)} and started without it`,
  });
  return { status: "damaged", problem, damagedCopy };
}

/**
 * Keeps the entries of `raw` (an array) that pass `check`; names the others `label[i]: why`.
 * A value that is not an array keeps nothing and is named once.
 */
export function salvageArray<T>(raw: unknown, label: string, check: RecordCheck<T>): Salvaged<T[]> {
  if (raw === undefined) return { value: [], dropped: [] };
  if (!Array.isArray(raw)) return { value: [], dropped: [`${label}: not a list`] };
  const value: T[] = [];
  const dropped: string[] = [];
  for (const [i, item] of raw.entries()) {
    const r = checkValue(item, check);
    if (r.ok) value.push(r.value);
    else dropped.push(`${label}[${i}]: ${r.problem}`);
  }
  return { value, dropped };
}
