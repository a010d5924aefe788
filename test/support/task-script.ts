// The fake model's side of background tasks in e2e tests: what a parent and a child answer, and
// reading tasks.jsonl. A child's first request blocks in `exec` until the file
// `<workspace>/release-<label>` exists (a gate the test opens), then it answers "Findings about
// <label>."; the parent starts one task per label of "please research: a, b".
import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { text, toolCall, type RecordedRequest, type Scripted } from "./fake-model.ts";

export type TaskRecord = { type: string; id: string; label?: string; at: number; end?: string; text?: string; line?: string; costUsd?: number };

/** What a child does: its first request blocks in `exec` until `release-<label>` exists, then it answers. */
export function childScript(req: RecordedRequest, home: () => string): Scripted | null {
  const first = firstUserText(req);
  const m = /Background task ([0-9a-f]{6}) \("([^"]+)"\)|Hearth restarted while background task ([0-9a-f]{6}) \("([^"]+)"\)/.exec(first);
  if (!m) return null;
  const label = m[2] ?? m[4]!;
  const results = toolResults(req);
  if (label === "pricey" && results === 0) {
    // One call that costs $3 at Sonnet's prices: over the $1 cap; the tool call after it never runs to an answer.
    return toolCall("exec", { command: "echo spent" }, { usage: { input_tokens: 1_000_000, output_tokens: 10 } });
  }
  if (label === "narrow" && results === 0) return toolCall("exec", { command: "echo hi" }); // given memory_get only
  if (results === 0 && !lastUserText(req).includes("Hearth restarted")) {
    const gate = join(home(), "workspace", `release-${label}`);
    return toolCall("exec", { command: `while [ ! -e '${gate}' ]; do sleep 0.05; done; echo released` });
  }
  return text(`Findings about ${label}.`);
}

export function firstUserText(req: RecordedRequest): string {
  return textOf((req.body as { messages: Array<{ content: unknown }> }).messages[0]?.content);
}
export function lastUserText(req: RecordedRequest): string {
  return textOf((req.body as { messages: Array<{ content: unknown }> }).messages.at(-1)?.content);
}
/** The text of a message's content, tool results' text included. */
function textOf(content: unknown): string {
  if (typeof content === "string") return content;
  if (!Array.isArray(content)) return "";
  return content.map((b: { text?: string; content?: unknown }) => b.text ?? textOf(b.content)).join("\n");
}
const toolResults = (req: RecordedRequest): number => (JSON.stringify(req.body).match(/"type":"tool_result"/g) ?? []).length;

/** The parent: an owner message that names tasks starts them; a spawn result is answered "Started …". */
export function parentScript(req: RecordedRequest): Scripted {
  const last = lastUserText(req);
  const started = [...last.matchAll(/Started background task ([0-9a-f]{6}) \("([^"]+)"\)/g)];
  if (started.length) return text(started.map((s) => `Started task ${s[1]} (${s[2]}).`).join(" "));
  if (/Cancelling task/.test(last)) return text("Cancelled.");
  const spawn = /please research: (.+)$/m.exec(last);
  if (spawn) {
    const labels = spawn[1]!.split(",").map((s) => s.trim());
    return { type: "message", blocks: labels.map((label) => ({ tool: "spawn_task", input: { task: `Research ${label}.`, label, ...(label === "narrow" ? { tools: ["memory_get"] } : {}) } })) };
  }
  const cancel = /cancel task ([0-9a-f]{6})/.exec(last);
  if (cancel) return toolCall("cancel_task", { id: cancel[1] });
  const status = /status of task ([0-9a-f]{6})/.exec(last);
  if (status) return toolCall("task_status", { id: status[1] });
  if (/^list the tasks$/m.test(last)) return toolCall("task_status", {});
  return text(`Answer to: ${last.split("\n").at(-1)}`);
}

export const records = (home: string): TaskRecord[] => {
  const file = join(home, "tasks.jsonl");
  if (!existsSync(file)) return [];
  return readFileSync(file, "utf8")
    .trim()
    .split("\n")
    .filter(Boolean)
    .map((l) => JSON.parse(l) as TaskRecord);
};
export const spawnedId = (home: string, label: string): string | undefined => records(home).find((r) => r.type === "spawned" && r.label === label)?.id;
/** How the task views write a duration (checked here independently of src/tasks/view.ts). */
export function elapsed(ms: number): string {
  const s = Math.round(ms / 1000);
  return s < 60 ? `${s}s` : `${Math.floor(s / 60)}m ${String(s % 60).padStart(2, "0")}s`;
}
export const resultOf = (home: string, id: string): TaskRecord | undefined => records(home).find((r) => r.type === "result" && r.id === id);
