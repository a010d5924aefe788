// One append-only JSONL file per session. Each record is one line, written with a single
// append before the loop takes its next step, so a crash loses at most the line being written.
import { mkdirSync } from "node:fs";
import { dirname } from "node:path";
import { z } from "zod";
import type { Logger } from "../process/log.ts";
import { appendRecord, checkValue, cutTornTail, lastLineWhere, readJsonLines } from "../state/storage.ts";
import type { Calibration } from "./context-budget.ts";
import type { RunStatus } from "./events.ts";
import type { AssistantBlock, Message, Usage } from "./messages.ts";

export type TranscriptRecord =
  | { type: "session"; version: 1; key: string; ts: number }
  | { type: "message"; message: Message }
  /** A run ended (how, and what it cost); `context`: its last request's calibration of the size estimate. */
  | { type: "run"; status: RunStatus; turns: number; ts: number; context?: Calibration }
  /** The model's view starts fresh after this record (/new, /reset). */
  | { type: "epoch"; reason: string; ts: number }
  /** Compaction: `messages` replaces the model's view; the records before it stay on disk. */
  | { type: "compaction"; reason: string; messages: Message[]; summarized: boolean; tokensBefore: number; tokensAfter: number; ts: number }
  /**
   * Inbox entry `entry`'s turns so far leave the model's view, each with what followed it up to
   * the next user turn: a run a crash cut off (gateway/recovery.ts). `note`, when present, is
   * shown in their place (a message given up), so the model never sees a question still
   * waiting for an answer that another run would then answer.
   */
  | { type: "withdrawn"; entry: string; note?: string; ts: number };

const count = z.number().finite().nonnegative();
const usageSchema = z.object({ inputTokens: count, outputTokens: count, cacheReadTokens: count, cacheCreationTokens: count }) satisfies z.ZodType<Usage>;
const blockSchema = z.discriminatedUnion("type", [
  z.looseObject({ type: z.literal("text"), text: z.string() }),
  z.looseObject({ type: z.literal("tool_call"), id: z.string(), name: z.string(), input: z.unknown() }),
  z.looseObject({ type: z.literal("thinking"), thinking: z.string(), signature: z.string() }),
  z.looseObject({ type: z.literal("server"), raw: z.looseObject({ type: z.string() }) }),
]) as z.ZodType<AssistantBlock>;
const messageSchema = z.discriminatedUnion("role", [
  z.looseObject({ role: z.literal("user"), kind: z.enum(["message", "steer", "nudge", "system"]), text: z.string(), ts: z.number() }),
  z.looseObject({
    role: z.literal("assistant"),
    content: z.array(blockSchema),
    stop: z.enum(["end_turn", "tool_use", "max_tokens", "refusal", "pause_turn", "stop_sequence", "context_window", "aborted"]),
    model: z.string(),
    usage: usageSchema,
    ts: z.number(),
  }),
  z.looseObject({
    role: z.literal("tool_result"),
    toolCallId: z.string(),
    toolName: z.string(),
    content: z.string(),
    images: z.array(z.looseObject({ type: z.literal("image"), mediaType: z.string(), data: z.string() })).optional(),
    isError: z.boolean(),
    ts: z.number(),
  }),
]) as z.ZodType<Message>;

/** What a transcript line must look like to be used; `append` writes only records of this type. */
export const transcriptRecordSchema = z.discriminatedUnion("type", [
  z.looseObject({ type: z.literal("session"), version: z.literal(1), key: z.string(), ts: z.number() }),
  z.looseObject({ type: z.literal("message"), message: messageSchema }),
  z.looseObject({
    type: z.literal("run"),
    status: z.enum(["completed", "aborted", "max_turns", "doom_loop", "over_budget", "error"]),
    turns: z.number(),
    ts: z.number(),
    context: z.object({ tokens: count, bytes: count }).optional(),
  }),
  z.looseObject({ type: z.literal("epoch"), reason: z.string(), ts: z.number() }),
  z.looseObject({
    type: z.literal("compaction"),
    reason: z.string(),
    messages: z.array(messageSchema),
    summarized: z.boolean(),
    tokensBefore: z.number(),
    tokensAfter: z.number(),
    ts: z.number(),
  }),
  z.looseObject({ type: z.literal("withdrawn"), entry: z.string(), note: z.string().optional(), ts: z.number() }),
]) as z.ZodType<TranscriptRecord>;

export interface LoadedTranscript {
  records: TranscriptRecord[];
  /** Lines that could not be parsed (1-based line numbers); a torn last line is one of them. */
  badLines: number[];
}

/**
 * Reads a transcript. A missing file is an empty transcript; a line that is not JSON or not a
 * transcript record is skipped (and logged with the file and line when `log` is given).
 */
export function readTranscript(path: string, log?: Logger, from = 0): LoadedTranscript {
  const { values, badLines } = readJsonLines(path, transcriptRecordSchema, log, from);
  return { records: values, badLines };
}

const VIEW_STARTS = [Buffer.from('{"type":"compaction"'), Buffer.from('{"type":"epoch"')];

/**
 * Where the model's current view begins: the offset of the last valid compaction or epoch
 * record (everything before it is history the view never uses), or 0. Found by reading the
 * file backwards, so a long transcript with a recent compaction is not read from line one.
 */
export function viewStart(path: string): number {
  return lastLineWhere(path, (line) => {
    if (!VIEW_STARTS.some((p) => line.subarray(0, p.length).equals(p))) return false;
    try {
      return checkValue(JSON.parse(line.toString("utf8")), transcriptRecordSchema).ok;
    } catch {
      return false;
    }
  });
}

export class Transcript {
  readonly path: string;
  readonly key: string;
  /** The model's view: messages since the last epoch record, or the last compaction's view and what followed. */
  readonly #view: Message[] = [];
  #calibration: Calibration | null = null;

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
    const cut = cutTornTail(path);
    if (cut > 0) log.warn("transcript.torn_line", { session: key, path, bytesDropped: cut });
    const from = viewStart(path);
    const { records } = readTranscript(path, log.child({ session: key }), from);
    const t = new Transcript(path, key);
    if (from === 0 && records.length === 0) t.append({ type: "session", version: 1, key, ts: clock() });
    for (const r of records) t.#apply(r);
    return t;
  }

  /** Appends one record; throws (ENOSPC…) without leaving a partial line when the write fails. */
  append(record: TranscriptRecord): void {
    appendRecord(this.path, `${JSON.stringify(record)}\n`);
    this.#apply(record);
  }

  /** The size calibration of the session's last run that had one; null when none did. */
  lastCalibration(): Calibration | null {
    return this.#calibration;
  }

  /** A copy of the model's current view. */
  messages(): Message[] {
    return [...this.#view];
  }

  #withdraw(entry: string, note: string | undefined): void {
    const kept: Message[] = [];
    let dropping = false;
    let noted = note === undefined;
    for (const m of this.#view) {
      if (m.role === "user") dropping = m.entry === entry;
      if (!dropping) {
        kept.push(m);
      } else if (!noted && m.role === "user") {
        kept.push({ role: "user", kind: "system", text: note!, ts: m.ts });
        noted = true;
      }
    }
    this.#view.splice(0, this.#view.length, ...kept);
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
      case "run":
        if (r.context) this.#calibration = r.context;
        break;
      case "withdrawn":
        this.#withdraw(r.entry, r.note);
        break;
      case "session":
        break;
      default:
        r satisfies never;
    }
  }
}
