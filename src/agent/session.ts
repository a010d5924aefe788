// One run of a session: the loop, fed the transcript's view and recording into it.
import { runAgentLoop, type LoopDeps, type RunResult, type RunSpec } from "./loop.ts";
import type { Transcript } from "./transcript.ts";

export type SessionRunSpec = Omit<RunSpec, "history" | "record" | "sessionKey">;

export async function runSession(deps: LoopDeps, transcript: Transcript, spec: SessionRunSpec): Promise<RunResult> {
  const result = await runAgentLoop(deps, {
    ...spec,
    sessionKey: transcript.key,
    history: transcript.messages(),
    record: (message) => transcript.append({ type: "message", message }),
  });
  const context = spec.budget?.calibration();
  transcript.append({ type: "run", status: result.status, turns: result.turns, ts: deps.clock(), ...(context ? { context } : {}) });
  return result;
}
