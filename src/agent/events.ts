// Events a run streams to whoever renders it (a channel's ReplySink, the CLI, a test).
import type { Usage } from "./messages.ts";
import type { ModelError } from "./model-errors.ts";

/**
 * How a run ended. Only `completed` means the model finished its answer on its own;
 * `over_budget`: its next model call did not fit the budget (agent/paid-call.ts), what it did is kept.
 */
export type RunStatus = "completed" | "aborted" | "max_turns" | "doom_loop" | "over_budget" | "error";

export type AgentEvent =
  | { type: "run_start"; sessionKey: string }
  | { type: "turn_start"; turn: number }
  /**
   * Reply text as it streams. Concatenated, the deltas (after the last reset) equal the reply.
   * `notice`: Hearth's own line about the run (a model error, a limit), not the model's words.
   */
  | { type: "text_delta"; text: string; notice?: true }
  /** The reply text shown so far is replaced by `text` (a retried stream said something else). */
  | { type: "text_reset"; text: string }
  | { type: "tool_start"; id: string; name: string; summary: string }
  | { type: "tool_end"; id: string; name: string; ok: boolean }
  | { type: "model_retry"; attempt: number; delayMs: number; error: ModelError }
  | { type: "model_fallback"; from: string; to: string }
  /** Messages that arrived during the run joined it. */
  | { type: "steered"; count: number }
  | { type: "turn_end"; turn: number; model: string; usage: Usage }
  | { type: "run_end"; status: RunStatus; text: string; usage: Usage; turns: number };

export type AgentEventSink = (e: AgentEvent) => void;
