// Executes one lane run: the agent loop for the session, usage accounting, and the daily-log
// entry for the exchange once the run is over.
import { contextTokens, type Scope } from "../agent/messages.ts";
import { memoryScopeFor } from "../memory/visibility.ts";
import type { LaneItem, RunExecutor } from "./lane-item.ts";
import { budgetGate } from "./budget-gate.ts";
import type { Approvals } from "../approvals/service.ts";
import type { Logger } from "../process/log.ts";
import type { TaskService } from "../tasks/service.ts";
import type { AgentRuntime } from "./agent-runtime.ts";
import type { BudgetGateDeps } from "./budget-gate.ts";
import type { SessionStore } from "./sessions.ts";

/** What the run executor uses of the gateway. */
export interface RunExecutorDeps extends BudgetGateDeps {
  approvals: Approvals;
  clock: () => number;
  log: Logger;
  runtime: AgentRuntime;
  sessions: SessionStore;
  tasks: TaskService;
}

export function createRunExecutor(ctx: RunExecutorDeps): RunExecutor {
  return async (run) => {
    const first = run.items[0];
    // A heartbeat is never steered into, but a backlog past its cap is merged into one run: a
    // run that answers anyone else is a chat run.
    const purpose = run.items.every((i) => i.purpose === first?.purpose) ? (first?.purpose ?? "chat") : "chat";
    // A background task runs in the scope it was started in (a group's: shared, with the group's
    // memory), its approvals asked in the chat that started it, naming the task.
    const task = purpose === "task" ? ctx.tasks.originOf(run.sessionKey) : null;
    // A job whose answer goes to a shared chat is made in that chat's scope (job-runner.ts), in
    // the chat's session or its own; never in main, whatever the session's record says.
    const sharedIn = run.items.find((i) => i.sharedIn)?.sharedIn;
    // Other background work (a job for the owner, the heartbeat in its own session) is the owner's: main scope.
    const owners = purpose === "cron" || purpose === "heartbeat";
    const scope = sharedIn ? "shared" : (task?.scope ?? (owners ? "main" : (ctx.sessions.get(run.sessionKey)?.scope ?? (purpose !== "chat" || run.sessionKey === "main" || run.sessionKey.startsWith("cron:") ? "main" : "shared"))));
    const chatKey = sharedIn ?? task?.chatKey ?? run.sessionKey;
    const gate = budgetGate(ctx, { scope, purpose, sessionKey: run.sessionKey });
    // A member's notes are shown only to a run that answers that member alone (a backlog merged
    // past its cap may hold several members: then nobody's).
    const person = first?.person !== undefined && run.items.every((i) => i.person === first.person) ? first.person : undefined;
    if (gate.type === "refused") return { status: "completed", text: gate.text };
    ctx.sessions.countRun();
    // Results of background tasks that ended while this session was busy join its transcript now.
    ctx.tasks.flushNotes(run.sessionKey, (text, outside) => ctx.runtime.appendMessage(run.sessionKey, { role: "user", kind: "system", text, ...(outside ? { outside } : {}), ts: ctx.clock() }));
    // A heartbeat runs in its own session: its context size is not main's.
    const usageKey = purpose === "heartbeat" ? "heartbeat" : run.sessionKey;
    const startedAt = ctx.clock();
    const toolGate = ctx.approvals.gateFor({
      sessionKey: run.sessionKey,
      scope,
      chat: first?.chat ?? task?.target ?? null,
      taintedBy: run.items.find((i) => i.taintedBy)?.taintedBy ?? null,
      ...(task ? { task: { id: task.id, label: task.label } } : {}),
      // Taint belongs to the session's context, not to one run: a page read two turns ago is
      // still in the model's view ("ok, go on"). A heartbeat (lane main) sees main's talk.
      view: () => ctx.runtime.viewOf(run.sessionKey),
    });
    const result = await ctx.runtime.run({
      key: run.sessionKey,
      model: run.items[0]?.model ?? ctx.sessions.get(run.sessionKey)?.model,
      scope,
      purpose,
      ...(first ? { origin: { channel: first.source.channel, sender: first.source.sender } } : {}),
      ...(first?.sendFile ? { sendFile: first.sendFile } : {}),
      gate: toolGate,
      ...(first?.tools ? { tools: first.tools } : {}),
      ...(scope === "shared" && person !== undefined ? { person } : {}),
      ...(chatKey !== run.sessionKey ? { chatKey } : {}),
      ...(scope === "shared" && first?.openTasks ? { openTasks: true } : {}),
      ...(first?.ask ? { ask: first.ask } : {}),
      input: run.items.map((i) => i.turn),
      signal: run.signal,
      steering: run.steering,
      emit: (e) => {
        if (e.type === "turn_end") ctx.sessions.recordUsage(usageKey, e.model, e.usage, contextTokens(e.usage));
        run.emit(e);
      },
    });
    let text = result.text;
    if (gate.type === "over-budget" && result.status !== "aborted") {
      run.emit({ type: "text_delta", text: gate.mark });
      text += gate.mark;
    }
    ctx.sessions.touch(run.sessionKey, scope);
    // One line per answered message at info level: what an operator reads in `pm2 logs`.
    ctx.log.info("run.done", {
      session: run.sessionKey,
      channel: run.items[0]?.source.channel ?? null,
      messages: run.items.length,
      status: result.status,
      durationMs: ctx.clock() - startedAt,
      inputTokens: contextTokens(result.usage),
      outputTokens: result.usage.outputTokens,
    });
    const memory = ctx.runtime.memory;
    const worthLogging = run.items.some((i) => i.worthLogging?.(result.text) ?? true);
    if (memory && result.status !== "aborted" && worthLogging) {
      // Items joined by steering are part of the exchange too: run.items grows as they join.
      const first = run.items[0]!;
      memory.logExchange(memoryScopeFor(scope, chatKey), {
        at: ctx.clock(),
        channel: first.source.channel,
        sender: first.source.sender,
        ...loggedWords(scope, run.items, toolGate.taint(), result.text),
      });
    }
    return { status: result.status, text };
  };
}

/**
 * What the owner's daily log keeps of an exchange. The log is part of every later context of the
 * main scope, so the words of outside content (a mail, another person's message) and the answer of
 * a run that read some stay out of it: `/new` would otherwise hand them to a clean run as notes.
 * The transcript keeps them, marked. A shared chat's log is that chat's own, whose members wrote it.
 */
function loggedWords(scope: Scope, items: readonly LaneItem[], tainted: string | null, reply: string): { userText: string; replyText: string } {
  const userText = items.map((i) => (scope === "main" && i.turn.outside ? `(${i.turn.outside}: not kept in the log)` : i.source.text)).join("\n");
  if (scope !== "main" || tainted === null) return { userText, replyText: reply };
  return { userText, replyText: `(the answer is not kept in the log: ${tainted}, and notes here reach every later conversation)` };
}
