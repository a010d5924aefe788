// Executes one lane run: the agent loop for the session, usage accounting, and the daily-log
// entry for the exchange once the run is over.
import { contextTokens } from "../agent/messages.ts";
import { memoryScopeFor } from "../memory/visibility.ts";
import type { GatewayContext } from "./context.ts";
import type { RunExecutor } from "./lanes.ts";

export function createRunExecutor(ctx: GatewayContext): RunExecutor {
  return async (run) => {
    const scope = ctx.sessions.get(run.sessionKey)?.scope ?? (run.sessionKey === "main" || run.sessionKey.startsWith("cron:") ? "main" : "shared");
    ctx.sessions.countRun();
    const result = await ctx.runtime.run({
      key: run.sessionKey,
      model: run.items[0]?.model ?? ctx.sessions.get(run.sessionKey)?.model,
      scope,
      input: run.items.map((i) => i.turn),
      signal: run.signal,
      steering: run.steering,
      emit: (e) => {
        if (e.type === "turn_end") ctx.sessions.recordUsage(run.sessionKey, e.model, e.usage, contextTokens(e.usage));
        run.emit(e);
      },
    });
    ctx.sessions.touch(run.sessionKey, scope);
    const memory = ctx.runtime.memory;
    const worthLogging = run.items.some((i) => i.worthLogging?.(result.text) ?? true);
    if (memory && result.status !== "aborted" && worthLogging) {
      // Items joined by steering are part of the exchange too: run.items grows as they join.
      const first = run.items[0]!;
      memory.logExchange(memoryScopeFor(scope, run.sessionKey), {
        at: ctx.clock(),
        channel: first.source.channel,
        sender: first.source.sender,
        userText: run.items.map((i) => i.source.text).join("\n"),
        replyText: result.text,
      });
    }
    return { status: result.status, text: result.text };
  };
}
