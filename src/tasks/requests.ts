// What callers ask of the task service and how they name a task: a task's session key and inbox
// ids, the spawn request, who may see a task, and the error a caller can fix.
import type { Scope } from "../agent/messages.ts";
import type { DeliveryTarget } from "../channels/channel.ts";
import type { TaskEntry } from "./task-log.ts";

export const TASK_PREFIX = "task:";
export const isTaskSession = (key: string): boolean => key.startsWith(TASK_PREFIX);
export const taskIdOf = (key: string): string => key.slice(TASK_PREFIX.length);

/** A request the caller can fix (the model reads the message as spawn_task's or cancel_task's result). */
export class TaskInputError extends Error {
  override name = "TaskInputError";
}

export interface SpawnInput {
  task: string;
  label?: string | undefined;
  context?: string | undefined;
  model?: string | undefined;
  /** Only these tools, by name. */
  tools?: string[] | undefined;
}

/** Who starts a task besides its parent session; every field optional. */
export interface SpawnOptions {
  /** The parent's scope: "shared" for a group the owner opened to tasks. Absent: main. */
  scope?: Scope | undefined;
  /** In a group, the member whose message the parent's run answers (rate limits). */
  person?: string | undefined;
  /** Who started it, when not the agent of `parent` (a scheduled job). */
  by?: string | undefined;
  /** Where its result goes, when not `parent`'s chat. */
  to?: DeliveryTarget | undefined;
  /**
   * Outside content its starter had read beyond what `parent`'s view holds (a job set up by a
   * tainted answer); either makes the task tainted.
   */
  outside?: string | undefined;
}

/**
 * Who asks to see or cancel tasks: the owner's main scope sees all of them; a group sees only
 * the tasks started in it (session `sessionKey`), never the owner's or another group's.
 */
export interface TaskViewer {
  sessionKey: string;
  scope: Scope;
}

/** The inbox id of a task's `n`th entry: the first is `<channel>:task-<id>`, later ones `…-<id>.<n>`. */
export function entryIdOf(t: TaskEntry, n: number): string {
  return `${t.spawned.target.channel}:task-${n === 0 ? t.spawned.id : `${t.spawned.id}.${n}`}`;
}

/** The owner's main scope sees every task; a shared viewer only the tasks started in its own conversation. */
export function visibleTo(t: TaskEntry, viewer: TaskViewer | undefined): boolean {
  if (!viewer || viewer.scope === "main") return true;
  return t.spawned.scope === "shared" && (t.spawned.chat ?? t.spawned.parent) === viewer.sessionKey;
}
