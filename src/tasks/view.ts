// How tasks look: the labelled result message, the list (`/tasks`, `hearth tasks`, task_status)
// and one task in detail (`hearth tasks ID`). Plain text, the same in every chat.
import type { TaskEnd, TaskEntry } from "./task-log.ts";

export type TaskState = "queued" | "running" | TaskEnd;

/** A task as the CLI, the commands and task_status show it (JSON over the control socket). */
export interface TaskView {
  id: string;
  label: string;
  state: TaskState;
  task: string;
  parent: string;
  /** Where its result goes: `telegram:42`, `cli`. */
  to: string;
  startedAt: number;
  elapsedMs: number;
  costUsd: number;
  /** The child's tool calls, oldest first (the newest 50). */
  progress: Array<{ line: string; at: number }>;
  /** The result as delivered, once it ended. */
  result?: string;
}

export function taskView(t: TaskEntry, state: TaskState, costUsd: number, now: number): TaskView {
  const s = t.spawned;
  return {
    id: s.id,
    label: s.label,
    state,
    task: s.task,
    parent: s.parent,
    to: s.target.channel === "cli" ? "cli" : `${s.target.channel}:${s.target.chatId}${s.target.threadId ? `:${s.target.threadId}` : ""}`,
    startedAt: s.at,
    elapsedMs: (t.result?.at ?? now) - s.at,
    costUsd,
    progress: t.progress,
    ...(t.result ? { result: t.result.text } : {}),
  };
}

const STATE_TEXT: Record<TaskState, string> = {
  queued: "waiting",
  running: "running",
  done: "done",
  failed: "failed",
  cancelled: "cancelled",
  "over-cost": "over cost cap",
  "over-time": "over time cap",
  "over-turns": "over turn cap",
  "over-budget": "refused by budget",
};

/** `1m 05s`, `42s`, `2h 03m`. */
export function elapsedText(ms: number): string {
  const s = Math.max(0, Math.round(ms / 1000));
  if (s < 60) return `${s}s`;
  if (s < 3600) return `${Math.floor(s / 60)}m ${String(s % 60).padStart(2, "0")}s`;
  return `${Math.floor(s / 3600)}h ${String(Math.floor((s % 3600) / 60)).padStart(2, "0")}m`;
}

export const costText = (usd: number): string => `$${usd.toFixed(4)}`;

/** The result message: what ended, how, how long it took and what it cost, then the child's answer. */
export function labelledResult(r: { id: string; label: string; end: TaskEnd; body: string; elapsedMs: number; costUsd: number; caps: { maxCostUsd: number; maxMinutes: number; maxTurns: number } }): string {
  const name = `Task ${r.id} "${r.label}"`;
  const facts = `${elapsedText(r.elapsedMs)}, ${costText(r.costUsd)}`;
  const body = r.body.trim();
  const sofar = body ? `\n\nWhat it had so far:\n${body}` : "";
  switch (r.end) {
    case "done":
      return `✅ ${name} is done (${facts}):\n\n${body || "(it gave no answer)"}`;
    case "failed":
      return `⚠️ ${name} failed (${facts}): ${body || "no reason was given"}`;
    case "cancelled":
      return `⏹ ${name} was cancelled (${facts}).`;
    case "over-cost":
      // Its calls are reserved against the cap (gateway/paid-calls.ts): it stops before a call
      // that could pass it, and goes over only when a call cost more than its worst case.
      return r.costUsd > r.caps.maxCostUsd
        ? `⏹ ${name} was stopped: it went over its cost cap of $${r.caps.maxCostUsd.toFixed(2)} (tasks.maxCostUsd) (${facts}).${sofar}`
        : `⏹ ${name} was stopped: its next step could have gone over its cost cap of $${r.caps.maxCostUsd.toFixed(2)} (tasks.maxCostUsd) (${facts}).${sofar}`;
    case "over-time":
      return `⏹ ${name} was stopped: it ran longer than its time cap of ${r.caps.maxMinutes} min (tasks.maxMinutes) (${facts}).${sofar}`;
    case "over-turns":
      return `⏹ ${name} was stopped: it reached its turn cap of ${r.caps.maxTurns} steps (agent.maxTurns) (${facts}).${sofar}`;
    case "over-budget":
      // The body is the budget's reason, not an answer.
      return `⏹ ${name} was stopped by the budget: ${body} (${facts}). To go on, raise the budget (/budget raise 5) and start the task again.`;
    default:
      return r.end satisfies never;
  }
}

/** One line per task: id, state, elapsed, cost, label. */
export function taskListText(views: TaskView[]): string {
  if (views.length === 0) return "No background tasks.";
  const rows = views.map((v) => [v.id, STATE_TEXT[v.state], elapsedText(v.elapsedMs), costText(v.costUsd), v.label]);
  const head = ["ID", "STATE", "ELAPSED", "COST", "LABEL"];
  const widths = head.map((h, i) => Math.max(h.length, ...rows.map((r) => r[i]!.length)));
  const line = (cells: string[]) =>
    cells
      .map((c, i) => (i === cells.length - 1 ? c : c.padEnd(widths[i]!)))
      .join("  ")
      .trimEnd();
  return [line(head), ...rows.map(line)].join("\n");
}

/**
 * The list as a chat's `/tasks` answer: a code block, which chats that render markdown show in a
 * fixed-width font (Telegram `<pre>`, Discord's code block), or its columns would not line up.
 * A label cannot close the block early.
 */
export function taskListBlock(views: TaskView[]): string {
  if (views.length === 0) return taskListText(views);
  return `\`\`\`\n${taskListText(views).replaceAll("```", "'''")}\n\`\`\``;
}

/** One task: its facts, the task text, its progress lines and its result. */
export function taskDetailText(v: TaskView, formatTime: (at: number) => string): string {
  const lines = [
    `Task ${v.id} "${v.label}": ${STATE_TEXT[v.state]}, ${elapsedText(v.elapsedMs)}, ${costText(v.costUsd)}`,
    `Started ${formatTime(v.startedAt)} by ${v.parent}; reports to ${v.to}`,
    "",
    "Task:",
    v.task,
    "",
    v.progress.length ? "Progress:" : "Progress: none yet",
    ...v.progress.map((p) => `  ${formatTime(p.at)}  ${p.line}`),
  ];
  if (v.result !== undefined) lines.push("", "Result:", v.result);
  return lines.join("\n");
}
