// Daily logs (DESIGN §7): `memory/YYYY-MM-DD.md` for the main scope, `memory/chats/<slug>/…`
// for a shared chat, dated in the owner's timezone. Every append is one O_APPEND write, so a
// concurrent hand edit of the same file is never overwritten; every open goes through
// openWorkspaceFile, so a log that is a link is refused, never written through.
import { closeSync, readSync, writeSync } from "node:fs";
import { silentLogger, type Logger } from "../process/log.ts";
import { localDate, localTime } from "../process/time.ts";
import { dailyLogDir, type MemoryScope } from "./visibility.ts";
import { problemLogFor, type ProblemLog } from "./workspace-files.ts";
import { openWorkspaceFile } from "./workspace-open.ts";

export { localDate, localTime };

const USER_LIMIT = 500;
const REPLY_LIMIT = 800;

/** The day before `date` ("2026-03-01" → "2026-02-28"). */
export function previousDate(date: string): string {
  const d = new Date(`${date}T12:00:00Z`);
  d.setUTCDate(d.getUTCDate() - 1);
  return d.toISOString().slice(0, 10);
}

/** The log file of `scope` for `date`, relative to the workspace (forward slashes). */
export function dailyLogRelPath(scope: MemoryScope, date: string): string {
  return `${dailyLogDir(scope)}/${date}.md`;
}

export interface Exchange {
  at: number;
  channel: string;
  sender: string;
  userText: string;
  replyText: string;
}

const clip = (text: string, limit: number): string => {
  const t = text.trim();
  return t.length <= limit ? t : `${t.slice(0, limit - 1).trimEnd()}…`;
};

/** One log entry in the DESIGN §7 format. */
export function formatExchange(e: Exchange, timezone: string): string {
  const quoted = clip(e.userText, USER_LIMIT)
    .split("\n")
    .map((l) => (l ? `> ${l}` : ">"))
    .join("\n");
  const reply = clip(e.replyText, REPLY_LIMIT) || "(no answer)";
  return `### ${localTime(e.at, timezone)} · ${e.channel} · ${e.sender}\n${quoted}\n\n${reply}\n\n`;
}

export interface AppendResult {
  /** Relative to the workspace, forward slashes. */
  relPath: string;
  absPath: string;
  /** The file's size just before this write (0 when it created the file). */
  offset: number;
}

/**
 * An append that the workspace rules refused or the file system failed (workspace-open.ts).
 * The problem has already been logged once for the path; callers need not log it again.
 */
export class WorkspaceWriteError extends Error {
  readonly relPath: string;
  readonly reason: string;
  constructor(relPath: string, reason: string) {
    super(`Not writing to ${relPath}: ${reason}. Hearth writes only to plain files in the workspace (no symlink, no hard link, no linked folder); replace it with a regular file.`);
    this.name = "WorkspaceWriteError";
    this.relPath = relPath;
    this.reason = reason;
  }
}

export interface AppendOptions {
  /** Written before `text` when the append creates the file. */
  header?: string;
  /** Start with a line end when the file's last byte is not one (after a hand edit). */
  separate?: boolean;
}

/**
 * Appends `text` to the workspace file `relPath` as `scope`, creating it and its folders when
 * needed. Opened by openWorkspaceFile, so it never writes through a symlink, a hard link or a
 * linked folder; one write(2) on an O_APPEND descriptor, never a read-modify-write.
 * Throws WorkspaceWriteError when refused or when the file system fails.
 */
export function appendToWorkspaceFile(
  workspace: string,
  relPath: string,
  scope: MemoryScope,
  text: string,
  opts: AppendOptions = {},
  log: Logger | ProblemLog = silentLogger,
): AppendResult {
  const problems = problemLogFor(log);
  const opened = openWorkspaceFile({ workspace, relPath, scope, mode: "append" }, problems);
  if (opened.type === "missing") {
    // Only when a folder vanished between being made and the open: rare, worth a line.
    problems.warnOnce(`${workspace}/${relPath}`, "a folder on its path disappeared", undefined);
    throw new WorkspaceWriteError(relPath, "a folder on its path disappeared");
  }
  if (opened.type !== "ok") throw new WorkspaceWriteError(relPath, opened.reason);
  try {
    let body = opened.created && opts.header ? opts.header + text : text;
    if (opts.separate && !opened.created && !endsWithLineEnd(opened.fd, opened.stat.size)) body = `\n${body}`;
    writeAll(opened.fd, Buffer.from(body, "utf8"));
  } catch (err) {
    const reason = `write failed (${(err as NodeJS.ErrnoException).code ?? String(err)})`;
    problems.warnOnce(opened.absPath, reason, undefined);
    throw new WorkspaceWriteError(relPath, reason);
  } finally {
    closeSync(opened.fd);
  }
  return { relPath: opened.relPath, absPath: opened.absPath, offset: opened.created ? 0 : opened.stat.size };
}

/**
 * Appends `text` to the daily log of `scope` for the date of `at`, creating the file (with a
 * date heading) and its folders when needed. Throws WorkspaceWriteError (see appendToWorkspaceFile).
 */
export function appendToDailyLog(
  workspace: string,
  scope: MemoryScope,
  at: number,
  timezone: string,
  text: string,
  log: Logger | ProblemLog = silentLogger,
  opts: { separate?: boolean } = {},
): AppendResult {
  const date = localDate(at, timezone);
  return appendToWorkspaceFile(workspace, dailyLogRelPath(scope, date), scope, text, { header: `# ${date}\n\n`, ...opts }, log);
}

function endsWithLineEnd(fd: number, size: number): boolean {
  if (size === 0) return true;
  const last = Buffer.alloc(1);
  return readSync(fd, last, 0, 1, size - 1) === 1 && last[0] === 0x0a;
}

function writeAll(fd: number, buf: Buffer): void {
  let off = 0;
  while (off < buf.length) off += writeSync(fd, buf, off, buf.length - off);
}
