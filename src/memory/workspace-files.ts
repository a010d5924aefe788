// Reading owner-edited workspace files safely. The owner can put anything at these paths — a
// 50 MB paste, Latin-1 bytes, a directory, a socket — and a run must still get a usable,
// bounded context. So a file is never read whole: at most about `maxChars * 4` bytes from the
// end we keep (the head, or the tail for daily logs), decoded leniently, cut at a line
// boundary, with the size of what was left out reported for a visible marker.
import { closeSync, readSync, type Stats } from "node:fs";
import type { Logger } from "../process/log.ts";
import type { MemoryScope } from "./visibility.ts";
import { ProblemLog } from "./problem-log.ts";
import { openWorkspaceFile } from "./workspace-open.ts";

export { ProblemLog };

export type Keep = "head" | "tail";

export interface ReadCapOptions {
  /** Characters (UTF-16 code units, as `String#length` counts) kept at most. */
  maxChars: number;
  /** Which end survives a cut: "head" for notes, "tail" (the newest part) for daily logs. */
  keep: Keep;
}

export type CappedRead =
  | {
      type: "ok";
      /** The kept text, without a leading `<!-- … -->` owner comment. May be empty. */
      text: string;
      truncated: boolean;
      /** Characters left out; 0 when not truncated. */
      omittedChars: number;
      /** True when part of the file was never read and `omittedChars` counts its bytes. */
      estimated: boolean;
    }
  | { type: "missing" }
  | { type: "unreadable"; reason: string };

// A plain Logger passed to readCapped gets one ProblemLog for its lifetime, so callers that
// hold a logger (not a ProblemLog) still log each problem once.
const problemLogs = new WeakMap<Logger, ProblemLog>();
export const problemLogFor = (log: Logger | ProblemLog): ProblemLog => {
  if (log instanceof ProblemLog) return log;
  let p = problemLogs.get(log);
  if (!p) problemLogs.set(log, (p = new ProblemLog(log)));
  return p;
};

/** The widest a UTF-8 character gets: reading `maxChars * 4` bytes always yields `maxChars` characters. */
const BYTES_PER_CHAR = 4;
/** A cut moves back (or forward) to a line break when one is this close, so lines stay whole. */
const LINE_SNAP = 0.1;

/**
 * Reads at most about `maxChars * 4` bytes of the workspace file `relPath`, as `scope` may see
 * it (opened by openWorkspaceFile: links and private files are refused there), and returns at
 * most `maxChars` characters of it. Never throws for a bad file: a missing one is `missing`; a
 * refused one, a directory, socket, FIFO or a file without permission is `unreadable` (logged
 * once per path, reason and mtime). Invalid UTF-8 decodes with U+FFFD replacement characters
 * (logged once likewise).
 */
export function readWorkspaceFile(workspace: string, relPath: string, scope: MemoryScope, opts: ReadCapOptions, log: Logger | ProblemLog): CappedRead {
  const problems = problemLogFor(log);
  const opened = openWorkspaceFile({ workspace, relPath, scope, mode: "read" }, problems);
  if (opened.type === "missing") return opened;
  if (opened.type !== "ok") return { type: "unreadable", reason: opened.reason };
  try {
    return readOpen(opened.fd, opened.stat, opened.absPath, opts, problems);
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    const reason = `read failed (${code ?? (err as Error).message})`;
    problems.warnOnce(opened.absPath, reason, opened.stat.mtimeMs);
    return { type: "unreadable", reason };
  } finally {
    closeSync(opened.fd);
  }
}

/**
 * The text of one workspace note as `scope` may see it (the head, at most `maxChars`
 * characters, without a leading owner comment), or null when it is missing, refused or
 * unreadable (logged once). For readers outside the context loader, such as the heartbeat's
 * HEARTBEAT.md, so they obey the same link rules.
 */
export function readNote(workspace: string, relPath: string, scope: MemoryScope, maxChars: number, log: Logger | ProblemLog): string | null {
  const read = readWorkspaceFile(workspace, relPath, scope, { maxChars, keep: "head" }, log);
  return read.type === "ok" ? read.text : null;
}

function readOpen(fd: number, st: Stats, absPath: string, opts: ReadCapOptions, problems: ProblemLog): CappedRead {
  const maxChars = Math.max(0, Math.floor(opts.maxChars));
  const window = maxChars * BYTES_PER_CHAR;
  const whole = st.size <= window;
  const start = whole || opts.keep === "head" ? 0 : st.size - window;
  const buf = readRange(fd, start, whole ? st.size : window);
  const atEnd = whole || opts.keep === "tail";

  let bytes: Uint8Array = buf;
  // A tail slice may begin inside a multi-byte character: skip its continuation bytes
  // rather than decode them as garbage.
  if (start > 0) {
    let skip = 0;
    while (skip < 3 && skip < bytes.length && (bytes[skip]! & 0xc0) === 0x80) skip++;
    bytes = bytes.subarray(skip);
  }
  const { text: decoded, valid } = decodeUtf8(bytes, atEnd);
  if (!valid) problems.warnOnce(absPath, "not valid UTF-8 (shown with replacement characters)", st.mtimeMs);

  const text = start === 0 ? stripOwnerComment(decoded) : decoded;
  const cut = cutText(text, maxChars, opts.keep);
  // Bytes outside the window were never decoded: count them as one character each (markdown
  // is mostly ASCII), and say "about" in the marker.
  const notRead = whole ? 0 : Math.max(0, st.size - buf.length);
  const omittedChars = cut.omitted + notRead;
  return { type: "ok", text: cut.text, truncated: omittedChars > 0, omittedChars, estimated: !whole };
}

function readRange(fd: number, position: number, length: number): Buffer {
  const buf = Buffer.allocUnsafe(length);
  let off = 0;
  while (off < length) {
    const n = readSync(fd, buf, off, length - off, position + off);
    if (n === 0) break; // the file shrank while we read it
    off += n;
  }
  return buf.subarray(0, off);
}

/**
 * Decodes UTF-8. With `atEnd` false the bytes stop mid-file, so an incomplete character at the
 * cut is dropped instead of turning into a replacement character.
 */
function decodeUtf8(bytes: Uint8Array, atEnd: boolean): { text: string; valid: boolean } {
  try {
    return { text: new TextDecoder("utf-8", { fatal: true }).decode(bytes, { stream: !atEnd }), valid: true };
  } catch {
    return { text: new TextDecoder("utf-8").decode(bytes, { stream: !atEnd }), valid: false };
  }
}

/** Drops a leading `<!-- … -->` comment (a note for the owner, not for the model). */
export function stripOwnerComment(text: string): string {
  const lead = text.length - text.trimStart().length;
  if (!text.startsWith("<!--", lead)) return text;
  const end = text.indexOf("-->", lead + 4);
  if (end === -1) return text;
  return text.slice(end + 3).replace(/^\s*\n/, "");
}

/**
 * Keeps at most `max` characters of `text` from the `keep` end. The cut snaps to a line break
 * when one is near, and never splits a surrogate pair.
 */
export function cutText(text: string, max: number, keep: Keep): { text: string; omitted: number } {
  if (text.length <= max) return { text, omitted: 0 };
  const snap = Math.floor(max * LINE_SNAP);
  if (keep === "head") {
    let end = max;
    const nl = text.lastIndexOf("\n", end - 1);
    if (nl >= 0 && nl >= end - snap) end = nl;
    else if (end > 0 && isHighSurrogate(text.charCodeAt(end - 1))) end--;
    return { text: text.slice(0, end), omitted: text.length - end };
  }
  let begin = text.length - max;
  const nl = text.indexOf("\n", begin);
  if (nl >= 0 && nl + 1 <= begin + snap) begin = nl + 1;
  else if (begin < text.length && isLowSurrogate(text.charCodeAt(begin))) begin++;
  return { text: text.slice(begin), omitted: begin };
}

/** The visible note where text was left out. */
export function truncationMarker(omittedChars: number, estimated: boolean): string {
  const n = omittedChars.toLocaleString("en-US");
  return `[… truncated: ${estimated ? "about " : ""}${n} characters not shown; use memory_get to read more]`;
}

const isHighSurrogate = (c: number) => c >= 0xd800 && c <= 0xdbff;
const isLowSurrogate = (c: number) => c >= 0xdc00 && c <= 0xdfff;
