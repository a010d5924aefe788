import { describe, expect, it } from "vitest";
import { chooseCut, renderForSummary, SHRUNK_TOOL_RESULT_CHARS, shrinkToolResults } from "../../src/agent/compaction.ts";
import type { Message } from "../../src/agent/messages.ts";

const usage = { inputTokens: 0, outputTokens: 0, cacheReadTokens: 0, cacheCreationTokens: 0 };
const user = (text: string): Message => ({ role: "user", kind: "message", text, ts: 0 });
const call = (id: string): Message => ({ role: "assistant", content: [{ type: "tool_call", id, name: "exec", input: { command: "ls" } }], stop: "tool_use", model: "m", usage, ts: 0 });
const result = (id: string, content: string): Message => ({ role: "tool_result", toolCallId: id, toolName: "exec", content, isError: false, ts: 0 });
const answer = (text: string): Message => ({ role: "assistant", content: [{ type: "text", text }], stop: "end_turn", model: "m", usage, ts: 0 });

/** A conversation of `n` exchanges, each: user, tool call, result, answer. */
const conversation = (n: number): Message[] => Array.from({ length: n }, (_, i) => [user(`q${i}`), call(`t${i}`), result(`t${i}`, "x".repeat(5_000)), answer(`a${i}`)]).flat();
const tokens = (m: Message) => JSON.stringify(m).length / 4;

describe("compaction", () => {
  it("shrinks every tool result but the last three, keeping head and tail", () => {
    const { view, shrunk } = shrinkToolResults(conversation(5));
    expect(shrunk).toBe(2);
    const results = view.filter((m) => m.role === "tool_result") as Array<{ content: string }>;
    expect(results.slice(0, 2).every((r) => r.content.length <= SHRUNK_TOOL_RESULT_CHARS && r.content.includes("characters cut"))).toBe(true);
    expect(results.slice(2).every((r) => r.content.length === 5_000)).toBe(true);
  });

  it("cuts only before a user message, so no tool call is separated from its result", () => {
    const view = conversation(10);
    for (const keep of [1, 500, 2_000, 4_000, 8_000]) {
      const cut = chooseCut(view, keep, tokens);
      expect(cut).toBeGreaterThan(0);
      expect(view[cut]!.role).toBe("user");
      const kept = view.slice(cut).reduce((n, m) => n + tokens(m), 0);
      expect(kept).toBeGreaterThanOrEqual(Math.min(keep, 1));
    }
  });

  it("returns 0 when everything fits in the verbatim tail", () => {
    expect(chooseCut(conversation(2), 1_000_000, tokens)).toBe(0);
  });

  it("renders the older part for the summariser with long output clipped and the newest part kept", () => {
    const text = renderForSummary(conversation(3), 100_000);
    expect(text).toContain("USER: q0");
    expect(text).toContain("TOOL RESULT exec:");
    expect(text.length).toBeLessThan(5_000);
    const clipped = renderForSummary(conversation(30), 2_000);
    expect(clipped.startsWith("(the oldest part is omitted)")).toBe(true);
    expect(clipped).toContain("a29");
  });
});
