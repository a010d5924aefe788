// Wires the agent from the configuration: the model client, the tools, memory and the
// transcripts. The gateway runs every session through this.
import { existsSync } from "node:fs";
import { ContextBudget, estimateInputTokens, type CompactOutcome } from "../agent/context-budget.ts";
import { runAgentLoop, type RunResult } from "../agent/loop.ts";
import { type Message, type Scope, type UserMessage } from "../agent/messages.ts";
import type { ModelClient, ModelRequest } from "../agent/providers/model.ts";
import type { ReserveCall } from "../agent/paid-call.ts";
import { splitModelName } from "../agent/providers/presets.ts";
import { ModelRegistry, UnknownModelError, type ResolvedModel } from "../agent/providers/registry.ts";
import { outsideContentIn } from "../agent/outside-content.ts";
import { runSession } from "../agent/session.ts";
import { noSteering } from "../agent/steering.ts";
import { buildSystemPrompt } from "../agent/system-prompt.ts";
import { sendFileTool } from "../agent/tools/send-file.ts";
import { ToolSet, type Tool } from "../agent/tool.ts";
import { scopePermission, withExtensions, withTaskTools } from "../agent/tool-policy.ts";
import type { McpManager } from "../agent/mcp/manager.ts";
import type { SkillRegistry } from "../agent/skills/registry.ts";
import { createWorkspaceTools, killOrphanedCommands, markerPrefixFor, resolveExecSandbox, type ExecHosts, type ExecSandbox } from "../agent/tools/index.ts";
import { Transcript } from "../agent/transcript.ts";
import { createWebTools, webReadsOf } from "../agent/tools/web/index.ts";
import { Egress } from "../egress/egress.ts";
import type { Logger } from "../process/log.ts";
import type { MemoryService } from "../memory/memory.ts";
import { memoryScopeFor } from "../memory/visibility.ts";
import { egressRules, heartbeatModel, purposeModels } from "../config/config.ts";
import type { Config } from "../config/schema.ts";
import { homePaths } from "../config/home.ts";
import { assertModelCredentials } from "../config/credentials.ts";
import { parseDuration } from "../fields/config-fields.ts";
import { MemoryReducer } from "./upkeep/memory-reducer.ts";
import { SessionActivity } from "./upkeep/session-activity.ts";
import { meteredModel, type UsageSink } from "../spending/metered-model.ts";
import { localSearchPricePerThousand, pricingFor } from "../spending/pricing.ts";
import { payWebUse, reserveModelCalls, type ReservePaidCall } from "./paid-calls.ts";
import type { SessionRunRequest } from "./session-run-request.ts";
import { LOCAL_WEB_MODEL, type RunPurpose, type UsageTag } from "../spending/usage-record.ts";
import { HEARTBEAT_SESSION, runHeartbeatSession } from "../scheduler/heartbeat-session.ts";
import { readNote } from "../memory/workspace-files.ts";

export type { SessionRunRequest };

const FLUSH_REFUSAL = "Not now: this turn only saves to memory, with memory_write.";

const FLUSH_PROMPT =
  "[Hearth] This conversation is about to be compacted: its older turns will be replaced by a summary. If anything in them must be remembered beyond that summary (facts about the owner, decisions, commitments, progress), save it now with memory_write. Then reply with just: done";

/** A model as /model and /status describe it. */
export interface ModelInfo {
  name: string;
  contextWindow: number;
  tools: boolean;
  /** Why it runs without tools: "config" or what the API said. */
  toolsOffReason?: string;
  /** USD per million tokens from providers.<name>.models.<id>.pricing (spending/pricing.ts pricingFor uses it). */
  pricing?: { input: number; output: number };
}

export interface AgentRuntime {
  readonly model: ModelClient;
  /** What /model offers: model.name, the fallbacks, then the models listed under providers. */
  modelChoices(): string[];
  /** Throws UnknownModelError for a name no provider serves. `name` absent: model.name. */
  modelInfo(name?: string): ModelInfo;
  readonly memory: MemoryService | null;
  readonly skills: SkillRegistry | null;
  readonly mcp: McpManager | null;
  /** Where exec commands run, decided once at start (for status and doctor). */
  readonly execSandbox: ExecSandbox;
  run(req: SessionRunRequest): Promise<RunResult>;
  /** /compact: the memory flush and a summary of older turns, on demand. Not during a run. */
  compact(key: string, scope: Scope, focus: string | undefined, signal: AbortSignal, sessionModel?: string): Promise<CompactOutcome>;
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
  /**
   * Takes inbox entry `entryId`'s turns so far (and what its cut-off runs added after them) out
   * of the model's view of session `key`; `note` is shown in their place when given. A record:
   * the transcript's history keeps them.
   */
  withdrawTurns(key: string, entryId: string, note?: string): void;
  /** What the session's last run read from the web ("example.com", "search: …"); [] when nothing. */
  webReads(key: string): string[];
  /**
   * The newest outside content in the model's view of session `key` (agent/outside-content.ts),
   * in words ("a web page"); null when it holds none, or the session has no transcript yet.
   * Read from the transcript, so it survives a restart; /new clears it.
   */
  outsideContent(key: string): string | null;
  /** A copy of the model's view of session `key` (its transcript's messages); [] when it has no transcript yet. */
  viewOf(key: string): Message[];
}

export interface AgentRuntimeOptions {
  config: Config;
  home: string;
  log: Logger;
  memory?: MemoryService | null;
  /** Tools besides the workspace and memory tools (the scheduler's cron tools). */
  extraTools?: Tool[];
  /** The workspace's skills: listed in the system prompt per scope. */
  skills?: SkillRegistry | null;
  /** MCP servers: their tools join the tool set (the caller starts and stops them). */
  mcp?: McpManager | null;
  /** tools.exec.hosts as a connection pool (the gateway closes it); absent: exec runs here only. */
  execHosts?: ExecHosts;
  /** Replaces every model client (tests, benchmarks). */
  model?: ModelClient;
  clock?: () => number;
  /** Records every model call's usage (the usage ledger); absent, nothing is recorded. */
  recordUsage?: UsageSink;
  /** The egress policy: sandboxed commands' proxy and local web_fetch; absent (tests): config.egress, connections not audited. */
  egress?: Egress;
  /** Asked before every paid call of a run, its model calls and its web searches (paid-calls.ts); absent, every call is made. */
  reserve?: ReservePaidCall;
}

export function createAgentRuntime(opts: AgentRuntimeOptions): AgentRuntime {
  const { config, log } = opts;
  const clock = opts.clock ?? Date.now;
  const memory = opts.memory ?? null;
  const paths = homePaths(opts.home);
  if (!opts.model) assertModelCredentials(config, opts.home);
  const registry = new ModelRegistry({
    providers: config.providers,
    primary: config.model.name,
    fallbacks: config.model.fallbacks,
    contextWindow: config.model.contextWindow,
    maxTokens: config.model.maxTokens,
    retry: { idleTimeoutMs: config.model.idleTimeoutMs },
    log: log.child({ component: "model" }),
  });
  const model = opts.model ?? registry.clientFor();
  /** The client for a session's model (or model.name); an unknown name (config changed since /model) falls back to model.name. */
  const modelFor = (name: string | undefined): { client: ModelClient; resolved: ResolvedModel } => {
    let resolved = registry.resolve(config.model.name);
    if (name && name !== config.model.name) {
      try {
        resolved = registry.resolve(name);
      } catch (err) {
        if (!(err instanceof UnknownModelError)) throw err;
        log.warn("model.session_model_unknown", { model: name });
      }
    }
    return { client: opts.model ?? registry.clientFor(resolved.name), resolved };
  };
  // compaction.model (any provider's model) writes the summaries; without it, the session's model does.
  const compactionModel = purposeModels(config)["compaction.model"];
  const summaryModelFor = (sessionModel: ModelClient) => (compactionModel ? modelFor(compactionModel).client : sessionModel);
  const recordUsage: UsageSink = opts.recordUsage ?? (() => {});
  // The tag of the run each session last started: compaction and the flush happen inside it
  // (or, for /compact, on its behalf) and are recorded with its session and origin.
  const lastTag = new Map<string, UsageTag>();
  const tagFor = (key: string, scope: Scope, purpose: RunPurpose) => () => ({ ...(lastTag.get(key) ?? { session: key, scope }), purpose });
  // Each model call is held at its worst case on the dearest model it may reach; compaction and
  // the flush are held like the run they serve (its purpose decides the limits).
  const pricing = pricingFor(config);
  const runOf = (key: string, scope: Scope) => (): UsageTag => lastTag.get(key) ?? { session: key, scope, purpose: "chat" };
  const reserveFor = (tag: () => UsageTag, model: string, estimate: (req: ModelRequest) => number): ReserveCall | undefined => {
    const models = [model, ...[...config.model.fallbacks, ...(compactionModel ? [compactionModel] : [])].map((n) => splitModelName(n).model)];
    return opts.reserve && reserveModelCalls(opts.reserve, tag, { models, pricing }, estimate);
  };
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
  const egress = opts.egress ?? new Egress({ rules: () => egressRules(config), record: () => {}, log: log.child({ component: "egress" }) });
  const orphans = killOrphanedCommands(execMarkerPrefix);
  if (orphans > 0) log.warn("exec.orphans_killed", { count: orphans });
  const skills = opts.skills ?? null;
  const mcp = opts.mcp ?? null;
  const sharedAllow = config.tools.shared.allow;
  // The owner who allowed `read` to shared scopes keeps that; otherwise it opens shared skills only.
  const sharedReadRoots = sharedAllow.includes("read") ? undefined : () => skills?.sharedFolders() ?? [];
  // Server-side web tools exist only with the Anthropic API: with another provider Hearth fetches
  // and searches itself.
  const anthropicMain = splitModelName(config.model.name).provider === "anthropic";
  const webConfig = anthropicMain
    ? config.tools.web
    : { search: { ...config.tools.web.search, mode: "local" as const }, fetch: { ...config.tools.web.fetch, mode: "local" as const } };
  const payWeb = payWebUse(opts.reserve, (tag, usage) => recordUsage(tag, LOCAL_WEB_MODEL, usage), localSearchPricePerThousand(webConfig.search) / 1000);
  const web = createWebTools({
    web: webConfig,
    timezone: config.timezone,
    sharedAllow,
    log: log.child({ component: "web" }),
    egress,
    // Local searches and fetches are lines in usage.jsonl (no tokens; the ledger prices a search) under the run that made them.
    onUse: (kind, ctx) => payWeb(kind, lastTag.get(ctx.sessionKey) ?? { session: ctx.sessionKey, scope: ctx.scope, purpose: "chat" }),
  });
  const lastWebReads = new Map<string, string[]>();
  const allTools = [
    ...createWorkspaceTools({ execTimeoutMs: config.tools.exec.timeoutMs, execSandbox, execMarkerPrefix, egress, ...(opts.execHosts ? { execHosts: opts.execHosts } : {}), ...(sharedReadRoots ? { sharedReadRoots } : {}), ...(memory?.provenance ? { origins: memory.provenance } : {}) }),
    ...web.tools,
    ...(memory?.tools() ?? []),
    sendFileTool,
    ...(opts.extraTools ?? []),
  ];
  const tools = new ToolSet(
    allTools,
    withExtensions(scopePermission(sharedAllow), {
      sharedAllow,
      mcp: (name, scope) => (mcp ? mcp.permission(name, scope) : `${name} is not available.`),
      hasSharedSkills: () => (skills?.forScope("shared").length ?? 0) > 0,
    }),
    mcp ? [mcp] : [],
  );
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
  // Bounded memory: state of idle sessions is released and reloaded from disk on demand, and
  // once many were, the heap pages they used are given back (memory-reducer.ts).
  const reducer = new MemoryReducer();
  const activity = new SessionActivity({
    idleMs: parseDuration(config.agent.releaseIdleAfter) || Number.POSITIVE_INFINITY,
    maxSessions: config.agent.maxSessionsInMemory,
    clock,
    release: (key) => {
      transcripts.delete(key);
      // One budget per model the session used (budgetFor).
      for (const budgetKey of budgets.keys()) if (budgetKey.startsWith(`${key}\n`)) budgets.delete(budgetKey);
      lastTag.delete(key);
      memory?.forgetSession(key);
      reducer.noteReleased();
    },
  });
  const sweep = () => {
    const released = activity.releaseIdle();
    reducer.afterSweep();
    return released;
  };
  let sweeper: NodeJS.Timeout | undefined;
  const sweepLater = () => {
    if (sweeper) return;
    // Unref'd and stopped when nothing is held: it never keeps a process alive.
    sweeper = setInterval(() => {
      sweep();
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

  const systemFor = (key: string, scope: Scope, person?: string, chatKey = key) => {
    const context = memory?.context(key, memoryScopeFor(scope, chatKey, person), clock());
    const skillsBlock = skills?.promptBlock(scope);
    return buildSystemPrompt({ scope, ...(context ? { context } : {}), ...(skillsBlock ? { skills: skillsBlock } : {}) });
  };

  /** The silent turn before a summary: the agent may save what must outlive the old turns. */
  const flush = (key: string, scope: Scope, model: ModelClient, modelId: string, maxTokens: number) => async (view: Message[], signal: AbortSignal) => {
    // A view that holds outside content would launder it: what the flush saves is told to every
    // later conversation as the owner's, and nobody is there to confirm it. The summary (marked
    // outside, as it may repeat the page) keeps what the old turns said.
    const outside = outsideContentIn(view);
    if (outside) return void log.info("compaction.memory_flush_skipped", { session: key, outside });
    const transcript = transcriptFor(key);
    const result = await runAgentLoop(
      { model: meteredModel(summaryModelFor(model), tagFor(key, scope, "flush"), recordUsage), tools: flushTools, clock, log },
      {
        sessionKey: key,
        scope,
        workspace: config.workspace,
        system: systemFor(key, scope),
        history: view,
        input: [{ role: "user", kind: "system", text: FLUSH_PROMPT, ts: clock() }],
        maxTurns: 4,
        maxTokens,
        mediaKeepTurns: config.media.keepTurns,
        // The chat's own server tools too: the same tool list, the same cached prefix.
        serverTools: web.serverToolsFor(scope),
        reserve: reserveFor(runOf(key, scope), modelId, (req) => estimateInputTokens(req)),
        signal,
        steering: noSteering,
        emit: () => {},
        record: (message) => transcript.append({ type: "message", message }),
      },
    );
    log.info("compaction.memory_flush", { session: key, status: result.status, turns: result.turns });
  };

  /** One budget per session and model: a /model switch starts a budget with the new window. */
  const budgetFor = (key: string, scope: Scope, m: { client: ModelClient; resolved: ResolvedModel }) => {
    activity.touch(key);
    const budgetKey = `${key}\n${m.resolved.name}`;
    let b = budgets.get(budgetKey);
    if (!b) {
      const estimate = (req: ModelRequest) => budgets.get(budgetKey)?.estimate(req) ?? estimateInputTokens(req);
      b = new ContextBudget({
        window: m.resolved.contextWindow,
        model: meteredModel(summaryModelFor(m.client), tagFor(key, scope, "compaction"), recordUsage),
        maxTokens: m.resolved.maxTokens,
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
        ...(scope === "main" && memory ? { flush: flush(key, scope, m.client, m.resolved.model, m.resolved.maxTokens) } : {}),
        ...(opts.reserve ? { reserve: reserveFor(runOf(key, scope), m.resolved.model, estimate)! } : {}),
        calibration: transcriptFor(key).lastCalibration(),
      });
      budgets.set(budgetKey, b);
    }
    return b;
  };

  /**
   * A session that the new input takes past the threshold is compacted before the new run's
   * system prompt is built, and its context epoch reset then: the first request of the run has
   * both the new view and the new context, one change of prefix instead of two. A failure is
   * left to the loop's own check.
   */
  const compactBeforeRun = async (key: string, scope: Scope, m: { client: ModelClient; resolved: ResolvedModel }, input: UserMessage[], signal: AbortSignal, runTools: ToolSet, chatKey?: string) => {
    const budget = budgetFor(key, scope, m);
    const messages = transcriptFor(key).messages();
    const request = { system: systemFor(key, scope, undefined, chatKey), tools: runTools.specsFor(scope), serverTools: web.serverToolsFor(scope), messages: [...messages, ...input], maxTokens: m.resolved.maxTokens, mediaKeepTurns: config.media.keepTurns };
    if (!budget.needsCompaction(request)) return;
    // The view without the new input: the loop appends it to whatever view comes out.
    const outcome = await budget.compact({ ...request, messages }, { reason: "threshold", signal });
    if (outcome.type === "compacted") memory?.resetEpoch(key);
  };

  const runtime: AgentRuntime = {
    model,
    memory,
    skills,
    mcp,
    execSandbox,
    modelChoices: () => registry.choices(),
    modelInfo(name) {
      const r = registry.resolve(name ?? config.model.name);
      const caps = opts.model?.capabilities?.() ?? registry.capabilities(r.name);
      return {
        name: r.name,
        contextWindow: r.contextWindow,
        tools: caps.tools,
        ...(caps.toolsOffReason ? { toolsOffReason: caps.toolsOffReason } : {}),
        ...(r.pricing ? { pricing: r.pricing } : {}),
      };
    },
    async run(req) {
      const origin = req.origin ? { channel: req.origin.channel, sender: req.origin.sender } : {};
      if (req.purpose === "heartbeat") {
        // Its model calls are the heartbeat session's, whatever lane it ran on.
        const tag: UsageTag = { session: HEARTBEAT_SESSION, scope: "main", purpose: "heartbeat", ...origin };
        const hb = modelFor(heartbeatModel(config));
        return runHeartbeatSession(
          {
            model: meteredModel(hb.client, () => tag, recordUsage),
            reserve: reserveFor(() => tag, hb.resolved.model, (r) => estimateInputTokens(r)),
            tools: heartbeatTools,
            clock,
            log,
            workspace: config.workspace,
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
      const m = modelFor(req.model);
      const tag: UsageTag = { session: req.key, scope: req.scope, purpose: req.purpose ?? "chat", ...origin };
      const release = activity.hold(req.key);
      lastTag.set(req.key, tag);
      try {
        const only = req.tools;
        const scoped = req.openTasks && req.scope === "shared" ? tools.widened(withTaskTools) : tools;
        const runTools = only ? scoped.refusing((name) => (only.includes(name) ? null : `${name} is not among the tools this background task was given (${only.join(", ")}).`)) : scoped;
        await compactBeforeRun(req.key, req.scope, m, req.input, req.signal, runTools, req.chatKey);
        const result = await runSession({ model: meteredModel(m.client, () => tag, recordUsage), tools: runTools, clock, log }, transcriptFor(req.key), {
          scope: req.scope,
          ...(req.person !== undefined ? { person: req.person } : {}),
          ...(req.chatKey !== undefined ? { chatKey: req.chatKey } : {}),
          workspace: config.workspace,
          system: systemFor(req.key, req.scope, req.person, req.chatKey),
          input: req.input,
          maxTurns: config.agent.maxTurns,
          mediaKeepTurns: config.media.keepTurns,
          ...(req.sendFile ? { sendFile: req.sendFile } : {}),
          ...(req.gate ? { gate: req.gate } : {}),
          ...(req.ask ? { ask: req.ask } : {}),
          maxTokens: m.resolved.maxTokens,
          signal: req.signal,
          steering: req.steering ?? noSteering,
          emit: req.emit,
          budget: budgetFor(req.key, req.scope, m),
          serverTools: web.serverToolsFor(req.scope),
          reserve: reserveFor(() => tag, m.resolved.model, (r) => budgetFor(req.key, req.scope, m).estimate(r)),
        });
        lastWebReads.set(req.key, webReadsOf(result.added));
        return result;
      } finally {
        release();
      }
    },
    webReads: (key) => lastWebReads.get(key) ?? [],
    // Opening a transcript creates its file: asking about a session that never ran must not.
    outsideContent: (key) => outsideContentIn(runtime.viewOf(key)),
    viewOf: (key) => (transcripts.has(key) || existsSync(paths.sessionFile(key)) ? transcriptFor(key).messages() : []),
    releaseIdle: sweep,
    sessionsInMemory: () => activity.size,
    async compact(key, scope, focus, signal, sessionModel) {
      const release = activity.hold(key);
      try {
        const m = modelFor(sessionModel);
        const request = { system: systemFor(key, scope), tools: tools.specsFor(scope), serverTools: web.serverToolsFor(scope), messages: transcriptFor(key).messages(), maxTokens: m.resolved.maxTokens, mediaKeepTurns: config.media.keepTurns };
        const outcome = await budgetFor(key, scope, m).compact(request, { reason: "command", signal, ...(focus ? { focus } : {}) });
        if (outcome.type === "compacted") memory?.resetEpoch(key);
        return outcome;
      } finally {
        release();
      }
    },
    appendMessage(key, message) {
      transcriptFor(key).append({ type: "message", message });
    },
    withdrawTurns(key, entryId, note) {
      transcriptFor(key).append({ type: "withdrawn", entry: entryId, ...(note === undefined ? {} : { note }), ts: clock() });
    },
    resetSession(key, reason) {
      transcriptFor(key).append({ type: "epoch", reason, ts: clock() });
      memory?.resetEpoch(key);
    },
  };
  // Runs are watched so the heap is compacted once the daemon falls quiet (memory-reducer.ts).
  const runOne = runtime.run.bind(runtime);
  runtime.run = (req) => reducer.whileRunning(() => runOne(req));
  return runtime;
}
