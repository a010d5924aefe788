// Tasks: the background tasks running and waiting, then the recent ones with how they ended,
// what they cost and their result; a running or waiting one can be cancelled (the task service,
// as `/tasks cancel` and `hearth tasks cancel`).
import { costText, elapsedText, type TaskState, type TaskView } from "../../tasks/view.ts";
import { actionButton, ago, badge, esc, table } from "../layout.ts";
import { field, type Page } from "../pages.ts";

export const page: Page = {
  id: "tasks",
  path: "/tasks",
  title: "Tasks",
  order: 35,
  render(host) {
    const now = host.clock();
    const all = host.tasks.list();
    const live = all.filter((t) => t.state === "running" || t.state === "queued");
    const ended = all.filter((t) => t.state !== "running" && t.state !== "queued");
    const row = (t: TaskView, withCancel: boolean) => [
      `<strong>${esc(t.label)}</strong> <code class="muted">${esc(t.id)}</code><br><span class="muted clip" title="${esc(t.task)}">${esc(t.task)}</span>`,
      stateBadge(t.state),
      `${esc(elapsedText(t.elapsedMs))}<br><span class="muted">${esc(ago(t.startedAt, now))}</span>`,
      esc(costText(t.costUsd)),
      withCancel
        ? actionButton("Cancel", "tasks/cancel", { id: t.id }, { kind: "danger", confirm: `Cancel task ${t.id} ("${t.label}")?` })
        : t.result !== undefined
          ? `<details><summary>Result</summary><pre class="results">${esc(t.result)}</pre></details>`
          : "",
    ];
    return `
<section aria-labelledby="ru"><h2 id="ru">Running and waiting</h2>${table(["Task", "State", "Elapsed", "Cost", ""], live.map((t) => row(t, true)), "No task is running.", "Running and waiting")}</section>
<section aria-labelledby="re"><h2 id="re">Recent</h2>${table(["Task", "State", "Took", "Cost", ""], ended.map((t) => row(t, false)), "No task has ended yet.", "Recent")}
<p class="muted">Tasks are started by Hearth in a chat (spawn_task); each reports its result there.</p></section>`;
  },
  actions: {
    cancel(host, body) {
      const t = host.tasks.cancel(field(body, "id"));
      return { message: `Cancelling task ${t.id} ("${t.label}"); its chat will be told once it has stopped.` };
    },
  },
};

const STATE: Record<TaskState, [string, "ok" | "warn" | "bad" | "muted"]> = {
  queued: ["waiting", "muted"],
  running: ["running", "warn"],
  done: ["done", "ok"],
  failed: ["failed", "bad"],
  cancelled: ["cancelled", "muted"],
  "over-cost": ["over cost cap", "bad"],
  "over-time": ["over time cap", "bad"],
  "over-turns": ["over turn cap", "bad"],
  "over-budget": ["refused by budget", "bad"],
};
const stateBadge = (s: TaskState): string => badge(...STATE[s]);
