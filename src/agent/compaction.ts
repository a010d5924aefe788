// Compaction (DESIGN §6): making a session's view of its conversation smaller without losing
// what matters. The pieces here are pure or take their I/O as arguments; context-budget.ts
// decides when to use them and records the result.
import type { Message, ToolResultMessage, UserMessage } from "./messages.ts";
import { textOf } from "./messages.ts";
import type { ModelClient } from "./providers/model.ts";
import type { ModelError } from "./model-errors.ts";
import { streamReserved, type ReserveCall } from "./paid-call.ts";
import { truncateMiddle } from "./truncate.ts";

/** Tool results past the most recent few are cut to this size by step (a). */
export const SHRUNK_TOOL_RESULT_CHARS = 2_000;
/** The most recent tool results step (a) leaves alone. */
const RECENT_TOOL_RESULTS = 3;

export const SUMMARY_PREFIX = "[Hearth] Summary of the earlier conversation (the full history is kept on disk):";

/** Step (a): shrinks every tool result but the most recent few. Returns a new view (or the same one). */
export function shrinkToolResults(view: Message[]): { view: Message[]; shrunk: number } {
  const resultIdx = view.flatMap((m, i) => (m.role === "tool_result" ? [i] : []));
  const old = new Set(resultIdx.slice(0, Math.max(0, resultIdx.length - RECENT_TOOL_RESULTS)));
  let shrunk = 0;
  const out = view.map((m, i) => {
    if (!old.has(i) || m.role !== "tool_result" || m.content.length <= SHRUNK_TOOL_RESULT_CHARS) return m;
    shrunk++;
    return { ...m, content: truncateMiddle(m.content, SHRUNK_TOOL_RESULT_CHARS) } satisfies ToolResultMessage;
  });
  return { view: shrunk > 0 ? out : view, shrunk };
}

/**
 * Where the verbatim tail starts: the latest user message such that what follows is at least
 * `keepTokens`, or the latest user message before that point. Cutting before a user message
 * never separates a tool call from its result (results precede the next user message).
 * Returns 0 when there is nothing older to summarise.
 */
export function chooseCut(view: Message[], keepTokens: number, tokensOf: (m: Message) => number): number {
  let kept = 0;
  let cut = view.length;
  for (let i = view.length - 1; i >= 0; i--) {
    kept += tokensOf(view[i]!);
    if (view[i]!.role === "user") cut = i;
    if (kept >= keepTokens && cut <= i) break;
  }
  // Keep at least the last exchange; summarising nothing helps nothing.
  return cut === view.length ? 0 : cut;
}

const SUMMARY_SYSTEM = `You write the running summary of a conversation between a personal assistant and its owner (or a group), so the assistant can continue it without the old messages.

Write compact markdown: the people and what they want, decisions and commitments, facts learned, open tasks and questions, files and commands that matter (paths, names, results), and the state of any work in progress. Keep exact values (names, numbers, dates, paths). Leave out small talk. No preamble.`;

/** The text the summariser reads: each message on its own lines, long tool output clipped. */
export function renderForSummary(messages: Message[], maxChars: number): string {
  const lines: string[] = [];
  for (const m of messages) {
    switch (m.role) {
      case "user":
        lines.push(m.kind === "message" || m.kind === "steer" ? `USER: ${m.text}` : `NOTE: ${m.text}`);
        break;
      case "assistant": {
        const t = textOf(m);
        if (t.trim()) lines.push(`ASSISTANT: ${t}`);
        for (const b of m.content) if (b.type === "tool_call") lines.push(`TOOL CALL ${b.name}: ${JSON.stringify(b.input).slice(0, 500)}`);
        break;
      }
      case "tool_result":
        lines.push(`TOOL RESULT ${m.toolName}${m.isError ? " (error)" : ""}: ${truncateMiddle(m.content, 600)}`);
        break;
      default:
        m satisfies never;
    }
  }
  const text = lines.join("\n\n");
  // Too long even for the summariser: keep the newest part, which matters most.
  return text.length <= maxChars ? text : `(the oldest part is omitted)\n\n${text.slice(text.length - maxChars)}`;
}

export type SummaryResult = { type: "ok"; summary: string } | { type: "error"; error: ModelError };

/** Step (c): asks the model for a summary of `older`. No tools; nothing streams to the user. */
export async function summarize(
  model: ModelClient,
  older: Message[],
  opts: { focus?: string | undefined; maxInputChars: number; maxTokens: number; signal: AbortSignal; clock: () => number; reserve?: ReserveCall | undefined },
): Promise<SummaryResult> {
  const focus = opts.focus ? `\n\nThe owner asked to focus on: ${opts.focus}` : "";
  const request: UserMessage = {
    role: "user",
    kind: "system",
    text: `Summarise this conversation so far.${focus}\n\n<conversation>\n${renderForSummary(older, opts.maxInputChars)}\n</conversation>`,
    ts: opts.clock(),
  };
  const result = await streamReserved(
    model,
    // Never sent twice: no cache entry to pay for.
    { system: [{ text: SUMMARY_SYSTEM }], tools: [], messages: [request], maxTokens: opts.maxTokens, cache: false },
    { signal: opts.signal, onEvent: () => {} },
    opts.reserve,
  );
  if (result.type === "error") return result;
  const summary = textOf(result.message).trim();
  return summary ? { type: "ok", summary } : { type: "error", error: { kind: "unknown", model: model.model, message: "The model returned an empty summary." } };
}

/** `outside`: the outside content the summarised turns held (outside-content.ts): the summary may repeat it, so it carries it on. */
export function summaryMessage(summary: string, ts: number, outside: string | null = null): UserMessage {
  return { role: "user", kind: "system", text: `${SUMMARY_PREFIX}\n\n${summary}`, ...(outside ? { outside: `a summary of earlier turns that held ${outside}` } : {}), ts };
}
