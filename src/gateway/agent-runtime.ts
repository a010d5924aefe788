// Wires the agent from the configuration: the model client, the tools, memory and the
// transcripts. The gateway runs every session through this.
import { existsSync } from "node:fs";
import type { AgentEventSink } from "../agent/events.ts";
import { ContextBudget, type CompactOutcome } from "../agent/context-budget.ts";
import { runAgentLoop, type RunResult } from "../agent/loop.ts";
import type { Message, Scope, UserMessage } from "../agent/messages.ts";
import { createAnthropicModelClient, type ModelClient } from "../agent/model-client.ts";
import { runSession } from "../agent/session.ts";
import { noSteering, type SteeringSource } from "../agent/steering.ts";
import { buildSystemPrompt } from "../agent/system-prompt.ts";
import { ToolSet, type Tool } from "../agent/tool.ts";
import { scopePermission } from "../agent/tool-policy.ts";
import { createWorkspaceTools, killOrphanedCommands, markerPrefixFor, resolveExecSandbox, type ExecSandbox } from "../agent/tools/index.ts";
import { Transcript } from "../agent/transcript.ts";
import type { Logger } from "../log.ts";
import type { MemoryService } from "../memory/memory.ts";
import { memoryScopeFor } from "../memory/visibility.ts";
import type { Config } from "./config.ts";
import { homePaths } from "./home.ts";
import { parseDuration } from "./config.ts";
import { SessionActivity } from "./session-activity.ts";
import { meteredModel, type UsageSink } from "./usage/metered-model.ts";
import type { RunPurpose, UsageTag } from "./usage/record.ts";
import { HEARTBEAT_SESSION, runHeartbeatSession } from "./scheduler/heartbeat-session.ts";
import { readNote } from "../memory/workspace-files.ts";

const FLUSH_REFUSAL = "Not now: this turn only saves to memory, with memory_write.";

const FLUSH_PROMPT =
  "[Hearth] This conversation is about to be compacted: its older turns will be replaced by a summary. If anything in them must be remembered beyond that summary (facts about the owner, decisions, commitments, progress), save it now with memory_write. Then reply with just: done";

export class MissingApiKeyError extends Error {
  constructor(configPath: string) {
    super(
      `Hearth needs an Anthropic API key to talk to the model.\n` +
        `  Set it in your shell:  export ANTHROPIC_API_KEY=sk-ant-...\n` +
        `  or in ${configPath}:  "model": { "apiKey": "sk-ant-..." }\n` +
        `Create a key in the Anthropic Console (Settings → API keys), then run the command again.`,
    );
    this.name = "MissingApiKeyError";
  }
}

export interface SessionRunRequest {
  key: string;
  scope: Scope;
  input: UserMessage[];
  signal: AbortSignal;
  emit: AgentEventSink;
  steering?: SteeringSource;
  /** Why the run happens; default "chat". Its model calls are recorded with it. */
  purpose?: RunPurpose;
  /** The channel and sender of the message that started the run, for the usage records. */
  origin?: { channel: string; sender: string };
}

export interface AgentRuntime {
  readonly model: ModelClient;
  readonly memory: MemoryService | null;
  /** Where exec commands run, decided once at start (for status and doctor). */
  readonly execSandbox: ExecSandbox;
  run(req: SessionRunRequest): Promise<RunResult>;
  /** /compact: the memory flush and a summary of older turns, on demand. Not during a run. */
  compact(key: string, scope: Scope, focus: string | undefined, signal: AbortSignal): Promise<CompactOutcome>;
  /** /new, /reset: the model's view of the session starts empty; the transcript keeps the past. */
  resetSession(key: string, reason: string): void;
  /**
   * Releases the in-memory state of sessions idle past agent.releaseIdleAfter or beyond
   * agent.maxSessionsInMemory; returns how many. Also happens on every session use, and on a
   * timer while any state is held.
   */
  releaseIdle(): number;
  /** Sessions whose state is in memory now. */
  sessionsInMemory(): number;
  /**
   * Adds a message to a session's transcript outside a run (a delivered heartbeat, so main knows
   * what was said). Call only while the session's lane is held: a run in progress would
   * interleave with it.
   */
  appendMessage(key: string, message: Message): void;
}

export interface AgentRuntimeOptions {
  config: Config;
  home: string;
  log: Logger;
  memory?: MemoryService | null;
  /** Tools besides the workspace and memory tools (the scheduler's cron tools). */
  extraTools?: Tool[];
  /** Replaces the Anthropic client (tests, benchmarks). */
  model?: ModelClient;
  clock?: () => number;
  /** Records every model call's usage (the usage ledger); absent, nothing is recorded. */
  recordUsage?: UsageSink;
}

/** Throws MissingApiKeyError when there is no key and no custom endpoint. */
export function assertModelCredentials(config: Config, home: string): void {
  if (!config.model.apiKey && !config.model.baseUrl) throw new MissingApiKeyError(homePaths(home).config);
}

export function createAgentRuntime(opts: AgentRuntimeOptions): AgentRuntime {
  const { config, log } = opts;
  const clock = opts.clock ?? Date.now;
  const memory = opts.memory ?? null;
  const paths = homePaths(opts.home);
  if (!opts.model) assertModelCredentials(config, opts.home);
  const model =
    opts.model ??
    createAnthropicModelClient({
      models: [config.model.name, ...config.model.fallbacks],
      apiKey: config.model.apiKey,
      baseURL: config.model.baseUrl,
      retry: { idleTimeoutMs: config.model.idleTimeoutMs },
      log: log.child({ component: "model" }),
    });
  // Compaction summaries and the memory flush may use a cheaper model (compaction.model).
  const compactionModel =
    opts.model || !config.compaction.model || config.compaction.model === config.model.name
      ? model
      : createAnthropicModelClient({
          models: [config.compaction.model, ...config.model.fallbacks],
          apiKey: config.model.apiKey,
          baseURL: config.model.baseUrl,
          retry: { idleTimeoutMs: config.model.idleTimeoutMs },
          log: log.child({ component: "model", purpose: "compaction" }),
        });
  const recordUsage: UsageSink = opts.recordUsage ?? (() => {});
  // The tag of the run each session last started: compaction and the flush happen inside it
  // (or, for /compact, on its behalf) and are recorded with its session and origin.
  const lastTag = new Map<string, UsageTag>();
  const tagFor = (key: string, scope: Scope, purpose: RunPurpose) => () => ({ ...(lastTag.get(key) ?? { session: key, scope }), purpose });
  // Throws SandboxUnavailableError when "bwrap" is required and cannot run: the daemon refuses to start.
  const execSandbox = resolveExecSandbox({
    mode: config.tools.exec.sandbox,
    network: config.tools.exec.network,
    home: opts.home,
    workspace: config.workspace,
  });
  log.info("exec.sandbox", { sandbox: execSandbox.kind, ...(execSandbox.kind === "none" ? { why: execSandbox.why, detail: execSandbox.detail } : { network: execSandbox.network }) });
  // The home's lock is held: commands still running with this home's marker were left by a
  // daemon that was killed (kill -9, a crash) before it could end them.
  const execMarkerPrefix = markerPrefixFor(opts.home);
  const orphans = killOrphanedCommands(execMarkerPrefix);
  if (orphans > 0) log.warn("exec.orphans_killed", { count: orphans });
  const allTools = [...createWorkspaceTools({ execTimeoutMs: config.tools.exec.timeoutMs, execSandbox, execMarkerPrefix }), ...(memory?.tools() ?? []), ...(opts.extraTools ?? [])];
  const tools = new ToolSet(allTools, scopePermission(config.tools.shared.allow));
  const heartbeatTools = new ToolSet(allTools.filter((t) => config.heartbeat.tools.includes(t.name)));
  for (const name of config.heartbeat.tools) {
    if (!allTools.some((t) => t.name === name)) log.warn("heartbeat.unknown_tool", { tool: name, known: allTools.map((t) => t.name).join(", ") });
  }
  // The flush sends the chat's own tool list (and system prompt), so its request reads the
  // chat's cached prefix instead of writing a new one; the tool layer refuses all but memory_write.
  const flushTools = tools.refusing((name) => (name === "memory_write" ? null : FLUSH_REFUSAL));
  const transcripts = new Map<string, Transcript>();
  /** When the heartbeat's context was last assembled afresh. */
  let heartbeatContextAt = 0;
  const budgets = new Map<string, ContextBudget>();
  // Bounded memory: state of idle sessions is released and reloaded from disk on demand.
  const activity = new SessionActivity({
    idleMs: parseDuration(config.agent.releaseIdleAfter) || Number.POSITIVE_INFINITY,
    maxSessions: config.agent.maxSessionsInMemory,
    clock,
    release: (key) => {
      transcripts.delete(key);
      budgets.delete(key);
      lastTag.delete(key);
      memory?.forgetSession(key);
    },
  });
  let sweeper: NodeJS.Timeout | undefined;
  const sweepLater = () => {
    if (sweeper) return;
    // Unref'd and stopped when nothing is held: it never keeps a process alive.
    sweeper = setInterval(() => {
      activity.releaseIdle();
      if (activity.size === 0) {
        clearInterval(sweeper);
        sweeper = undefined;
      }
    }, 60_000);
    sweeper.unref();
  };
  const transcriptFor = (key: string) => {
    activity.touch(key);
    sweepLater();
    let t = transcripts.get(key);
    if (!t) {
      t = Transcript.open(paths.sessionFile(key), key, log, clock);
      transcripts.set(key, t);
    }
    return t;
  };

  const systemFor = (key: string, scope: Scope) => {
    const context = memory?.context(key, memoryScopeFor(scope, key), clock());
    return buildSystemPrompt({ scope, ...(context ? { context } : {}) });
  };

  /** The silent turn before a summary: the agent may save what must outlive the old turns. */
  const flush = (key: string, scope: Scope) => async (view: Message[], signal: AbortSignal) => {
    const transcript = transcriptFor(key);
    const result = await runAgentLoop(
      { model: meteredModel(compactionModel, tagFor(key, scope, "flush"), recordUsage), tools: flushTools, clock, log },
      {
        sessionKey: key,
        scope,
        workspace: config.workspace,
        system: systemFor(key, scope),
        history: view,
        input: [{ role: "user", kind: "system", text: FLUSH_PROMPT, ts: clock() }],
        maxTurns: 4,
        maxTokens: config.model.maxTokens,
        signal,
        steering: noSteering,
        emit: () => {},
        record: (message) => transcript.append({ type: "message", message }),
      },
    );
    log.info("compaction.memory_flush", { session: key, status: result.status, turns: result.turns });
  };

  const budgetFor = (key: string, scope: Scope) => {
    activity.touch(key);
    let b = budgets.get(key);
    if (!b) {
      b = new ContextBudget({
        window: config.model.contextWindow,
        model: meteredModel(compactionModel, tagFor(key, scope, "compaction"), recordUsage),
        maxTokens: config.model.maxTokens,
        log: log.child({ session: key }),
        clock,
        record: (c) => {
          transcriptFor(key).append({
            type: "compaction",
            reason: c.reason,
            messages: c.view,
            summarized: c.summarized,
            tokensBefore: c.tokensBefore,
            tokensAfter: c.tokensAfter,
            ts: clock(),
          });
          // No epoch reset here: a compaction inside a run keeps the run's system prompt, and a
          // reset now would change the next run's prompt a second time. compactBeforeRun resets
          // it before the prompt is built, so the prompt changes once, with the messages.
        },
        ...(scope === "main" && memory ? { flush: flush(key, scope) } : {}),
        calibration: transcriptFor(key).lastCalibration(),
      });
      budgets.set(key, b);
    }
    return b;
  };

  /**
   * A session that the new input takes past the threshold is compacted before the new run's
   * system prompt is built, and its context epoch reset then: the first request of the run has
   * both the new view and the new context, one change of prefix instead of two. A failure is
   * left to the loop's own check.
   */
  const compactBeforeRun = async (key: string, scope: Scope, input: UserMessage[], signal: AbortSignal) => {
    const budget = budgetFor(key, scope);
    const messages = transcriptFor(key).messages();
    const request = { system: systemFor(key, scope), tools: tools.specsFor(scope), messages: [...messages, ...input], maxTokens: config.model.maxTokens };
    if (!budget.needsCompaction(request)) return;
    // The view without the new input: the loop appends it to whatever view comes out.
    const outcome = await budget.compact({ ...request, messages }, { reason: "threshold", signal });
    if (outcome.type === "compacted") memory?.resetEpoch(key);
  };

  return {
    model,
    memory,
    execSandbox,
    async run(req) {
      const origin = req.origin ? { channel: req.origin.channel, sender: req.origin.sender } : {};
      if (req.purpose === "heartbeat") {
        // Its model calls are the heartbeat session's, whatever lane it ran on.
        const tag: UsageTag = { session: HEARTBEAT_SESSION, scope: "main", purpose: "heartbeat", ...origin };
        return runHeartbeatSession(
          {
            model: meteredModel(model, () => tag, recordUsage),
            tools: heartbeatTools,
            clock,
            log,
            workspace: config.workspace,
            modelName: config.heartbeat.model,
            maxTokens: config.heartbeat.maxTokens,
            transcript: transcriptFor(HEARTBEAT_SESSION),
            system: () => {
              // A tick sees the workspace as it is: after any change (a daily-log entry too) its
              // context is assembled afresh. On an idle day nothing changes and the prefix stays cached.
              if (memory && memory.lastChangeAt() >= heartbeatContextAt) {
                memory.resetEpoch(HEARTBEAT_SESSION);
                heartbeatContextAt = clock();
              }
              return systemFor(HEARTBEAT_SESSION, "main");
            },
            // Opening a transcript creates its file: a heartbeat before any conversation must not.
            mainMessages: () => (existsSync(paths.sessionFile("main")) ? transcriptFor("main").messages() : []),
            // Through the memory opener: HEARTBEAT.md linked to ../config.json must not reach a prompt.
            readChecklist: () => readNote(config.workspace, "HEARTBEAT.md", { kind: "main" }, 20_000, log),
          },
          req,
        );
      }
      const tag: UsageTag = { session: req.key, scope: req.scope, purpose: req.purpose ?? "chat", ...origin };
      const release = activity.hold(req.key);
      lastTag.set(req.key, tag);
      try {
        await compactBeforeRun(req.key, req.scope, req.input, req.signal);
        return await runSession({ model: meteredModel(model, () => tag, recordUsage), tools, clock, log }, transcriptFor(req.key), {
          scope: req.scope,
          workspace: config.workspace,
          system: systemFor(req.key, req.scope),
          input: req.input,
          maxTurns: config.agent.maxTurns,
          maxTokens: config.model.maxTokens,
          signal: req.signal,
          steering: req.steering ?? noSteering,
          emit: req.emit,
          budget: budgetFor(req.key, req.scope),
        });
      } finally {
        release();
      }
    },
    releaseIdle: () => activity.releaseIdle(),
    sessionsInMemory: () => activity.size,
    async compact(key, scope, focus, signal) {
      const release = activity.hold(key);
      try {
        const request = { system: systemFor(key, scope), tools: tools.specsFor(scope), messages: transcriptFor(key).messages(), maxTokens: config.model.maxTokens };
        const outcome = await budgetFor(key, scope).compact(request, { reason: "command", signal, ...(focus ? { focus } : {}) });
        if (outcome.type === "compacted") memory?.resetEpoch(key);
        return outcome;
      } finally {
        release();
      }
    },
    appendMessage(key, message) {
      transcriptFor(key).append({ type: "message", message });
    },
    resetSession(key, reason) {
      transcriptFor(key).append({ type: "epoch", reason, ts: clock() });
      memory?.resetEpoch(key);
    },
  };
}
