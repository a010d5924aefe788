// What a background task's run is told: its first turn, the turn that continues it after a
// restart, and what of the run's last text is not part of its result.
import type { TaskEntry } from "./task-log.ts";

/** The first turn of a task's run: the task, its context, and where its answer goes. */
export function taskText(t: TaskEntry): string {
  const s = t.spawned;
  const context = s.context ? `\n\nContext from the conversation that started it:\n${s.context}` : "";
  const to = s.scope !== "shared" ? "the owner's chat and to the conversation that started the task" : s.chat ? "the shared chat it was started for" : "the group chat that started the task";
  return `Background task ${s.id} ("${s.label}"). Nobody reads along and nobody answers questions while you work: do the task on your own, then give its result as your final answer. That answer is sent to ${to}.\n\nThe task:\n${s.task}${context}`;
}

/** The turn of a task's run after a restart cut it off: continue, do not repeat. */
export function resumeText(t: TaskEntry): string {
  return `Hearth restarted while background task ${t.spawned.id} ("${t.spawned.label}") was running. Continue it from where the work above stopped, without repeating finished steps, then give its result as your final answer.\n\nThe task:\n${t.spawned.task}`;
}

/** The lanes' "(Stopped.)" line is not part of a task's result: its label says why it stopped. */
export const stripStopNote = (text: string): string => text.replace(/\s*\((Stopped\.|Interrupted[^)]*)\)\s*$/, "").trim();
