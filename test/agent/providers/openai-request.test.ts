import { describe, expect, it } from "vitest";
import type { Message } from "../../../src/agent/messages.ts";
import { MISSING_RESULT, type ModelRequest } from "../../../src/agent/providers/model.ts";
import { toChatMessages, toChatParams } from "../../../src/agent/providers/openai/request.ts";

const user = (text: string, kind: "message" | "steer" = "message"): Message => ({ role: "user", kind, text, ts: 1 });
const usage = { inputTokens: 0, outputTokens: 0, cacheReadTokens: 0, cacheCreationTokens: 0 };
const assistant = (content: Extract<Message, { role: "assistant" }>["content"], stop: "end_turn" | "tool_use" | "aborted" = "end_turn"): Message => ({ role: "assistant", content, stop, model: "m", usage, ts: 1 });
const call = (id: string, command: string) => ({ type: "tool_call" as const, id, name: "exec", input: { command } });
const result = (id: string, content: string, isError = false): Message => ({ role: "tool_result", toolCallId: id, toolName: "exec", content, isError, ts: 1 });
const exec = { name: "exec", description: "Run.", input_schema: { type: "object" as const } };
const req = (messages: Message[], tools = [exec]): ModelRequest => ({ system: [{ text: "System A.", cacheBreakpoint: true }], tools, messages, maxTokens: 100 });

/** What the API checks: every assistant tool call is answered by `tool` messages right after it, in order. */
function assertValid(messages: ReturnType<typeof toChatMessages>): void {
  for (const [i, m] of messages.entries()) {
    if (m.role !== "assistant" || !m.tool_calls) continue;
    const answers = messages.slice(i + 1, i + 1 + m.tool_calls.length);
    expect(answers.map((a) => (a.role === "tool" ? a.tool_call_id : a.role))).toEqual(m.tool_calls.map((c) => c.id));
  }
}

describe("toChatMessages", () => {
  const transcript: Message[] = [
    user("check the disk"),
    assistant([{ type: "thinking", thinking: "hmm", signature: "sig" }, { type: "text", text: "Looking." }, call("c1", "df -h"), call("c2", "du -sh ~")], "tool_use"),
    result("c1", "/dev/sda1 50%"),
    user("also check memory", "steer"),
    result("c2", "", true),
    assistant([call("c3", "free -m")], "tool_use"),
    result("c3", "Mem: 8G"),
    assistant([{ type: "text", text: "Disk is half full; 8 GB memory." }]),
    user("thanks"),
  ];

  it("converts tool calls, results and steering in order, every call answered", () => {
    const out = toChatMessages(req(transcript), { vision: false });
    expect(out).toEqual([
      { role: "system", content: "System A." },
      { role: "user", content: "check the disk" },
      {
        role: "assistant",
        content: "Looking.",
        tool_calls: [
          { id: "c1", type: "function", function: { name: "exec", arguments: '{"command":"df -h"}' } },
          { id: "c2", type: "function", function: { name: "exec", arguments: '{"command":"du -sh ~"}' } },
        ],
      },
      { role: "tool", tool_call_id: "c1", content: "/dev/sda1 50%" },
      { role: "tool", tool_call_id: "c2", content: "Error: (no output)" },
      { role: "user", content: "also check memory" },
      { role: "assistant", content: null, tool_calls: [{ id: "c3", type: "function", function: { name: "exec", arguments: '{"command":"free -m"}' } }] },
      { role: "tool", tool_call_id: "c3", content: "Mem: 8G" },
      { role: "assistant", content: "Disk is half full; 8 GB memory." },
      { role: "user", content: "thanks" },
    ]);
    assertValid(out);
  });

  it("answers a call that never finished, drops a result without its call, and marks an interrupted answer", () => {
    const out = toChatMessages(
      req([result("gone", "x"), user("go"), assistant([{ type: "text", text: "Half" }, call("c1", "sleep 9")], "aborted"), user("stop that")]),
      { vision: false },
    );
    expect(out).toEqual([
      { role: "system", content: "System A." },
      { role: "user", content: "go" },
      { role: "assistant", content: "Half\n\n[interrupted]", tool_calls: [{ id: "c1", type: "function", function: { name: "exec", arguments: '{"command":"sleep 9"}' } }] },
      { role: "tool", tool_call_id: "c1", content: `Error: ${MISSING_RESULT}` },
      { role: "user", content: "stop that" },
    ]);
    assertValid(out);
  });

  it("carries earlier tool use as text when the request has no tools", () => {
    const out = toChatMessages(req(transcript.slice(0, 5), []), { vision: false });
    expect(out).toEqual([
      { role: "system", content: "System A." },
      { role: "user", content: "check the disk" },
      { role: "assistant", content: 'Looking.\n\n[called tool exec with {"command":"df -h"}]\n\n[called tool exec with {"command":"du -sh ~"}]' },
      { role: "user", content: "[result of exec: /dev/sda1 50%]\n\n[result of exec (error): (no output)]\n\nalso check memory" },
    ]);
    expect(out.some((m) => m.role === "tool")).toBe(false);
  });

  it("merges assistant neighbours into one message", () => {
    const out = toChatMessages(req([user("a"), assistant([{ type: "text", text: "one" }]), assistant([call("c1", "ls")], "tool_use"), result("c1", "f")]), { vision: false });
    expect(out.slice(2)).toEqual([
      { role: "assistant", content: "one", tool_calls: [{ id: "c1", type: "function", function: { name: "exec", arguments: '{"command":"ls"}' } }] },
      { role: "tool", tool_call_id: "c1", content: "f" },
    ]);
  });
});

describe("toChatParams", () => {
  it("streams with usage, names the output limit as the endpoint wants, and lists tools as functions", () => {
    const p = toChatParams(req([user("hi")]), "gpt-5-mini", { vision: false, maxTokensField: "max_completion_tokens" });
    expect(p).toEqual({
      model: "gpt-5-mini",
      messages: [{ role: "system", content: "System A." }, { role: "user", content: "hi" }],
      max_completion_tokens: 100,
      stream: true,
      stream_options: { include_usage: true },
      tools: [{ type: "function", function: { name: "exec", description: "Run.", parameters: { type: "object" } } }],
    });
  });
});
