// The agent's task tools: spawn_task, task_status, cancel_task. The tool policy keeps them in the
// owner's main scope (MAIN_ONLY_TOOLS) and in the groups the owner opened to tasks
// (groups.tasks), where each call acts for that group alone: its tasks run in its shared scope,
// and it sees and cancels only its own. A task's own run reaches spawn_task only as deep as
// tasks.maxDepth allows (the service refuses deeper).
import { z } from "zod";
import { defineTool, type Tool } from "../agent/tool.ts";
import type { SpawnInput, SpawnOptions, TaskViewer } from "./requests.ts";
import { elapsedText, costText, taskListText, type TaskView } from "./view.ts";

/** What the tools need from the task service. Each method throws an Error whose message the model can act on. */
export interface TaskManager {
  spawn(input: SpawnInput, parent: string, opts: SpawnOptions): TaskView;
  /** Only what `viewer` may see: a group its own tasks, the owner all. */
  list(viewer: TaskViewer): TaskView[];
  get(id: string, viewer: TaskViewer): TaskView;
  cancel(id: string, viewer: TaskViewer): TaskView;
}

const result = (fn: () => string) => {
  try {
    return Promise.resolve({ content: fn() });
  } catch (err) {
    return Promise.resolve({ content: (err as Error).message, isError: true });
  }
};

export function createTaskTools(tasks: TaskManager): Tool[] {
  return [
    defineTool({
      name: "spawn_task",
      description:
        "Start a background task: a separate agent works on `task` on its own while this conversation goes on, and its result is sent to this chat (and given to you) once, when it ends. Use it for long work (research, many steps). It returns at once with the task's id: tell the owner the task started and name its id.",
      input: z.object({
        task: z.string().describe("What the background agent should do, complete: it sees nothing else of this conversation"),
        label: z.string().optional().describe("A short name for the task, shown with its result"),
        context: z.string().optional().describe("Facts from this conversation the task needs"),
        model: z.string().optional().describe("A model name for the task; default tasks.model or the main model"),
        tools: z.array(z.string()).optional().describe("Only these tools for the task, by name (e.g. [\"web_search\", \"web_fetch\"]); default: the tools you have"),
      }),
      readOnly: false,
      summarize: (input) => input.label ?? input.task.slice(0, 60),
      execute: (input, ctx) =>
        result(() => {
          const v = tasks.spawn(input, ctx.sessionKey, { scope: ctx.scope, ...(ctx.person !== undefined ? { person: ctx.person } : {}) });
          return `Started background task ${v.id} ("${v.label}")${v.state === "queued" ? "; it waits for a free slot (tasks.maxConcurrent)" : ""}. Its result will arrive in this chat as its own message when it ends; do not wait for it or check on it now.`;
        }),
    }),
    defineTool({
      name: "task_status",
      description: "Without an id: list the background tasks (running ones and recent ones). With an id: that task's state, time, cost, last progress line and result.",
      input: z.object({ id: z.string().optional() }),
      readOnly: true,
      execute: (input, ctx) =>
        result(() => {
          const viewer = { sessionKey: ctx.sessionKey, scope: ctx.scope };
          if (!input.id) return taskListText(tasks.list(viewer));
          const v = tasks.get(input.id, viewer);
          const last = v.progress.at(-1);
          return [
            `Task ${v.id} "${v.label}": ${v.state}, ${elapsedText(v.elapsedMs)}, ${costText(v.costUsd)}`,
            `Last progress: ${last ? last.line : "none"}`,
            ...(v.result !== undefined ? [`Result:\n${v.result}`] : []),
          ].join("\n");
        }),
    }),
    defineTool({
      name: "cancel_task",
      description: "Stop a background task by its id; its chat is told it was cancelled.",
      input: z.object({ id: z.string() }),
      readOnly: false,
      summarize: (input) => input.id,
      execute: (input, ctx) =>
        result(() => {
          const v = tasks.cancel(input.id, { sessionKey: ctx.sessionKey, scope: ctx.scope });
          return `Cancelling task ${v.id} ("${v.label}"); its chat will be told once it has stopped.`;
        }),
    }),
  ];
}
