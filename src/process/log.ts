// Structured logging: one line per event. JSON lines when the output is not a terminal,
// a short readable line when it is. Every line passes through the redactor, so a secret that
// was registered (API key, bot tokens) never reaches a log, whatever field it hides in.
import { mkdirSync, openSync, writeSync } from "node:fs";
import { join } from "node:path";

export type LogLevel = "debug" | "info" | "warn" | "error" | "silent";

const levelRank: Record<LogLevel, number> = { debug: 10, info: 20, warn: 30, error: 40, silent: 100 };

export type LogFields = Record<string, unknown>;

export interface Logger {
  debug(event: string, fields?: LogFields): void;
  info(event: string, fields?: LogFields): void;
  warn(event: string, fields?: LogFields): void;
  error(event: string, fields?: LogFields): void;
  child(fields: LogFields): Logger;
}

export interface LogSink {
  write(line: string): void;
  isTTY?: boolean;
}

const secrets = new Set<string>();

/** Registers a value that must never be logged. Short values are ignored (too many false hits). */
export function registerSecret(value: string | undefined | null): void {
  if (value && value.length >= 8) secrets.add(value);
}

const secretKey = /(token|api[-_]?key|secret|password|authorization)$/i;

export function redact(text: string): string {
  let out = text;
  for (const s of secrets) if (out.includes(s)) out = out.split(s).join("[redacted]");
  return out;
}

function serialize(value: unknown): unknown {
  if (value instanceof Error) return { name: value.name, message: value.message };
  return value;
}

export function parseLevel(value: string | undefined, fallback: LogLevel): LogLevel {
  const v = value?.trim().toLowerCase();
  return v && v in levelRank ? (v as LogLevel) : fallback;
}

/**
 * Turns one event into the line to write; null drops it. Must not throw. Fields arrive with
 * credential-named ones already masked; the returned line still passes the redactor.
 */
export type LogFormat = (level: Exclude<LogLevel, "silent">, event: string, fields: LogFields) => string | null;

export interface LoggerOptions {
  level?: LogLevel;
  /** Where lines go (default stderr). */
  sink?: LogSink;
  /** Where warn and error lines go instead, when given (pm2: info on stdout, problems on stderr). */
  problemSink?: LogSink;
  /** Default: JSON lines, or a short readable line when the sink is a terminal. */
  format?: LogFormat;
  base?: LogFields;
  /** Also gets every line written, as a redacted JSON line whatever the format (the dashboard's Logs page). Must not throw. */
  tap?: (jsonLine: string) => void;
}

export function createLogger(opts: LoggerOptions = {}): Logger {
  const sink: LogSink = opts.sink ?? { write: (l) => process.stderr.write(l), isTTY: process.stderr.isTTY };
  const problemSink = opts.problemSink ?? sink;
  const threshold = levelRank[opts.level ?? parseLevel(process.env.HEARTH_LOG, "info")];

  const make = (base: LogFields): Logger => {
    const emit = (level: Exclude<LogLevel, "silent">, event: string, fields?: LogFields) => {
      if (levelRank[level] < threshold) return;
      const all: LogFields = { ...base, ...fields };
      for (const k of Object.keys(all)) {
        all[k] = secretKey.test(k) && all[k] ? "[redacted]" : serialize(all[k]);
      }
      const out = levelRank[level] >= levelRank.warn ? problemSink : sink;
      const line = opts.format ? opts.format(level, event, all) : out.isTTY ? readableLine(level, event, all) : jsonLine(level, event, all);
      if (line !== null) out.write(redact(line));
      opts.tap?.(redact(jsonLine(level, event, all)));
    };
    return {
      debug: (e, f) => emit("debug", e, f),
      info: (e, f) => emit("info", e, f),
      warn: (e, f) => emit("warn", e, f),
      error: (e, f) => emit("error", e, f),
      child: (fields) => make({ ...base, ...fields }),
    };
  };
  return make(opts.base ?? {});
}

function readableLine(level: string, event: string, fields: LogFields): string {
  return `${new Date().toISOString().slice(11, 23)} ${level.padEnd(5)} ${event}${formatFields(fields)}\n`;
}

/**
 * One line of a log file as a terminal shows it, with its date (a file spans days):
 * `2026-11-25 10:00:01.000 info  gateway.ready channels=["cli"]`. A line that is not one of
 * Hearth's JSON lines (an error printed before the logger existed) comes back as it is.
 */
export function readableLogLine(line: string): string {
  let v: unknown;
  try {
    v = JSON.parse(line);
  } catch {
    return line;
  }
  if (!v || typeof v !== "object" || Array.isArray(v)) return line;
  const { t, level, event, ...fields } = v as LogFields;
  if (typeof t !== "string" || typeof event !== "string") return line;
  return `${t.slice(0, 10)} ${t.slice(11, 23)} ${String(level ?? "").padEnd(5)} ${event}${formatFields(fields)}`;
}

function jsonLine(level: string, event: string, fields: LogFields): string {
  return `${JSON.stringify({ t: new Date().toISOString(), level, event, ...fields })}\n`;
}

export function formatFields(fields: LogFields): string {
  return Object.entries(fields)
    .map(([k, v]) => ` ${k}=${typeof v === "string" ? v : JSON.stringify(v)}`)
    .join("");
}

/** True when this process runs under pm2 (it sets pm_id in the environment of its apps). */
export const underPm2 = (env: NodeJS.ProcessEnv = process.env): boolean => env.pm_id !== undefined;

/** Set by `hearth restart` for the daemon it starts in the background: its log is split as pm2's. */
export const SPLIT_LOG_ENV = "HEARTH_SPLIT_LOG";

/**
 * The daemon's log: JSON lines on stderr; under pm2, which shows stderr as errors (in red), and
 * in the background start of `hearth restart` (the same two files), info goes to stdout and only
 * warnings and errors to stderr. Started any other way (`npm start` in a terminal), it also
 * writes the JSON lines into the files pm2 would, in `logsDir`, so that `hearth logs` reads
 * every daemon's log however it was started.
 */
export function daemonLogger(level: LogLevel, tail?: LogTail, logsDir?: string): Logger {
  if (underPm2() || process.env[SPLIT_LOG_ENV] === "1") {
    return createLogger({ level, sink: { write: (l) => process.stdout.write(l) }, problemSink: { write: (l) => process.stderr.write(l) }, ...(tail ? { tap: tail.push } : {}) });
  }
  const file = logsDir ? splitLogFiles(logsDir) : undefined;
  const taps = [tail?.push, file].filter((t) => t !== undefined);
  return createLogger({ level, ...(taps.length ? { tap: (line: string) => taps.forEach((t) => t(line)) } : {}) });
}

/** The two files pm2 writes in `dir`: info and debug lines in hearth.out.log, warnings and errors in hearth.err.log. */
export const LOG_FILE_NAMES = { out: "hearth.out.log", problems: "hearth.err.log" } as const;
const PROBLEM_LINE = /^\{"t":"[^"]*","level":"(warn|error)"/;

/**
 * A tap appending each JSON line to its file (opened at the first line, 0600, in append mode,
 * so the daemon's rotation truncating it in place is fine). A failed write (a full disk) loses
 * that line there, never the daemon: the terminal still has it.
 */
function splitLogFiles(dir: string): (line: string) => void {
  const fds: Partial<Record<keyof typeof LOG_FILE_NAMES, number>> = {};
  return (line) => {
    const which = PROBLEM_LINE.test(line) ? "problems" : "out";
    try {
      if (fds[which] === undefined) {
        mkdirSync(dir, { recursive: true, mode: 0o700 });
        fds[which] = openSync(join(dir, LOG_FILE_NAMES[which]), "a", 0o600);
      }
      writeSync(fds[which], line.endsWith("\n") ? line : `${line}\n`);
    } catch {
      // The terminal shows the line; the file misses it.
    }
  };
}

/** The newest log lines (JSON), kept in memory for the dashboard's live tail. */
export class LogTail {
  readonly #lines: string[] = [];
  readonly #listeners = new Set<(line: string) => void>();
  readonly #max: number;

  constructor(max = 500) {
    this.#max = max;
  }

  readonly push = (line: string): void => {
    const l = line.endsWith("\n") ? line.slice(0, -1) : line;
    this.#lines.push(l);
    if (this.#lines.length > this.#max) this.#lines.shift();
    for (const f of this.#listeners) f(l);
  };

  /** The kept lines, oldest first. */
  lines(): string[] {
    return [...this.#lines];
  }

  /** `listener` gets every new line; it must be quick and must not throw. Returns the unsubscribe. */
  subscribe(listener: (line: string) => void): () => void {
    this.#listeners.add(listener);
    return () => this.#listeners.delete(listener);
  }
}

/** A logger that drops everything (tests, benchmarks). */
export const silentLogger: Logger = createLogger({ level: "silent", sink: { write: () => {} } });
