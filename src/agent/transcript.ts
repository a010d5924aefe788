// One append-only JSONL file per session. Each record is one line, written with a single
// append before the loop takes its next step, so a crash loses at most the line being written.
import { appendFileSync, closeSync, fstatSync, ftruncateSync, mkdirSync, openSync, readSync } from "node:fs";
import { dirname } from "node:path";
import type { Logger } from "../log.ts";
import { readJsonLines } from "../storage.ts";
import type { RunStatus } from "./events.ts";
import type { Message } from "./messages.ts";

export type TranscriptRecord =
  | { type: "session"; version: 1; key: string; ts: number }
  | { type: "message"; message: Message }
  /** A run ended (how, and what it cost). */
  | { type: "run"; status: RunStatus; turns: number; ts: number }
  /** The model's view starts fresh after this record (/new, /reset). */
  | { type: "epoch"; reason: string; ts: number }
  /** Compaction: `messages` replaces the model's view; the records before it stay on disk. */
  | { type: "compaction"; reason: string; messages: Message[]; summarized: boolean; tokensBefore: number; tokensAfter: number; ts: number };

export interface LoadedTranscript {
  records: TranscriptRecord[];
  /** Lines that could not be parsed (1-based line numbers); a torn last line is one of them. */
  badLines: number[];
}

/** Reads a transcript. A missing file is an empty transcript; unparseable lines are skipped. */
export function readTranscript(path: string): LoadedTranscript {
  const { values, badLines } = readJsonLines<TranscriptRecord>(path);
  return { records: values, badLines };
}

export class Transcript {
  readonly path: string;
  readonly key: string;
  /** The model's view: messages since the last epoch record, or the last compaction's view and what followed. */
  readonly #view: Message[] = [];

  private constructor(path: string, key: string) {
    this.path = path;
    this.key = key;
  }

  /**
   * Opens (or creates) the transcript of session `key` at `path`. A torn last line — a crash
   * in the middle of an append — is cut off and reported, so the next append starts clean.
   */
  static open(path: string, key: string, log: Logger, clock: () => number = Date.now): Transcript {
    mkdirSync(dirname(path), { recursive: true });
    const cut = repairTornTail(path);
    if (cut > 0) log.warn("transcript.torn_line", { session: key, path, bytesDropped: cut });
    const { records, badLines } = readTranscript(path);
    if (badLines.length > 0) log.warn("transcript.bad_lines", { session: key, path, lines: badLines });
    const t = new Transcript(path, key);
    if (records.length === 0) t.append({ type: "session", version: 1, key, ts: clock() });
    for (const r of records) t.#apply(r);
    return t;
  }

  append(record: TranscriptRecord): void {
    appendFileSync(this.path, `${JSON.stringify(record)}\n`);
    this.#apply(record);
  }

  /** A copy of the model's current view. */
  messages(): Message[] {
    return [...this.#view];
  }

  #apply(r: TranscriptRecord): void {
    switch (r.type) {
      case "message":
        this.#view.push(r.message);
        break;
      case "epoch":
        this.#view.length = 0;
        break;
      case "compaction":
        this.#view.splice(0, this.#view.length, ...r.messages);
        break;
      case "session":
      case "run":
        break;
      default:
        r satisfies never;
    }
  }
}

/** Truncates the file after its last newline when the last line is incomplete; returns bytes cut. */
function repairTornTail(path: string): number {
  let fd: number;
  try {
    fd = openSync(path, "r+");
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === "ENOENT") return 0;
    throw err;
  }
  try {
    const size = fstatSync(fd).size;
    if (size === 0) return 0;
    // Read backwards in chunks until a newline is found.
    const chunk = Buffer.alloc(64 * 1024);
    let end = size;
    while (end > 0) {
      const start = Math.max(0, end - chunk.length);
      const n = readSync(fd, chunk, 0, end - start, start);
      const nl = chunk.subarray(0, n).lastIndexOf(0x0a);
      if (nl !== -1) {
        const keep = start + nl + 1;
        if (keep < size) ftruncateSync(fd, keep);
        return size - keep;
      }
      end = start;
    }
    ftruncateSync(fd, 0);
    return size;
  } finally {
    closeSync(fd);
  }
}
