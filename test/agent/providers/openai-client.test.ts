import { afterEach, beforeEach, describe, expect, it } from "vitest";
import type { ModelEvent, ModelRequest } from "../../../src/agent/providers/model.ts";
import { ModelRegistry, type ProviderSettings } from "../../../src/agent/providers/registry.ts";
import { silentLogger } from "../../../src/process/log.ts";
import { lastUserContent, startFakeModel, text, type FakeModel } from "../../support/fake-model.ts";
import { chatMessages, reply, startFakeOpenAI, type FakeOpenAI } from "../../support/fake-openai.ts";

let oai: FakeOpenAI;
let anth: FakeModel;
beforeEach(async () => {
  oai = await startFakeOpenAI({ noToolModels: ["gemma"] });
  anth = await startFakeModel();
});
afterEach(async () => {
  await oai.close();
  await anth.close();
});

const execTool = { name: "exec", description: "Run a command.", input_schema: { type: "object" as const, properties: { command: { type: "string" } } } };
const request = (tools = [execTool]): ModelRequest => ({
  system: [{ text: "You are a test.", cacheBreakpoint: true }],
  tools,
  messages: [{ role: "user", kind: "message", text: "hi", ts: 1 }],
  maxTokens: 256,
});

function registry(primary: string, fallbacks: string[] = [], extra: Record<string, ProviderSettings> = {}) {
  const delays: number[] = [];
  const r = new ModelRegistry({
    sleep: async (ms) => void delays.push(ms),
    random: () => 0.5, // jitter factor exactly 1
    providers: { local: { type: "openai", baseUrl: oai.baseUrl, apiKey: "oai-key", models: {} }, anthropic: { type: "anthropic", baseUrl: anth.url, apiKey: "ant-key", models: {} }, ...extra },
    primary,
    fallbacks,
    contextWindow: 100_000,
    maxTokens: 1000,
    log: silentLogger,
  });
  return { r, delays };
}

async function call(name: string, req = request(), fallbacks: string[] = [], signal = new AbortController().signal) {
  const { r, delays } = registry(name, fallbacks);
  const c = r.clientFor();
  const events: ModelEvent[] = [];
  const result = await c.stream(req, { signal, onEvent: (e) => events.push(e) });
  const shown = events.reduce((acc, e) => (e.type === "text_delta" ? acc + e.text : e.type === "text_reset" ? e.text : acc), "");
  return { result, events, shown, r, delays };
}

describe("OpenAI-compatible client", () => {
  it("streams text and reads usage from the final chunk, cached tokens apart", async () => {
    oai.enqueue(reply("Hello from a local model.", { chunkSize: 4, usage: { prompt_tokens: 120, completion_tokens: 7, cached_tokens: 100 } }));
    const { result, events, shown } = await call("local/llama3.2");
    expect(shown).toBe("Hello from a local model.");
    expect(events.filter((e) => e.type === "text_delta")).toHaveLength(7);
    expect(result).toMatchObject({ type: "ok", message: { role: "assistant", content: [{ type: "text", text: "Hello from a local model." }], stop: "end_turn", model: "llama3.2" } });
    expect(result.type === "ok" && result.message.usage).toEqual({ inputTokens: 20, cacheReadTokens: 100, cacheCreationTokens: 0, outputTokens: 7 });
    const body = oai.requests[0]!.body;
    expect(body).toMatchObject({ model: "llama3.2", stream: true, stream_options: { include_usage: true }, max_tokens: 256 });
    expect(body.tools).toEqual([{ type: "function", function: { name: "exec", description: "Run a command.", parameters: execTool.input_schema } }]);
    expect(oai.requests[0]!.headers.authorization).toBe("Bearer oai-key");
  });

  it("assembles several tool calls whose arguments arrive in pieces", async () => {
    oai.enqueue({ type: "completion", text: "Checking.", calls: [{ name: "exec", arguments: { command: "ls -la /tmp" } }, { name: "read_file", arguments: { path: "notes/today.md" } }], chunkSize: 3 });
    const { result } = await call("local/llama3.2");
    expect(result.type === "ok" && result.message.content).toEqual([
      { type: "text", text: "Checking." },
      { type: "tool_call", id: "call_1", name: "exec", input: { command: "ls -la /tmp" } },
      { type: "tool_call", id: "call_2", name: "read_file", input: { path: "notes/today.md" } },
    ]);
    expect(result.type === "ok" && result.message.stop).toBe("tool_use");
  });

  it("assembles whole tool calls from a server that sends no index (older Ollama)", async () => {
    oai.enqueue({ type: "completion", calls: [{ name: "exec", arguments: { command: "ls" } }, { name: "exec", arguments: { command: "pwd" } }], wholeCallsWithoutIndex: true });
    const { result } = await call("local/llama3.2");
    expect(result.type === "ok" && result.message.content).toEqual([
      { type: "tool_call", id: "call_1", name: "exec", input: { command: "ls" } },
      { type: "tool_call", id: "call_2", name: "exec", input: { command: "pwd" } },
    ]);
  });

  it("maps finish_reason length to max_tokens and keeps cut-off arguments for validation", async () => {
    oai.enqueue({ type: "completion", calls: [{ name: "exec", arguments: '{"command": "ec' }], finishReason: "length" });
    const { result } = await call("local/llama3.2");
    expect(result.type === "ok" && result.message.stop).toBe("max_tokens");
    expect(result.type === "ok" && result.message.content).toEqual([{ type: "tool_call", id: "call_1", name: "exec", input: { _unparsed: '{"command": "ec' } }]);
  });

  it("retries a 429 after its retry-after, then answers", async () => {
    oai.enqueue({ type: "http_error", status: 429, headers: { "retry-after": "0" }, message: "Rate limit reached" }, reply("after the wait"));
    const { result, events } = await call("local/llama3.2");
    expect(result.type === "ok" && result.message.content).toEqual([{ type: "text", text: "after the wait" }]);
    expect(events.filter((e) => e.type === "retry")).toMatchObject([{ attempt: 1, delayMs: 0, error: { kind: "rate_limited", status: 429 } }]);
    expect(oai.requests).toHaveLength(2);
  });

  it("retries a mid-stream error without showing the same text twice", async () => {
    oai.enqueue(reply("Partial answer that continues.", { chunkSize: 5, failAfterChars: { chars: 10 } }));
    oai.enqueue(reply("Partial answer that continues.", { chunkSize: 5 }));
    const { result, events, shown, delays } = await call("local/llama3.2");
    expect(shown).toBe("Partial answer that continues.");
    expect(events.filter((e) => e.type === "text_reset")).toHaveLength(0);
    expect(events.filter((e) => e.type === "retry")).toMatchObject([{ attempt: 1, error: { kind: "server" } }]);
    expect(delays).toEqual([2000]);
    expect(result.type).toBe("ok");
  });

  it("says which key to set when the provider refuses it", async () => {
    oai.enqueue({ type: "http_error", status: 401, message: "Incorrect API key provided." });
    const { result } = await call("local/llama3.2");
    expect(result.type === "error" && result.error).toMatchObject({ kind: "auth", status: 401 });
    expect(result.type === "error" && result.error.message).toBe("The model API rejected the API key (HTTP 401). Set a valid key in providers.local.apiKey in config.json, then restart Hearth.");
  });

  it("learns from the first refusal that a model cannot call tools, and runs it without them", async () => {
    oai.enqueue(reply("I can only talk."), reply("Still talking."));
    const { r } = registry("local/gemma");
    const c = r.clientFor();
    const first = await c.stream(request(), { signal: new AbortController().signal, onEvent: () => {} });
    expect(first.type === "ok" && first.message.content).toEqual([{ type: "text", text: "I can only talk." }]);
    expect(oai.requests.map((q) => q.body.tools?.length ?? 0)).toEqual([1, 0]);
    expect(c.capabilities?.()).toEqual({ tools: false, vision: false, toolsOffReason: "The model API rejected the request (HTTP 400): registry.ollama.ai/library/gemma:latest does not support tools" });
    await c.stream(request(), { signal: new AbortController().signal, onEvent: () => {} });
    expect(oai.requests.map((q) => q.body.tools?.length ?? 0)).toEqual([1, 0, 0]);
  });

  it("never offers tools to a model configured with tools: false", async () => {
    oai.enqueue(reply("ok"));
    const { r } = registry("plain/tiny", [], { plain: { type: "openai", baseUrl: oai.baseUrl, models: { tiny: { tools: false } } } });
    const c = r.clientFor();
    await c.stream(request(), { signal: new AbortController().signal, onEvent: () => {} });
    expect(oai.requests[0]!.body.tools).toBeUndefined();
    expect(c.capabilities?.()).toEqual({ tools: false, vision: false, toolsOffReason: "config" });
  });

  it("falls back from an OpenAI-compatible model to an Anthropic one, and from Anthropic back to it", async () => {
    oai.enqueue({ type: "http_error", status: 404, message: "model not found" });
    anth.enqueue(text("Claude here."));
    const a = await call("local/llama3.2", request(), ["claude-haiku-5"]);
    expect(a.result.type === "ok" && a.result.message.content).toEqual([{ type: "text", text: "Claude here." }]);
    expect(a.events.filter((e) => e.type === "fallback")).toMatchObject([{ from: "local/llama3.2", to: "claude-haiku-5", error: { kind: "not_found" } }]);
    expect(anth.requests[0]!.body.model).toBe("claude-haiku-5");

    anth.enqueue({ type: "http_error", status: 404 });
    oai.enqueue(reply("Llama here."));
    const b = await call("claude-haiku-5", request(), ["local/llama3.2"]);
    expect(b.result.type === "ok" && b.result.message.content).toEqual([{ type: "text", text: "Llama here." }]);
    expect(b.events.filter((e) => e.type === "fallback")).toMatchObject([{ from: "claude-haiku-5", to: "local/llama3.2" }]);
    expect(chatMessages(oai.requests[1]!).at(-1)).toEqual({ role: "user", content: "hi" });
    expect(lastUserContent(anth.requests[1]!)).toHaveLength(1);
  });

  it("skips a fallback that cannot call tools when the request offers tools", async () => {
    oai.enqueue({ type: "http_error", status: 404 });
    anth.enqueue(text("Claude here."));
    const { r } = registry("local/llama3.2", ["plain/tiny", "claude-haiku-5"], { plain: { type: "openai", baseUrl: oai.baseUrl, models: { tiny: { tools: false } } } });
    const events: ModelEvent[] = [];
    const result = await r.clientFor().stream(request(), { signal: new AbortController().signal, onEvent: (e) => events.push(e) });
    expect(result.type).toBe("ok");
    expect(oai.requests).toHaveLength(1);
    expect(events.filter((e) => e.type === "fallback")).toMatchObject([{ from: "local/llama3.2", to: "claude-haiku-5" }]);
  });

  it("stops a running stream promptly and returns the text shown so far", async () => {
    oai.enqueue(reply("one two three four five six", { chunkSize: 4, chunkDelayMs: 200 }));
    const controller = new AbortController();
    const { r } = registry("local/llama3.2");
    let shown = "";
    const result = await r.clientFor().stream(request(), {
      signal: controller.signal,
      onEvent: (e) => {
        if (e.type === "text_delta") shown += e.text;
        if (shown.length >= 8) controller.abort();
      },
    });
    expect(result).toEqual({ type: "error", error: { kind: "aborted", model: "llama3.2", message: "The request was stopped." }, partial: [{ type: "text", text: "one two " }] });
  });
});

describe("a fallback that refuses tools", () => {
  it("is skipped for the rest of the process, and the next fallback answers", async () => {
    oai.enqueue({ type: "http_error", status: 404 });
    anth.enqueue(text("Claude here."), text("Claude again."));
    const { r } = registry("local/llama3.2", ["local/gemma", "claude-haiku-5"]);
    const events: ModelEvent[] = [];
    const c = r.clientFor();
    const result = await c.stream(request(), { signal: new AbortController().signal, onEvent: (e) => events.push(e) });
    expect(result.type === "ok" && result.message.content).toEqual([{ type: "text", text: "Claude here." }]);
    expect(events.filter((e) => e.type === "fallback")).toMatchObject([{ from: "local/llama3.2", to: "local/gemma" }, { from: "local/llama3.2", to: "claude-haiku-5", error: { kind: "not_found" } }]);
    expect(oai.requests.map((q) => q.body.model)).toEqual(["llama3.2", "gemma"]);

    oai.enqueue({ type: "http_error", status: 404 });
    await c.stream(request(), { signal: new AbortController().signal, onEvent: () => {} });
    expect(oai.requests.map((q) => q.body.model)).toEqual(["llama3.2", "gemma", "llama3.2"]);
    expect(anth.requests).toHaveLength(2);
  });
});
