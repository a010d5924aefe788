// Daily logs (DESIGN §7): `memory/YYYY-MM-DD.md` for the main scope, `memory/chats/<slug>/…`
// for a shared chat, dated in the owner's timezone. Every append is one O_APPEND write, so a
// concurrent hand edit of the same file is never overwritten.
import { closeSync, existsSync, mkdirSync, openSync, writeSync } from "node:fs";
import path from "node:path";
import { localDate, localTime } from "../time.ts";
import { dailyLogDir, type MemoryScope } from "./visibility.ts";

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
}

/**
 * Appends `text` to the daily log of `scope` for the date of `at`, creating the file (with a
 * date heading) and its folders when needed. One write with O_APPEND: never a read-modify-write.
 */
export function appendToDailyLog(workspace: string, scope: MemoryScope, at: number, timezone: string, text: string): AppendResult {
  const date = localDate(at, timezone);
  const relPath = dailyLogRelPath(scope, date);
  const absPath = path.join(workspace, relPath);
  mkdirSync(path.dirname(absPath), { recursive: true });
  const body = existsSync(absPath) ? text : `# ${date}\n\n${text}`;
  appendOnce(absPath, body);
  return { relPath, absPath };
}

/** Appends `text` to `absPath` in a single write(2) on an O_APPEND descriptor. */
export function appendOnce(absPath: string, text: string): void {
  const fd = openSync(absPath, "a");
  try {
    const buf = Buffer.from(text, "utf8");
    let off = 0;
    while (off < buf.length) off += writeSync(fd, buf, off, buf.length - off);
  } finally {
    closeSync(fd);
  }
}
