// Tool results are the one way text from outside (files, commands) enters the transcript and
// the model request: a registered secret in them is replaced before either sees it.
import { describe, expect, it } from "vitest";
import { z } from "zod";
import type { AgentEvent } from "../../src/agent/events.ts";
import { noSteering } from "../../src/agent/steering.ts";
import { defineTool, ToolSet } from "../../src/agent/tool.ts";
import { DoomLoopGuard, runToolCalls } from "../../src/agent/tool-runner.ts";
import { registerSecret, silentLogger } from "../../src/process/log.ts";

const SECRET = "sk-ant-tool-runner-secret-5566778899";
registerSecret(SECRET);

const leaky = defineTool({
  name: "leaky",
  description: "returns what it was given, plus a secret",
  input: z.object({ text: z.string() }),
  readOnly: true,
  execute: async (input) => ({ content: `${input.text} KEY=${SECRET}\n${"x".repeat(100)}` }),
});

describe("tool results", () => {
  it("carry [redacted] instead of a registered secret, and so does the progress summary", async () => {
    const events: AgentEvent[] = [];
    const { results } = await runToolCalls(
      [{ type: "tool_call", id: "t1", name: "leaky", input: { text: `echo ${SECRET}` } }],
      {
        tools: new ToolSet([leaky]),
        scope: "main",
        workspace: "/nonexistent",
        sessionKey: "main",
        signal: new AbortController().signal,
        steering: noSteering,
        emit: (e) => events.push(e),
        log: silentLogger,
        clock: () => 0,
      },
      new DoomLoopGuard(),
    );
    expect(results.map((r) => r.content)).toEqual([`echo [redacted] KEY=[redacted]\n${"x".repeat(100)}`]);
    expect(JSON.stringify(events)).not.toContain(SECRET);
  });
});
