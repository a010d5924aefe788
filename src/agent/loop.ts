// The agent loop (DESIGN §6): model → tools → model … until the model answers, the run is
// stopped, or a limit ends it. All I/O is passed in; the loop opens no socket and no file.
import type { Logger } from "../process/log.ts";
import { isDiskFull } from "../state/storage.ts";
import type { ContextBudget } from "./context-budget.ts";
import type { AgentEventSink, RunStatus } from "./events.ts";
import {
  addUsage,
  emptyUsage,
  textOf,
  toolCallsOf,
  type Message,
  type Scope,
  type Usage,
  type UserMessage,
} from "./messages.ts";
import type { ModelClient, ModelEvent } from "./providers/model.ts";
import { modelErrorNotice, type ModelError } from "./model-errors.ts";
import { streamReserved, type ReserveCall } from "./paid-call.ts";
import type { CacheTtl, ModelRequest, ServerToolDefinition, SystemBlock } from "./providers/model.ts";
import type { SteeringSource } from "./steering.ts";
import type { OutgoingFile, SentFile, ToolGate, ToolSet } from "./tool.ts";
import { DoomLoopGuard, runToolCalls } from "./tool-runner.ts";
import { serverToolSummary } from "./tools/web/progress.ts";

export { MAX_TURNS_CAP } from "./turn-limit.ts";
import { MAX_TURNS_CAP } from "./turn-limit.ts";
const MAX_NUDGES = 2;

export interface LoopDeps {
  model: ModelClient;
  tools: ToolSet;
  /** Milliseconds since the epoch; used for message timestamps. */
  clock: () => number;
  log: Logger;
}

export interface RunSpec {
  sessionKey: string;
  scope: Scope;
  /** See ToolContext.person. */
  person?: string | undefined;
  /** See ToolContext.chatKey. */
  chatKey?: string | undefined;
  workspace: string;
  system: SystemBlock[];
  /** The model's view of the conversation before this run. Not modified. */
  history: Message[];
  /** The message(s) that start the run. */
  input: UserMessage[];
  maxTurns: number;
  maxTokens: number;
  signal: AbortSignal;
  steering: SteeringSource;
  emit: AgentEventSink;
  /**
   * Persists one new message (a transcript append). Called once per message, in order,
   * before the loop takes its next step. A throw ends the run with status "error".
   */
  record: (m: Message) => void;
  /** Keeps the request inside the model's window (compaction); absent means no budget checks. */
  budget?: ContextBudget;
  /** TTL of the cached system prefix; absent: 5 minutes. */
  cacheTtl?: CacheTtl;
  /** Provider-side tools for this run's scope (web search / fetch); absent: none. */
  serverTools?: ServerToolDefinition[];
  /** User turns whose images and documents the model still sees (config media.keepTurns). */
  mediaKeepTurns?: number;
  /** Sends a file to the chat the run answers (send_file); absent: no chat. */
  sendFile?: ((file: OutgoingFile, callId: string) => Promise<SentFile>) | undefined;
  /** The owner's approvals for this run's tool calls (ToolGate); absent: every call runs. */
  gate?: ToolGate | undefined;
  /** Asks the person the run answers a question in their chat (ToolContext.ask); absent: no chat. */
  ask?: ((text: string, opts: { timeoutMs: number; signal: AbortSignal }) => Promise<string | null>) | undefined;
  /**
   * The budget, asked before each model call with the request about to go out (paid-call.ts). A
   * refusal ends the run, status "over_budget", with "I stopped here: <reason>." as its last
   * notice; what the run did so far stays in the transcript. Absent: every call is made.
   */
  reserve?: ReserveCall | undefined;
}

export interface RunResult {
  status: RunStatus;
  /** The reply as the user saw it stream: the model's text of every turn, plus any notice. */
  text: string;
  usage: Usage;
  turns: number;
  /** The messages this run added, in order (the same ones passed to `record`). */
  added: Message[];
  error?: ModelError;
}

export async function runAgentLoop(deps: LoopDeps, spec: RunSpec): Promise<RunResult> {
  let messages = [...spec.history];
  const added: Message[] = [];
  const reply = new ReplyText(spec.emit);
  const guard = new DoomLoopGuard();
  const toolSpecs = deps.tools.specsFor(spec.scope);
  const maxTurns = Math.min(Math.max(1, spec.maxTurns), MAX_TURNS_CAP);
  let usage = emptyUsage();
  let turns = 0;
  let nudges = 0;
  let overflowRecovered = false;
  /** A group or a paired person: notices name no configuration key, file or address. */
  const shared = spec.scope === "shared";

  const append = (m: Message) => {
    spec.record(m);
    messages.push(m);
    added.push(m);
  };
  const takeSteering = (): boolean => {
    const steer = spec.steering.take();
    for (const m of steer) append(m);
    if (steer.length > 0) spec.emit({ type: "steered", count: steer.length });
    return steer.length > 0;
  };
  const finish = (status: RunStatus, error?: ModelError): RunResult => {
    const text = reply.text();
    spec.emit({ type: "run_end", status, text, usage, turns });
    return { status, text, usage, turns, added, ...(error ? { error } : {}) };
  };

  spec.emit({ type: "run_start", sessionKey: spec.sessionKey });
  try {
    for (const m of spec.input) append(m);
    for (;;) {
      if (spec.signal.aborted) return finish("aborted");
      if (turns >= maxTurns) {
        reply.notice(`I stopped after ${turns} steps, ${shared ? "my limit for one answer" : "the limit set by agent.maxTurns"}. Say "continue" if I should go on.`);
        return finish("max_turns");
      }
      turns++;
      spec.emit({ type: "turn_start", turn: turns });
      let request: ModelRequest = {
        system: spec.system,
        tools: toolSpecs,
        messages,
        maxTokens: spec.maxTokens,
        ...(spec.cacheTtl ? { cacheTtl: spec.cacheTtl } : {}),
        ...(spec.serverTools?.length ? { serverTools: spec.serverTools } : {}),
        ...(spec.mediaKeepTurns ? { mediaKeepTurns: spec.mediaKeepTurns } : {}),
      };
      if (spec.budget) {
        const prepared = await spec.budget.prepare(request, spec.signal);
        if (prepared.type === "too_large") {
          reply.notice(prepared.message);
          return finish("error");
        }
        if (prepared.messages !== messages) {
          messages = [...prepared.messages];
          request = { ...request, messages };
        }
      }
      reply.startTurn();
      // The budget may send it asking for a shorter answer than model.maxTokens (paid-call.ts).
      let sentMaxTokens = request.maxTokens;
      const result = await streamReserved(deps.model, request, { signal: spec.signal, onEvent: (e) => forwardModelEvent(e, reply, spec.emit) }, spec.reserve, (sent) => (sentMaxTokens = sent.maxTokens));

      const overflowed = result.type === "error" ? result.error.kind === "context_overflow" : result.message.stop === "context_window";
      if (overflowed && spec.budget && !overflowRecovered && !spec.signal.aborted) {
        // Once per run: compact and try the same step again.
        overflowRecovered = true;
        const view = await spec.budget.recover(request, spec.signal);
        if (view) {
          messages = [...view];
          turns--;
          reply.turnReset("");
          continue;
        }
      }
      if (result.type === "error") {
        if (result.partial.length > 0) {
          append({ role: "assistant", content: result.partial, stop: "aborted", model: result.error.model, usage: emptyUsage(), ts: deps.clock() });
        }
        if (result.error.kind === "aborted") return finish("aborted");
        if (result.error.kind === "budget") {
          reply.notice(`I stopped here: ${result.error.message}.`);
          return finish("over_budget", result.error);
        }
        if (result.error.kind === "context_overflow") {
          reply.notice("This conversation no longer fits the model's context window, even after compacting. Start a fresh one with /new; the history stays on disk.");
          return finish("error", result.error);
        }
        if (shared) deps.log.warn("run.model_failed", { sessionKey: spec.sessionKey, kind: result.error.kind, detail: result.error.message });
        reply.notice(modelErrorNotice(result.error, spec.scope));
        return finish("error", result.error);
      }

      const message = result.message;
      spec.budget?.observe(request, message.usage);
      append(message);
      // A provider's web search or fetch brought outside content into the run.
      for (const b of message.content) if (b.type === "server") spec.gate?.observe("server:web");
      usage = addUsage(usage, message.usage);
      reply.endTurn(textOf(message));
      spec.emit({ type: "turn_end", turn: turns, model: message.model, usage: message.usage });

      const calls = toolCallsOf(message);
      if (calls.length > 0) {
        const outcome = await runToolCalls(
          calls,
          { ...spec, tools: deps.tools, log: deps.log, clock: deps.clock },
          guard,
        );
        for (const r of outcome.results) append(r);
        if (outcome.doomLoop) {
          reply.notice(`I stopped because I kept repeating the same step (${outcome.doomLoop} with the same input).`);
          return finish("doom_loop");
        }
        if (spec.signal.aborted) return finish("aborted");
        takeSteering();
        continue;
      }

      // A long server-tool turn (web search) was paused by the provider: sending the
      // conversation back as it is lets the model continue it. No user message is added.
      if (message.stop === "pause_turn") continue;
      // The model wants to end. A message that arrived meanwhile gets one more call instead.
      if (takeSteering()) continue;
      switch (message.stop) {
        case "context_window":
          reply.notice("This conversation no longer fits the model's context window, even after compacting. Start a fresh one with /new; the history stays on disk.");
          return finish("error");
        case "max_tokens":
          reply.notice(shared ? "(The answer was cut off at the length limit.)" : sentMaxTokens < spec.maxTokens ? "(The answer was cut off at the length the budget left room for.)" : "(The answer was cut off at the length limit, model.maxTokens.)");
          return finish("completed");
        default:
          break;
      }
      if (nudges < MAX_NUDGES && toolSpecs.length > 0 && announcesAction(textOf(message))) {
        nudges++;
        append({
          role: "user",
          kind: "nudge",
          text: "[Hearth] You announced an action but called no tool. If you meant to act, call the tool now; otherwise give your final answer.",
          ts: deps.clock(),
        });
        continue;
      }
      if (reply.text().trim() === "") {
        // Sending nothing would leave the user waiting for an answer that never comes.
        deps.log.warn("run.empty_answer", { sessionKey: spec.sessionKey, model: message.model, turns });
        if (reply.text() !== "") reply.turnReset(""); // only whitespace: not worth keeping
        reply.notice("The model returned an empty answer. Please try again or rephrase your message.");
        return finish("error");
      }
      return finish("completed");
    }
  } catch (err) {
    deps.log.error("run.failed", { sessionKey: spec.sessionKey, error: err });
    // A full disk is not this run's failure: the lane keeps the message for later (lanes.ts).
    if (isDiskFull(err)) throw err;
    // The error may name files inside Hearth's home: only the owner sees it.
    reply.notice(shared ? "Something went wrong inside Hearth." : `Something went wrong inside Hearth (${err instanceof Error ? err.message : String(err)}).`);
    return finish("error");
  }
}

function forwardModelEvent(e: ModelEvent, reply: ReplyText, emit: AgentEventSink): void {
  switch (e.type) {
    case "text_delta":
      reply.turnDelta(e.text);
      break;
    case "text_reset":
      reply.turnReset(e.text);
      break;
    case "retry":
      emit({ type: "model_retry", attempt: e.attempt, delayMs: e.delayMs, error: e.error });
      break;
    case "fallback":
      emit({ type: "model_fallback", from: e.from, to: e.to });
      break;
    case "server_tool_start":
      emit({ type: "tool_start", id: e.id, name: e.name, summary: serverToolSummary(e.name, e.input) });
      break;
    case "server_tool_end":
      emit({ type: "tool_end", id: e.id, name: e.name, ok: e.ok });
      break;
    default:
      e satisfies never;
  }
}

/**
 * The reply as one growing text: every turn's text, separated by a blank line, then notices.
 * It turns the model's per-call deltas into deltas of the whole reply, so that what streamed
 * always equals the final text.
 */
class ReplyText {
  #before = "";
  #turn = "";
  readonly #emit: AgentEventSink;

  constructor(emit: AgentEventSink) {
    this.#emit = emit;
  }

  text(): string {
    return this.#before && this.#turn ? `${this.#before}\n\n${this.#turn}` : this.#before + this.#turn;
  }

  startTurn(): void {
    this.#before = this.text();
    this.#turn = "";
  }

  turnDelta(delta: string): void {
    const old = this.text();
    this.#turn += delta;
    this.#emit({ type: "text_delta", text: this.text().slice(old.length) });
  }

  turnReset(text: string): void {
    this.#turn = text;
    this.#emit({ type: "text_reset", text: this.text() });
  }

  endTurn(final: string): void {
    if (final !== this.#turn) this.turnReset(final);
  }

  notice(text: string): void {
    this.startTurn();
    const old = this.text();
    this.#turn += text;
    this.#emit({ type: "text_delta", text: this.text().slice(old.length), notice: true });
  }
}

/**
 * True when an answer announces an action it did not take ("Let me check…", ending with a
 * colon). Kept narrow on purpose: a false positive costs an extra model call.
 */
export function announcesAction(text: string): boolean {
  const t = text.trim();
  if (!t) return false;
  if (/[:：]$/.test(t)) return true;
  const last = t.split(/(?<=[.!?…])\s+|\n+/).filter(Boolean).at(-1) ?? "";
  if (last.endsWith("?")) return false;
  return /^(let me|now let me|i'll now|i will now|now i'll|now i will|i'm going to|i am going to|next,? i'll)\b/i.test(last.trim());
}
