// Wires the agent from the configuration: the model client, the tools, memory and the
// transcripts. The gateway runs every session through this.
import type { AgentEventSink } from "../agent/events.ts";
import type { RunResult } from "../agent/loop.ts";
import type { Scope, UserMessage } from "../agent/messages.ts";
import { createAnthropicModelClient, type ModelClient } from "../agent/model-client.ts";
import { runSession } from "../agent/session.ts";
import { noSteering, type SteeringSource } from "../agent/steering.ts";
import { buildSystemPrompt } from "../agent/system-prompt.ts";
import { ToolSet, type Tool } from "../agent/tool.ts";
import { scopePermission } from "../agent/tool-policy.ts";
import { createWorkspaceTools } from "../agent/tools/index.ts";
import { Transcript } from "../agent/transcript.ts";
import type { Logger } from "../log.ts";
import type { MemoryService } from "../memory/memory.ts";
import { memoryScopeFor } from "../memory/visibility.ts";
import type { Config } from "./config.ts";
import { homePaths } from "./home.ts";

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
}

export interface AgentRuntime {
  readonly model: ModelClient;
  readonly memory: MemoryService | null;
  run(req: SessionRunRequest): Promise<RunResult>;
  /** /new, /reset: the model's view of the session starts empty; the transcript keeps the past. */
  resetSession(key: string, reason: string): void;
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
      log: log.child({ component: "model" }),
    });
  const tools = new ToolSet(
    [...createWorkspaceTools({ execTimeoutMs: config.tools.exec.timeoutMs }), ...(memory?.tools() ?? []), ...(opts.extraTools ?? [])],
    scopePermission(config.tools.shared.allow),
  );
  const transcripts = new Map<string, Transcript>();
  const transcriptFor = (key: string) => {
    let t = transcripts.get(key);
    if (!t) {
      t = Transcript.open(paths.sessionFile(key), key, log, clock);
      transcripts.set(key, t);
    }
    return t;
  };

  return {
    model,
    memory,
    run(req) {
      const context = memory?.context(req.key, memoryScopeFor(req.scope, req.key), clock());
      return runSession({ model, tools, clock, log }, transcriptFor(req.key), {
        scope: req.scope,
        workspace: config.workspace,
        system: buildSystemPrompt({ scope: req.scope, ...(context ? { context } : {}) }),
        input: req.input,
        maxTurns: config.agent.maxTurns,
        maxTokens: config.model.maxTokens,
        signal: req.signal,
        steering: req.steering ?? noSteering,
        emit: req.emit,
      });
    },
    resetSession(key, reason) {
      transcriptFor(key).append({ type: "epoch", reason, ts: clock() });
      memory?.resetEpoch(key);
    },
  };
}
