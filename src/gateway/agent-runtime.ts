// Wires the agent from the configuration: the model client, the tools and the transcripts.
// The gateway and the one-shot CLI both run sessions through this.
import type { AgentEventSink } from "../agent/events.ts";
import type { RunResult } from "../agent/loop.ts";
import type { Scope, UserMessage } from "../agent/messages.ts";
import { createAnthropicModelClient, type ModelClient } from "../agent/model-client.ts";
import { runSession } from "../agent/session.ts";
import { noSteering, type SteeringSource } from "../agent/steering.ts";
import { buildSystemPrompt } from "../agent/system-prompt.ts";
import { ToolSet } from "../agent/tool.ts";
import { scopePermission } from "../agent/tool-policy.ts";
import { createWorkspaceTools } from "../agent/tools/index.ts";
import { Transcript } from "../agent/transcript.ts";
import type { Logger } from "../log.ts";
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
  run(req: SessionRunRequest): Promise<RunResult>;
}

export function createAgentRuntime(config: Config, home: string, log: Logger, model?: ModelClient): AgentRuntime {
  if (!model && !config.model.apiKey && !config.model.baseUrl) throw new MissingApiKeyError(homePaths(home).config);
  const paths = homePaths(home);
  const client =
    model ??
    createAnthropicModelClient({
      models: [config.model.name, ...config.model.fallbacks],
      apiKey: config.model.apiKey,
      baseURL: config.model.baseUrl,
      log: log.child({ component: "model" }),
    });
  const tools = new ToolSet(createWorkspaceTools({ execTimeoutMs: config.tools.exec.timeoutMs }), scopePermission(config.tools.shared.allow));
  const transcripts = new Map<string, Transcript>();
  const transcriptFor = (key: string) => {
    let t = transcripts.get(key);
    if (!t) {
      t = Transcript.open(paths.sessionFile(key), key, log);
      transcripts.set(key, t);
    }
    return t;
  };

  return {
    model: client,
    run: (req) =>
      runSession({ model: client, tools, clock: Date.now, log }, transcriptFor(req.key), {
        scope: req.scope,
        workspace: config.workspace,
        system: buildSystemPrompt({ scope: req.scope }),
        input: req.input,
        maxTurns: config.agent.maxTurns,
        maxTokens: config.model.maxTokens,
        signal: req.signal,
        steering: req.steering ?? noSteering,
        emit: req.emit,
      }),
  };
}
