// Runs the tool calls of one assistant message: permission, validation, doom-loop guard,
// execution, truncation. Consecutive read-only calls run together; the others one by one.
// Every call gets exactly one result, recorded in call order.
import { z } from "zod";
import { redact, type Logger } from "../process/log.ts";
import type { AgentEventSink } from "./events.ts";
import type { Scope, ToolCallBlock, ToolResultMessage } from "./messages.ts";
import type { SteeringSource } from "./steering.ts";
import type { OutgoingFile, SentFile, Tool, ToolContext, ToolGate, ToolOutput, ToolSet } from "./tool.ts";
import { truncateMiddle } from "./truncate.ts";

export const SKIPPED_FOR_STEER = "Skipped: the user sent a new message before this tool ran. Read it, then decide whether this call is still wanted.";
export const SKIPPED_FOR_ABORT = "Skipped: the run was stopped before this tool ran.";

export interface ToolRunEnv {
  tools: ToolSet;
  scope: Scope;
  workspace: string;
  sessionKey: string;
  /** See ToolContext.person. */
  person?: string | undefined;
  /** See ToolContext.chatKey. */
  chatKey?: string | undefined;
  signal: AbortSignal;
  steering: SteeringSource;
  emit: AgentEventSink;
  log: Logger;
  clock: () => number;
  /** Sends a file to the run's chat, keyed by the tool call (see ToolContext.sendFile). */
  sendFile?: ((file: OutgoingFile, callId: string) => Promise<SentFile>) | undefined;
  /** Asked before each call acts, told after each result (the owner's approvals); absent: every call runs. */
  gate?: ToolGate | undefined;
  /** Asks the run's chat a question (see ToolContext.ask). */
  ask?: ((text: string, opts: { timeoutMs: number; signal: AbortSignal }) => Promise<string | null>) | undefined;
}

export interface ToolBatchOutcome {
  results: ToolResultMessage[];
  /** Set when the doom-loop guard ended the run; names the repeated tool. */
  doomLoop?: string;
}

/** Watches for the same call repeated in a row: the third gets a warning, the fourth stops the run. */
export class DoomLoopGuard {
  #last = "";
  #count = 0;

  check(call: ToolCallBlock): "ok" | "warn" | "stop" {
    const signature = `${call.name}\u0000${stableJson(call.input)}`;
    this.#count = signature === this.#last ? this.#count + 1 : 1;
    this.#last = signature;
    return this.#count >= 4 ? "stop" : this.#count === 3 ? "warn" : "ok";
  }
}

type Prepared =
  | { type: "run"; call: ToolCallBlock; tool: Tool; input: unknown }
  | { type: "done"; call: ToolCallBlock; output: ToolOutput; doomLoop?: boolean };

export async function runToolCalls(calls: ToolCallBlock[], env: ToolRunEnv, guard: DoomLoopGuard): Promise<ToolBatchOutcome> {
  const results: ToolResultMessage[] = [];
  let doomLoop: string | undefined;
  const groups = groupCalls(calls, env.tools);
  for (const [gi, group] of groups.entries()) {
    const skip = env.signal.aborted ? SKIPPED_FOR_ABORT : env.steering.pending() ? SKIPPED_FOR_STEER : null;
    if (skip || doomLoop) {
      const reason = skip ?? SKIPPED_FOR_ABORT;
      for (const call of groups.slice(gi).flat()) results.push(resultMessage(call, { content: reason, isError: true }, env.clock));
      break;
    }
    const prepared = group.map((call) => prepareToolCall(call, env, guard));
    const outputs = await Promise.all(prepared.map((p) => executeToolCall(p, env)));
    for (const [i, p] of prepared.entries()) {
      const { output, outside } = outputs[i]!;
      results.push(resultMessage(p.call, output, env.clock, outside));
      if (p.type === "done" && p.doomLoop) doomLoop = p.call.name;
    }
  }
  return doomLoop ? { results, doomLoop } : { results };
}

/** Consecutive read-only calls form one group; any other call is a group of its own. */
function groupCalls(calls: ToolCallBlock[], tools: ToolSet): ToolCallBlock[][] {
  const groups: ToolCallBlock[][] = [];
  let readOnly: ToolCallBlock[] = [];
  for (const call of calls) {
    if (tools.get(call.name)?.readOnly) {
      readOnly.push(call);
      continue;
    }
    if (readOnly.length) groups.push(readOnly);
    readOnly = [];
    groups.push([call]);
  }
  if (readOnly.length) groups.push(readOnly);
  return groups;
}

function prepareToolCall(call: ToolCallBlock, env: ToolRunEnv, guard: DoomLoopGuard): Prepared {
  const verdict = guard.check(call);
  if (verdict === "stop") {
    return {
      type: "done",
      call,
      doomLoop: true,
      output: { isError: true, content: `Stopped: ${call.name} was called with the same input four times in a row.` },
    };
  }
  const tool = env.tools.get(call.name);
  if (!tool) {
    const available = env.tools.forScope(env.scope).map((t) => t.name).join(", ") || "none";
    return { type: "done", call, output: { isError: true, content: `Unknown tool "${call.name}". Available tools: ${available}.` } };
  }
  const refusal = env.tools.permission(call.name, env.scope);
  if (refusal) return { type: "done", call, output: { isError: true, content: `Refused: ${refusal}` } };
  const parsed = tool.input.safeParse(call.input);
  if (!parsed.success) {
    return { type: "done", call, output: { isError: true, content: `Invalid input for ${call.name}:\n${z.prettifyError(parsed.error)}` } };
  }
  if (verdict === "warn") {
    return {
      type: "done",
      call,
      output: {
        isError: true,
        content: `Not run: this is the third identical ${call.name} call in a row. Repeating it will not change the result — try something different, or answer with what you have.`,
      },
    };
  }
  return { type: "run", call, tool, input: parsed.data };
}

/** A call's output, and the first outside content it brought in (ToolContext.tookIn), if any. */
async function executeToolCall(p: Prepared, env: ToolRunEnv): Promise<{ output: ToolOutput; outside: string | null }> {
  const { call } = p;
  const summary = p.type === "run" && p.tool.summarize ? p.tool.summarize(p.input) : summarizeInput(call.input);
  env.emit({ type: "tool_start", id: call.id, name: call.name, summary: redact(summary) });
  let output: ToolOutput;
  let outside: string | null = null;
  if (p.type === "done") {
    output = p.output;
  } else {
    const tookIn = (what: string) => {
      outside ??= what;
      env.gate?.observeOutside(what);
    };
    const ctx = toolContext(call, env, tookIn);
    // What the tool refuses by itself is never put to the owner. While the owner is asked, the
    // call's progress line already shows what waits.
    const refusal = precheck(p.tool, p.input, ctx) ?? (env.gate ? await env.gate.admit({ id: call.id, name: call.name, input: p.input, ...(p.tool.mcp ? { mcp: p.tool.mcp } : {}) }, { workspace: env.workspace, signal: env.signal, tookIn }) : null);
    output = refusal !== null ? { isError: true, content: refusal } : await executeTool(p.tool, p.input, call, ctx, env);
    if (refusal === null) env.gate?.observe(call.name);
  }
  env.emit({ type: "tool_end", id: call.id, name: call.name, ok: !output.isError });
  return { output, outside };
}

function toolContext(call: ToolCallBlock, env: ToolRunEnv, tookIn: (what: string) => void): ToolContext {
  return {
    signal: env.signal,
    workspace: env.workspace,
    scope: env.scope,
    sessionKey: env.sessionKey,
    ...(env.person !== undefined ? { person: env.person } : {}),
    ...(env.chatKey !== undefined ? { chatKey: env.chatKey } : {}),
    log: env.log,
    ...(env.sendFile ? { sendFile: (f: OutgoingFile) => env.sendFile!(f, call.id) } : {}),
    ...(env.ask ? { ask: env.ask } : {}),
    ...(env.gate?.permitConnection ? { permitConnection: env.gate.permitConnection } : {}),
    ...(env.gate ? { tookIn, taintedBy: () => env.gate!.taint() } : {}),
  };
}

function precheck(tool: Tool, input: unknown, ctx: ToolContext): string | null {
  try {
    return tool.precheck?.(input, ctx) ?? null;
  } catch (err) {
    // The tool's own run reports the same trouble; the check only spares the owner a question.
    ctx.log.warn("tool.precheck_threw", { tool: tool.name, error: err });
    return null;
  }
}

async function executeTool(tool: Tool, input: unknown, call: ToolCallBlock, ctx: ToolContext, env: ToolRunEnv): Promise<ToolOutput> {
  try {
    return await tool.execute(input, ctx);
  } catch (err) {
    env.log.warn("tool.threw", { tool: call.name, error: err });
    return { isError: true, content: `${call.name} failed: ${err instanceof Error ? err.message : String(err)}` };
  }
}

function resultMessage(call: ToolCallBlock, output: ToolOutput, clock: () => number, outside: string | null = null): ToolResultMessage {
  return {
    role: "tool_result",
    toolCallId: call.id,
    toolName: call.name,
    // The one way into the transcript and the next model request: a known secret a tool read
    // (a config file, an environment dump) is replaced before it is stored or sent.
    content: truncateMiddle(redact(output.content)),
    ...(output.images?.length ? { images: output.images } : {}),
    isError: output.isError === true,
    ...(outside ? { outside } : {}),
    ts: clock(),
  };
}

function summarizeInput(input: unknown): string {
  const text = JSON.stringify(input) ?? "";
  return text.length > 80 ? `${text.slice(0, 77)}…` : text;
}

/** JSON with object keys sorted, so equal inputs give equal strings. */
export function stableJson(value: unknown): string {
  return JSON.stringify(value, (_key, v: unknown) =>
    v && typeof v === "object" && !Array.isArray(v)
      ? Object.fromEntries(Object.entries(v as Record<string, unknown>).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)))
      : v,
  );
}
