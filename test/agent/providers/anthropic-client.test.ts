import { afterEach, beforeEach, describe, expect, it } from "vitest";
import type { ModelEvent, ModelRequest } from "../../../src/agent/providers/model.ts";
import { defaultRetryPolicy } from "../../../src/agent/providers/policy.ts";
import { createAnthropicModelClient } from "../../../src/agent/providers/anthropic/client.ts";
import { silentLogger } from "../../../src/process/log.ts";
import { freePort } from "../../support/telegram-emulator.ts";
import { startFakeModel, text, toolCall, type FakeModel } from "../../support/fake-model.ts";

let fake: FakeModel;
beforeEach(async () => {
  fake = await startFakeModel();
});
afterEach(async () => {
  await fake.close();
});

const request: ModelRequest = {
  system: [{ text: "You are a test.", cacheBreakpoint: true }],
  tools: [],
  messages: [{ role: "user", kind: "message", text: "hi", ts: 1 }],
  maxTokens: 256,
};

function client(opts: { models?: string[]; idleTimeoutMs?: number; baseURL?: string } = {}) {
  const delays: number[] = [];
  const c = createAnthropicModelClient({
    models: opts.models ?? ["primary"],
    apiKey: "test-key",
    baseURL: opts.baseURL ?? fake.url,
    log: silentLogger,
    random: () => 0.5, // jitter factor exactly 1
    sleep: async (ms) => {
      delays.push(ms);
    },
    ...(opts.idleTimeoutMs ? { retry: { idleTimeoutMs: opts.idleTimeoutMs } } : {}),
  });
  return { c, delays };
}

async function call(c: ReturnType<typeof client>["c"], signal = new AbortController().signal) {
  const events: ModelEvent[] = [];
  const result = await c.stream(request, { signal, onEvent: (e) => events.push(e) });
  const shown = events.reduce((acc, e) => (e.type === "text_delta" ? acc + e.text : e.type === "text_reset" ? e.text : acc), "");
  return { result, events, shown };
}

describe("model client: streaming", () => {
  it("streams text deltas and accounts cache tokens in usage", async () => {
    fake.enqueue(text("Hello there, owner.", { chunkSize: 5, usage: { input_tokens: 12, cache_read_input_tokens: 900, cache_creation_input_tokens: 40, output_tokens: 7 } }));
    const { c } = client();
    const { result, events, shown } = await call(c);
    expect(events.filter((e) => e.type === "text_delta").length).toBeGreaterThan(1);
    expect(shown).toBe("Hello there, owner.");
    expect(result.type).toBe("ok");
    if (result.type !== "ok") return;
    expect(result.message.usage).toEqual({ inputTokens: 12, outputTokens: 7, cacheReadTokens: 900, cacheCreationTokens: 40 });
    expect(result.message.stop).toBe("end_turn");
  });

  it("returns tool calls with parsed input", async () => {
    fake.enqueue(toolCall("exec", { command: "echo hi" }, { chunkSize: 4 }));
    const { result } = await call(client().c);
    expect(result.type === "ok" && result.message.content).toEqual([{ type: "tool_call", id: "toolu_1", name: "exec", input: { command: "echo hi" } }]);
    expect(result.type === "ok" && result.message.stop).toBe("tool_use");
  });

  it("sends the request with the API key as a bearer token and no SDK-side retries", async () => {
    fake.enqueue({ type: "http_error", status: 500 });
    const { c } = client();
    await c.stream(request, { signal: AbortSignal.timeout(5000), onEvent: () => {} });
    expect(fake.requests[0]!.headers.authorization).toBe("Bearer test-key");
    expect(fake.requests[0]!.headers["x-stainless-retry-count"] ?? "0").toBe("0");
  });
});

describe("model client: retries", () => {
  it("honours retry-after on 429", async () => {
    fake.enqueue({ type: "http_error", status: 429, headers: { "retry-after": "3" } }, text("ok"));
    const { c, delays } = client();
    const { result } = await call(c);
    expect(result.type).toBe("ok");
    expect(delays).toEqual([3000]);
    expect(fake.requests).toHaveLength(2);
  });

  it("retries 5xx and 529 with exponential backoff from 2 s", async () => {
    fake.enqueue({ type: "http_error", status: 500 }, { type: "http_error", status: 503 }, { type: "http_error", status: 529 }, text("finally"));
    const { c, delays } = client();
    const { result, events } = await call(c);
    expect(result.type).toBe("ok");
    expect(delays).toEqual([2000, 4000, 8000]);
    expect(events.filter((e) => e.type === "retry").map((e) => e.type === "retry" && e.error.kind)).toEqual(["server", "server", "overloaded"]);
  });

  it("caps the backoff at 30 s", async () => {
    fake.enqueue(...Array.from({ length: 4 }, () => ({ type: "http_error" as const, status: 500 })), text("ok"));
    const c = createAnthropicModelClient({
      models: ["m"], apiKey: "k", baseURL: fake.url, log: silentLogger, random: () => 0.99,
      retry: { baseDelayMs: 10_000 },
      sleep: async (ms) => void delays.push(ms),
    });
    const delays: number[] = [];
    await call(c);
    expect(Math.max(...delays)).toBeLessThanOrEqual(30_000);
    expect(delays.at(-1)).toBe(30_000);
  });

  it("retries a mid-stream overloaded_error without re-emitting text already shown", async () => {
    fake.enqueue(text("Hello world, how are you?", { chunkSize: 3, failAfterChars: { chars: 9 } }), text("Hello world, how are you?", { chunkSize: 3 }));
    const { result, events, shown } = await call(client().c);
    expect(result.type).toBe("ok");
    expect(events.some((e) => e.type === "text_reset")).toBe(false);
    const deltas = events.filter((e) => e.type === "text_delta").map((e) => (e.type === "text_delta" ? e.text : ""));
    expect(deltas.join("")).toBe("Hello world, how are you?");
    expect(shown).toBe("Hello world, how are you?");
    expect(events.find((e) => e.type === "retry")).toMatchObject({ error: { kind: "overloaded" } });
  });

  it("retries a connection dropped mid-stream", async () => {
    fake.enqueue(text("Partial answer here", { chunkSize: 4, dropAfterChars: 8 }), text("Partial answer here"));
    const { result, shown, events } = await call(client().c);
    expect(result.type).toBe("ok");
    expect(shown).toBe("Partial answer here");
    expect(events.find((e) => e.type === "retry")).toMatchObject({ error: { kind: "connection" } });
  });

  it("retries a connection reset before the response", async () => {
    fake.enqueue(text("never", { dropAfterChars: 0 }), text("ok"));
    const { result, events } = await call(client().c);
    expect(result.type).toBe("ok");
    expect(events.find((e) => e.type === "retry")).toMatchObject({ error: { kind: "connection" } });
  });

  it("replaces shown text once when a retry says something different", async () => {
    fake.enqueue(text("First version of the answer", { chunkSize: 5, failAfterChars: { chars: 10 } }), text("Second take", { chunkSize: 5 }));
    const { result, events, shown } = await call(client().c);
    expect(result.type).toBe("ok");
    expect(events.filter((e) => e.type === "text_reset")).toHaveLength(1);
    expect(shown).toBe("Second take");
  });

  it("treats a silent stream as stalled and retries it once", async () => {
    fake.enqueue({ type: "hang" }, text("awake"));
    const { result, events } = await call(client({ idleTimeoutMs: 200 }).c);
    expect(result.type).toBe("ok");
    expect(events.find((e) => e.type === "retry")).toMatchObject({ error: { kind: "stalled" } });
  });

  it.each([401, 403])("does not retry %i and says the key was rejected and where to set it", async (status) => {
    fake.enqueue({ type: "http_error", status }, text("unused"));
    const { result } = await call(client({ models: ["primary", "backup"] }).c);
    expect(fake.requests).toHaveLength(1);
    expect(result.type === "error" && result.error).toMatchObject({ kind: "auth", status });
    expect(result.type === "error" && result.error.message).toBe(
      `The model API rejected the API key (HTTP ${status}). Set a valid key in ANTHROPIC_API_KEY (in Hearth's .env, or the environment), then restart Hearth.`,
    );
  });

  it("names the address it tried when the API cannot be reached, without credentials", async () => {
    const port = await freePort(); // nothing listens there
    const { c, delays } = client({ baseURL: `http://127.0.0.1:${port}/proxy/` });
    const { result } = await call(c);
    expect(delays).toHaveLength(4); // a refused connection is retried like any connection error
    expect(result.type === "error" && result.error.kind).toBe("connection");
    const message = result.type === "error" ? result.error.message : "";
    expect(message).toMatch(new RegExp(`^Could not reach the model API at http://127\\.0\\.0\\.1:${port}/proxy \\(.*ECONNREFUSED.*\\)\\.$`));

    const withCredentials = await call(client({ baseURL: `http://hearth:pw-s3cret@127.0.0.1:${port}/` }).c);
    const text = withCredentials.result.type === "error" ? withCredentials.result.error.message : "";
    expect(text).toMatch(new RegExp(`^Could not reach the model API at http://127\\.0\\.0\\.1:${port} \\(`));
    expect(text).not.toContain("pw-s3cret");
  });

  it("reports a prompt that is too long as a context overflow, without retrying", async () => {
    fake.enqueue({ type: "http_error", status: 400, errorType: "invalid_request_error", message: "prompt is too long: 250000 tokens > 200000 maximum" });
    const { result } = await call(client().c);
    expect(fake.requests).toHaveLength(1);
    expect(result.type === "error" && result.error.kind).toBe("context_overflow");
  });

  it("moves to the fallback model after five failed attempts, then to a clear error", async () => {
    fake.setDefault({ type: "http_error", status: 529 });
    const { c, delays } = client({ models: ["primary", "backup"] });
    const { result, events } = await call(c);
    expect(fake.requests.map((r) => r.body.model)).toEqual([...Array(5).fill("primary"), ...Array(5).fill("backup")]);
    expect(delays).toHaveLength(8);
    expect(events.find((e) => e.type === "fallback")).toMatchObject({ from: "primary", to: "backup" });
    expect(result.type === "error" && result.error).toMatchObject({ kind: "overloaded", model: "backup" });
  });

  it("answers from the fallback model when the primary keeps failing", async () => {
    fake.enqueue(...Array.from({ length: 5 }, () => ({ type: "http_error" as const, status: 500 })), text("from backup"));
    const { result } = await call(client({ models: ["primary", "backup"] }).c);
    expect(result.type === "ok" && result.message.model).toBe("backup");
  });

  it("does not wait for a retry-after longer than a minute: it falls back instead", async () => {
    fake.enqueue({ type: "http_error", status: 429, headers: { "retry-after": "3600" } }, text("from backup"));
    const { c, delays } = client({ models: ["primary", "backup"] });
    const { result } = await call(c);
    expect(delays).toEqual([]);
    expect(result.type === "ok" && result.message.model).toBe("backup");
  });
});

describe("model client: stalls", () => {
  it("retries a stall once and then gives up, saying the model stopped responding, without trying the fallback", async () => {
    fake.setDefault({ type: "hang" });
    const { c, delays } = client({ models: ["primary", "backup"], idleTimeoutMs: 200 });
    const { result, events } = await call(c);
    expect(fake.requests.map((r) => r.body.model)).toEqual(["primary", "primary"]);
    expect(delays).toEqual([2000]);
    expect(events.filter((e) => e.type === "retry")).toHaveLength(1);
    expect(events.some((e) => e.type === "fallback")).toBe(false);
    expect(result.type === "error" && result.error).toEqual({
      kind: "stalled",
      model: "primary",
      message: "The model stopped responding: nothing arrived for 0.2 s, on 2 tries.",
    });
  });

  it("counts stalls across other failures and across models", async () => {
    fake.enqueue({ type: "hang" }, ...Array.from({ length: 4 }, () => ({ type: "http_error" as const, status: 500 })), { type: "hang" }, text("unused"));
    const { c } = client({ models: ["primary", "backup"], idleTimeoutMs: 200 });
    const { result } = await call(c);
    expect(fake.requests.map((r) => r.body.model)).toEqual([...Array(5).fill("primary"), "backup"]);
    expect(result.type === "error" && result.error.kind).toBe("stalled");
    expect(fake.pending()).toBe(1);
  });

  it("counts a stream that goes silent after some text as a stall, and the retry does not repeat the text", async () => {
    fake.enqueue(text("Hello world, friend", { chunkSize: 6, chunkDelayMs: 5_000 }), text("Hello world, friend", { chunkSize: 6 }));
    const { result, events, shown } = await call(client({ idleTimeoutMs: 300 }).c);
    expect(result.type).toBe("ok");
    expect(events.find((e) => e.type === "retry")).toMatchObject({ error: { kind: "stalled" } });
    expect(events.some((e) => e.type === "text_reset")).toBe(false);
    expect(shown).toBe("Hello world, friend");
  });

  it("waits 60 s for a silent stream and allows two stalls per call by default", () => {
    expect(defaultRetryPolicy).toMatchObject({ idleTimeoutMs: 60_000, maxStalls: 2 });
  });
});

describe("model client: abort", () => {
  it("stops a running stream promptly and returns the text shown so far", async () => {
    fake.enqueue(text("a".repeat(200), { chunkSize: 10, chunkDelayMs: 50 }));
    const ac = new AbortController();
    const { c } = client();
    const started = Date.now();
    const events: ModelEvent[] = [];
    const pending = c.stream(request, {
      signal: ac.signal,
      onEvent: (e) => {
        events.push(e);
        if (events.length === 3) ac.abort();
      },
    });
    const result = await pending;
    expect(Date.now() - started).toBeLessThan(2000);
    expect(result.type === "error" && result.error.kind).toBe("aborted");
    expect(result.type === "error" && result.partial).toEqual([{ type: "text", text: "a".repeat(30) }]);
  });

  it("a stopped stream was billed: its input, and the output so far estimated at 4 characters a token, come back as unfinished", async () => {
    fake.enqueue(text("a".repeat(200), { chunkSize: 10, chunkDelayMs: 50, usage: { input_tokens: 1_200, cache_read_input_tokens: 5_000 } }));
    const ac = new AbortController();
    const { c } = client();
    const events: ModelEvent[] = [];
    const result = await c.stream(request, {
      signal: ac.signal,
      onEvent: (e) => {
        events.push(e);
        if (events.length === 3) ac.abort();
      },
    });
    expect(result.type === "error" && result.error.kind).toBe("aborted");
    // 30 characters arrived: 8 tokens (rounded up); the API's own count never came.
    expect(result.unfinished).toEqual([{ model: "primary", usage: { inputTokens: 1_200, outputTokens: 8, cacheReadTokens: 5_000, cacheCreationTokens: 0 } }]);
  });

  it("a stalled attempt is billed and the retry that answers is not: the result carries the stalled one as unfinished", async () => {
    fake.enqueue(text("Hello world, friend", { chunkSize: 6, chunkDelayMs: 5_000 }), text("Hello world, friend", { chunkSize: 6 }));
    const { result } = await call(client({ idleTimeoutMs: 300 }).c);
    expect(result.type).toBe("ok");
    expect(result.unfinished).toEqual([{ model: "primary", usage: { inputTokens: 10, outputTokens: 2, cacheReadTokens: 0, cacheCreationTokens: 0 } }]);
  });

  it("a request refused before its stream started is not billed", async () => {
    fake.enqueue({ type: "http_error", status: 400, message: "bad request" });
    const { result } = await call(client().c);
    expect(result.type === "error" && result.error.kind).toBe("bad_request");
    expect(result.unfinished).toBeUndefined();
  });

  it("stops during a backoff wait without another request", async () => {
    fake.setDefault({ type: "http_error", status: 500 });
    const ac = new AbortController();
    const c = createAnthropicModelClient({
      models: ["m"], apiKey: "k", baseURL: fake.url, log: silentLogger,
      sleep: async () => void ac.abort(),
    });
    const result = await c.stream(request, { signal: ac.signal, onEvent: () => {} });
    expect(result.type === "error" && result.error.kind).toBe("aborted");
    expect(fake.requests).toHaveLength(1);
  });
});
