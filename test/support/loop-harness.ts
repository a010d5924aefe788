// Builds a real agent loop wired to the fake model server, with a recording event sink.
import { mkdtempSync, realpathSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { AgentEvent } from "../../src/agent/events.ts";
import { runAgentLoop, type RunResult, type RunSpec } from "../../src/agent/loop.ts";
import type { Message, Scope } from "../../src/agent/messages.ts";
import { createAnthropicModelClient } from "../../src/agent/providers/anthropic/client.ts";
import { noSteering } from "../../src/agent/steering.ts";
import { ToolSet, type Tool } from "../../src/agent/tool.ts";
import { scopePermission } from "../../src/agent/tool-policy.ts";
import { silentLogger } from "../../src/process/log.ts";
import type { FakeModel } from "./fake-model.ts";

export interface Harness {
  workspace: string;
  events: AgentEvent[];
  recorded: Message[];
  run(text: string, spec?: Partial<RunSpec>): Promise<RunResult>;
  cleanup(): void;
}

export function loopHarness(fake: FakeModel, tools: Tool[], opts: { scope?: Scope; sharedAllow?: string[] } = {}): Harness {
  const workspace = realpathSync(mkdtempSync(join(tmpdir(), "hearth-loop-")));
  const events: AgentEvent[] = [];
  const recorded: Message[] = [];
  const model = createAnthropicModelClient({
    models: ["test-model"],
    apiKey: "test-key",
    baseURL: fake.url,
    log: silentLogger,
    sleep: async () => {},
  });
  const toolSet = new ToolSet(tools, scopePermission(opts.sharedAllow));
  return {
    workspace,
    events,
    recorded,
    run: (text, spec = {}) =>
      runAgentLoop(
        { model, tools: toolSet, clock: Date.now, log: silentLogger },
        {
          sessionKey: "test",
          scope: opts.scope ?? "main",
          workspace,
          system: [{ text: "You are a test.", cacheBreakpoint: true }],
          history: [],
          input: [{ role: "user", kind: "message", text, ts: Date.now() }],
          maxTurns: 25,
          maxTokens: 1024,
          signal: new AbortController().signal,
          steering: noSteering,
          emit: (e) => events.push(e),
          record: (m) => recorded.push(m),
          ...spec,
        },
      ),
    cleanup: () => rmSync(workspace, { recursive: true, force: true }),
  };
}
