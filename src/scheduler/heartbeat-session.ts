// The heartbeat's own light session (sessions/heartbeat.jsonl). Every tick starts empty: its
// request is the system prompt of the main scope, the heartbeat block (HEARTBEAT.md and a digest
// of main's last exchanges) and one short user turn, whatever the length of main's transcript.
// Both system blocks end in a 1-hour cache breakpoint, so ticks 30 minutes apart can share the
// cached prefix; the tick's own turn (the time) comes after it.
import type { RunResult } from "../agent/loop.ts";
import { runAgentLoop } from "../agent/loop.ts";
import type { Message } from "../agent/messages.ts";
import type { ModelClient } from "../agent/providers/model.ts";
import type { ReserveCall } from "../agent/paid-call.ts";
import type { SystemBlock } from "../agent/providers/model.ts";
import { noSteering } from "../agent/steering.ts";
import type { ToolSet } from "../agent/tool.ts";
import type { Transcript } from "../agent/transcript.ts";
import type { Logger } from "../process/log.ts";
import type { AgentEventSink } from "../agent/events.ts";
import type { UserMessage } from "../agent/messages.ts";
import { mainDigest } from "./heartbeat-digest.ts";
import { checklistOf, HEARTBEAT_OK } from "./heartbeat.ts";

/** The session key of the heartbeat's transcript. */
export const HEARTBEAT_SESSION = "heartbeat";
/** Model steps one tick may take (a look-up with a tool, then the answer). */
const MAX_TICK_TURNS = 4;

export interface HeartbeatSessionDeps {
  model: ModelClient;
  /** The tools of `heartbeat.tools` only. */
  tools: ToolSet;
  clock: () => number;
  log: Logger;
  workspace: string;
  /** `heartbeat.maxTokens` (the model client is already `heartbeat.model`'s). */
  maxTokens: number;
  transcript: Transcript;
  /** The main scope's system prompt, stable within the heartbeat's own context epoch. */
  system: () => SystemBlock[];
  /** Main's model view, read only. */
  mainMessages: () => Message[];
  /** The budget before each model call (RunSpec.reserve); absent: every call is made. */
  reserve?: ReserveCall | undefined;
  /** HEARTBEAT.md's content; null when there is none. Must not throw. */
  readChecklist: () => string | null;
}

export interface HeartbeatTickRequest {
  input: UserMessage[];
  signal: AbortSignal;
  emit: AgentEventSink;
}

export async function runHeartbeatSession(deps: HeartbeatSessionDeps, req: HeartbeatTickRequest): Promise<RunResult> {
  const { transcript, clock } = deps;
  transcript.append({ type: "epoch", reason: "heartbeat tick", ts: clock() });
  const checklist = checklistOf(deps.readChecklist()) ?? "(HEARTBEAT.md has no items.)";
  const system = [...deps.system(), { text: heartbeatBlock(checklist, mainDigest(deps.mainMessages())), cacheBreakpoint: true }];
  const result = await runAgentLoop(
    { model: deps.model, tools: deps.tools, clock, log: deps.log },
    {
      sessionKey: HEARTBEAT_SESSION,
      scope: "main",
      workspace: deps.workspace,
      system,
      history: [],
      input: req.input,
      maxTurns: MAX_TICK_TURNS,
      maxTokens: deps.maxTokens,
      signal: req.signal,
      steering: noSteering,
      emit: req.emit,
      record: (message) => transcript.append({ type: "message", message }),
      cacheTtl: "1h",
      reserve: deps.reserve,
    },
  );
  transcript.append({ type: "run", status: result.status, turns: result.turns, ts: clock() });
  return result;
}

/** The heartbeat's instructions, its checklist and what the owner and Hearth said last. */
export function heartbeatBlock(checklist: string, digest: string): string {
  return [
    `# Heartbeat\nThis is a periodic check-in, not a conversation: nobody wrote to you. Go through the checklist (HEARTBEAT.md) against your workspace files and the recent conversation. If nothing needs the owner's attention now, reply exactly ${HEARTBEAT_OK}. Otherwise reply with one short message for the owner: it is sent to them as it is.`,
    `## HEARTBEAT.md\n${checklist}`,
    `## The owner's recent conversation with you (last exchanges, oldest first)\n${digest || "(none yet)"}`,
  ].join("\n\n");
}

