import { describe, expect, it } from "vitest";
import type { Message } from "../../../src/agent/messages.ts";
import { MISSING_RESULT } from "../../../src/agent/providers/model.ts";
import { toApiMessages, toApiParams } from "../../../src/agent/providers/anthropic/request.ts";

const user = (text: string): Message => ({ role: "user", kind: "message", text, ts: 1 });
const usage = { inputTokens: 0, outputTokens: 0, cacheReadTokens: 0, cacheCreationTokens: 0 };
const assistant = (content: Extract<Message, { role: "assistant" }>["content"], stop: "end_turn" | "tool_use" | "aborted" = "end_turn"): Message => ({
  role: "assistant",
  content,
  stop,
  model: "m",
  usage,
  ts: 1,
});
const result = (id: string, content: string, isError = false): Message => ({ role: "tool_result", toolCallId: id, toolName: "exec", content, isError, ts: 1 });

describe("toApiMessages", () => {
  it("puts tool results before steering text in one user message, and marks the last block for caching", () => {
    const api = toApiMessages([
      user("hi"),
      assistant([{ type: "tool_call", id: "t1", name: "exec", input: { command: "ls" } }], "tool_use"),
      result("t1", "a.txt"),
      user("also check b"),
    ]);
    expect(api).toHaveLength(3);
    expect(api[2]).toEqual({
      role: "user",
      content: [
        { type: "tool_result", tool_use_id: "t1", content: "a.txt" },
        { type: "text", text: "also check b", cache_control: { type: "ephemeral" } },
      ],
    });
  });

  it("gives a tool call that never got a result a synthetic error result", () => {
    const api = toApiMessages([
      user("hi"),
      assistant([{ type: "tool_call", id: "t1", name: "exec", input: {} }], "tool_use"),
      user("next message"),
    ]);
    const blocks = api[2]!.content as unknown as Array<Record<string, unknown>>;
    expect(blocks[0]).toMatchObject({ type: "tool_result", tool_use_id: "t1", content: MISSING_RESULT, is_error: true });
    expect(blocks[1]).toMatchObject({ type: "text", text: "next message" });
  });

  it("drops results whose call is not in view and keeps the conversation starting with a user turn", () => {
    const api = toApiMessages([result("gone", "x"), assistant([{ type: "text", text: "earlier answer" }]), user("hi")]);
    expect(api.map((m) => m.role)).toEqual(["user", "assistant", "user"]);
    expect(JSON.stringify(api)).not.toContain("gone");
  });

  it("marks an interrupted answer and skips empty text blocks", () => {
    const api = toApiMessages([user("hi"), assistant([{ type: "text", text: "Half an ans" }], "aborted"), user("go on")]);
    expect(api[1]!.content).toEqual([
      { type: "text", text: "Half an ans" },
      { type: "text", text: "[interrupted]" },
    ]);
    const empty = toApiMessages([user("hi"), assistant([{ type: "text", text: "  " }], "aborted"), user("again")]);
    expect(empty).toHaveLength(1);
    expect(empty[0]!.content).toHaveLength(2);
  });

  it("merges consecutive user messages into one", () => {
    const api = toApiMessages([user("a"), user("b")]);
    expect(api).toHaveLength(1);
    expect((api[0]!.content as unknown[]).length).toBe(2);
  });
});

describe("toApiParams", () => {
  it("caches the system prompt at its breakpoint and omits tools when there are none", () => {
    const p = toApiParams({ system: [{ text: "S", cacheBreakpoint: true }], tools: [], messages: [user("hi")], maxTokens: 100 }, "model-x");
    expect(p.system).toEqual([{ type: "text", text: "S", cache_control: { type: "ephemeral" } }]);
    expect(p).not.toHaveProperty("tools");
    expect(p.model).toBe("model-x");
  });

  it("puts a 1-hour TTL on the system breakpoints when asked, and keeps the last message's at 5 minutes", () => {
    const req = { system: [{ text: "S", cacheBreakpoint: true }, { text: "H", cacheBreakpoint: true }], tools: [], messages: [user("tick")], maxTokens: 100 };
    const hour = toApiParams({ ...req, cacheTtl: "1h" }, "m");
    expect(hour.system).toEqual([
      { type: "text", text: "S", cache_control: { type: "ephemeral", ttl: "1h" } },
      { type: "text", text: "H", cache_control: { type: "ephemeral", ttl: "1h" } },
    ]);
    expect(hour.messages).toEqual([{ role: "user", content: [{ type: "text", text: "tick", cache_control: { type: "ephemeral" } }] }]);
    const chat = toApiParams(req, "m");
    expect(chat.system).toEqual([
      { type: "text", text: "S", cache_control: { type: "ephemeral" } },
      { type: "text", text: "H", cache_control: { type: "ephemeral" } },
    ]);
  });
});
