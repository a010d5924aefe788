// tasks.jsonl: what Hearth knows of its background tasks, appended. A task is `spawned` (fsynced
// before it is queued), gets `progress` lines (the child's tool names, not fsynced: losing the
// last one loses nothing), `started` when its run first starts (fsynced: its time cap counts
// from there, across restarts), one `result` (fsynced before it is delivered: the text delivered,
// with its label) and `noted` once the result is in the parent session's transcript. A task
// without a result after a restart was interrupted: its inbox entry (gateway) runs it again.
import { channelIdSchema } from "../channels/registry.ts";
import { z } from "zod";
import type { Logger } from "../process/log.ts";
import { appendRecord, readVersionedJsonLines, stampRecord, writeFileAtomic, type RecordVersions } from "../state/storage.ts";

export const taskEnds = ["done", "failed", "cancelled", "over-cost", "over-time", "over-turns", "over-budget"] as const;
export type TaskEnd = (typeof taskEnds)[number];

const target = z.object({ channel: channelIdSchema, chatId: z.string().min(1), threadId: z.string().optional() });

export const TaskRecordSchema = z.discriminatedUnion("type", [
  z.object({
    type: z.literal("spawned"),
    id: z.string().min(1),
    label: z.string(),
    task: z.string().min(1),
    context: z.string().optional(),
    /** The session that started it, which gets its result in its transcript. */
    parent: z.string().min(1),
    /** The chat its result is delivered to (the parent's chat), and where approvals would be asked. */
    target,
    model: z.string().optional(),
    /** Only these tools, by name; absent: the parent scope's. */
    tools: z.array(z.string()).optional(),
    depth: z.number().int().min(1),
    /** Who started it: the agent in `parent`, or a scheduled job (`cron job "NAME" (ID)`). */
    by: z.string().optional(),
    /** The outside content the answer (or job) that started it had read ("a web page"): the task runs tainted. */
    taintedBy: z.string().optional(),
    /**
     * Started in a group the owner opened to tasks: it runs in the shared scope with that group's
     * memory (its parent's chat folder), is seen and cancelled only from there, and spends from
     * the shared scopes' budget. Absent: the owner's main scope.
     */
    scope: z.literal("shared").optional(),
    /**
     * A shared task started for a chat other than its parent (a job of the owner's for a group):
     * that chat's session, whose folder is its memory and which sees and cancels it. Absent: `parent`.
     */
    chat: z.string().min(1).optional(),
    at: z.number(),
  }),
  z.object({ type: z.literal("progress"), id: z.string().min(1), line: z.string(), at: z.number() }),
  /** Its run started for the first time (a restart does not write it again). */
  z.object({ type: z.literal("started"), id: z.string().min(1), at: z.number() }),
  /** `taintedBy`: the outside content the task's view held at its end; its result carries it into the parent. */
  z.object({ type: z.literal("result"), id: z.string().min(1), end: z.enum(taskEnds), text: z.string(), costUsd: z.number(), taintedBy: z.string().optional(), at: z.number() }),
  z.object({ type: z.literal("noted"), id: z.string().min(1), at: z.number() }),
]);
export type TaskRecord = z.infer<typeof TaskRecordSchema>;
export type SpawnedRecord = Extract<TaskRecord, { type: "spawned" }>;
export type ResultRecord = Extract<TaskRecord, { type: "result" }>;

/** One task as the log tells it. */
export interface TaskEntry {
  spawned: SpawnedRecord;
  progress: Array<{ line: string; at: number }>;
  /** When its run first started: its time cap (tasks.maxMinutes) counts from here. */
  startedAt?: number;
  result?: ResultRecord;
  noted: boolean;
}

/** Progress lines kept per task (the newest). */
const PROGRESS_KEPT = 50;
/** Ended tasks kept when the file is compacted at open (the newest); unfinished ones are always kept. */
export const ENDED_KEPT = 100;

const isRecord = (v: unknown): v is TaskRecord => TaskRecordSchema.safeParse(v).success;

/**
 * tasks.jsonl's record versions (state/versions.ts RecordVersions): a line without `"v"` is
 * version 1, the records above. A change of a record's shape adds a step here.
 */
export const TASK_LOG_VERSIONS: RecordVersions = { current: 1, steps: [] };

const lineOf = (r: TaskRecord): string => `${JSON.stringify(stampRecord(r, TASK_LOG_VERSIONS))}\n`;

export class TaskLog {
  readonly #path: string;
  readonly tasks = new Map<string, TaskEntry>();

  private constructor(path: string) {
    this.#path = path;
  }

  /**
   * Reads tasks.jsonl; a torn or wrong-shaped line is skipped and logged (storage.ts). A record a
   * newer Hearth wrote throws NewerStateError before anything is rewritten (a start then exits 2):
   * the compaction below would otherwise drop it for good.
   */
  static open(path: string, log: Logger): TaskLog {
    const tl = new TaskLog(path);
    const { values } = readVersionedJsonLines(path, isRecord, TASK_LOG_VERSIONS, log);
    for (const r of values) tl.#apply(r);
    // A daemon that runs for months must not grow the file forever: at open it keeps what is
    // unfinished or not yet noted, and the newest ended tasks.
    const ended = [...tl.tasks.values()].filter((t) => t.result && t.noted);
    if (ended.length > ENDED_KEPT) {
      for (const t of ended.slice(0, ended.length - ENDED_KEPT)) tl.tasks.delete(t.spawned.id);
      writeFileAtomic(path, [...tl.tasks.values()].flatMap(recordsOf).map(lineOf).join(""));
    }
    return tl;
  }

  /** Appends `r` (fsynced unless it is a progress line) and applies it. Throws when it cannot be written. */
  append(r: TaskRecord): void {
    appendRecord(this.#path, lineOf(r), { durable: r.type !== "progress" });
    this.#apply(r);
  }

  #apply(r: TaskRecord): void {
    if (r.type === "spawned") {
      this.tasks.set(r.id, { spawned: r, progress: [], noted: false });
      return;
    }
    const t = this.tasks.get(r.id);
    if (!t) return;
    switch (r.type) {
      case "progress":
        t.progress.push({ line: r.line, at: r.at });
        if (t.progress.length > PROGRESS_KEPT) t.progress.splice(0, t.progress.length - PROGRESS_KEPT);
        break;
      case "started":
        t.startedAt ??= r.at;
        break;
      case "result":
        t.result ??= r;
        break;
      case "noted":
        t.noted = true;
        break;
      default:
        r satisfies never;
    }
  }
}

/** The records that say what `t` is now (for a compacted file). */
function recordsOf(t: TaskEntry): TaskRecord[] {
  const id = t.spawned.id;
  return [
    t.spawned,
    ...(t.startedAt !== undefined ? [{ type: "started" as const, id, at: t.startedAt }] : []),
    ...t.progress.map((p): TaskRecord => ({ type: "progress", id, line: p.line, at: p.at })),
    ...(t.result ? [t.result] : []),
    ...(t.noted ? [{ type: "noted" as const, id, at: t.result?.at ?? t.spawned.at }] : []),
  ];
}

