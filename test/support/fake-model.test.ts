import Anthropic from "@anthropic-ai/sdk";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { lastUserContent, requestText, startFakeModel, text, toolCall, type FakeModel } from "./fake-model.ts";

const params = {
  model: "claude-test-model",
  max_tokens: 256,
  system: "You are Hearth. secret-in-system",
  messages: [{ role: "user" as const, content: "Hello there" }],
};

let fake: FakeModel;
let client: Anthropic;

beforeEach(async () => {
  fake = await startFakeModel();
  client = new Anthropic({ apiKey: "test-key", baseURL: fake.url, maxRetries: 0 });
});

afterEach(async () => {
  await fake.close();
});

/** Runs `fn` and returns what it threw; fails the test when it does not throw. */
async function caught(fn: () => Promise<unknown>): Promise<unknown> {
  try {
    await fn();
  } catch (error) {
    return error;
  }
  throw new Error("expected a rejection");
}

describe("streamed replies", () => {
  it("delivers chunked text as several text events and a complete final message", async () => {
    fake.enqueue(text("Hello, hearth!", { chunkSize: 4, usage: { input_tokens: 42, cache_read_input_tokens: 7 } }));
    const deltas: string[] = [];
    const stream = client.messages.stream(params);
    stream.on("text", (delta) => deltas.push(delta));
    const final = await stream.finalMessage();

    expect(deltas).toEqual(["Hell", "o, h", "eart", "h!"]);
    expect(final.content).toEqual([{ type: "text", text: "Hello, hearth!", citations: null }]);
    expect(final.model).toBe("claude-test-model");
    expect(final.stop_reason).toBe("end_turn");
    expect(final.usage).toMatchObject({ input_tokens: 42, cache_read_input_tokens: 7, cache_creation_input_tokens: 0 });
    expect(final.usage.output_tokens).toBeGreaterThanOrEqual(1);
  });

  it("streams a tool call's input as JSON chunks that the SDK parses", async () => {
    fake.enqueue(toolCall("read_file", { path: "notes/today.md", lines: [1, 20] }, { chunkSize: 5 }));
    const partials: string[] = [];
    const stream = client.messages.stream(params);
    stream.on("inputJson", (partial) => partials.push(partial));
    const final = await stream.finalMessage();

    expect(partials.length).toBeGreaterThan(1);
    expect(final.stop_reason).toBe("tool_use");
    expect(final.content).toEqual([
      { type: "tool_use", id: "toolu_1", name: "read_file", input: { path: "notes/today.md", lines: [1, 20] }, caller: { type: "direct" } },
    ]);
  });

  it("streams thinking with its signature before the answer", async () => {
    fake.enqueue({ type: "message", blocks: [{ thinking: "Let me think.", signature: "sig-1" }, { text: "Done." }], chunkSize: 3 });
    const final = await client.messages.stream(params).finalMessage();

    expect(final.content).toEqual([
      { type: "thinking", thinking: "Let me think.", signature: "sig-1" },
      { type: "text", text: "Done.", citations: null },
    ]);
  });

  it("paces deltas with chunkDelayMs", async () => {
    fake.enqueue(text("abcdef", { chunkSize: 2, chunkDelayMs: 40 }));
    const started = Date.now();
    await client.messages.stream(params).finalMessage();

    expect(Date.now() - started).toBeGreaterThanOrEqual(70);
  });
});

describe("non-streamed replies", () => {
  it("answers stream:false with the same script as one JSON message", async () => {
    fake.enqueue({ type: "message", blocks: [{ text: "Reading it." }, { tool: "read_file", input: { path: "a.md" }, id: "toolu_x" }] });
    const message = await client.messages.create(params);

    expect(message.content).toEqual([
      { type: "text", text: "Reading it.", citations: null },
      { type: "tool_use", id: "toolu_x", name: "read_file", input: { path: "a.md" }, caller: { type: "direct" } },
    ]);
    expect(message.stop_reason).toBe("tool_use");
    expect(message.model).toBe("claude-test-model");
  });
});

describe("failures", () => {
  it("surfaces a scripted 429 as RateLimitError with its retry-after header", async () => {
    fake.enqueue({ type: "http_error", status: 429, headers: { "retry-after": "7" }, message: "slow down" });
    const error = await caught(() => client.messages.stream(params).finalMessage());

    expect(error).toBeInstanceOf(Anthropic.RateLimitError);
    const rateLimit = error as InstanceType<typeof Anthropic.RateLimitError>;
    expect(rateLimit.status).toBe(429);
    expect(rateLimit.type).toBe("rate_limit_error");
    expect(rateLimit.apiMessage).toBe("slow down");
    expect(rateLimit.headers.get("retry-after")).toBe("7");
    expect(rateLimit.requestID).toBe("req_1");
  });

  it("fails mid-stream with an overloaded_error APIError after the partial text", async () => {
    fake.enqueue(text("abcdefghij", { chunkSize: 2, failAfterChars: { chars: 5 } }));
    const deltas: string[] = [];
    const stream = client.messages.stream(params);
    stream.on("text", (delta) => deltas.push(delta));
    const error = await caught(() => stream.finalMessage());

    expect(deltas.join("")).toBe("abcde");
    expect(error).toBeInstanceOf(Anthropic.APIError);
    const apiError = error as InstanceType<typeof Anthropic.APIError>;
    expect(apiError.type).toBe("overloaded_error");
    expect(apiError.status).toBeUndefined();
    expect(apiError.apiMessage).toBe("Overloaded");
  });

  it("resets the connection mid-stream: partial text, then a non-API error whose cause is ECONNRESET", async () => {
    fake.enqueue(text("abcdefghij", { chunkSize: 2, dropAfterChars: 3 }));
    const deltas: string[] = [];
    const stream = client.messages.stream(params);
    stream.on("text", (delta) => deltas.push(delta));
    const error = await caught(() => stream.finalMessage());

    expect(deltas.join("")).toBe("abc");
    // Once the body has started, the SDK wraps undici's "terminated" TypeError in a plain AnthropicError.
    expect(error).toBeInstanceOf(Anthropic.AnthropicError);
    expect(error).not.toBeInstanceOf(Anthropic.APIError);
    expect(causeCodes(error)).toContain("ECONNRESET");
  });

  it("resets the connection before the response head with dropAfterChars 0: APIConnectionError", async () => {
    fake.enqueue(text("abc", { dropAfterChars: 0 }));
    const error = await caught(() => client.messages.stream(params).finalMessage());

    expect(error).toBeInstanceOf(Anthropic.APIConnectionError);
    expect(causeCodes(error)).toContain("ECONNRESET");
  });

  it("answers an empty queue with HTTP 500 'no scripted reply left'", async () => {
    const error = await caught(() => client.messages.create(params));

    expect(error).toBeInstanceOf(Anthropic.InternalServerError);
    expect((error as InstanceType<typeof Anthropic.APIError>).apiMessage).toBe("fake model: no scripted reply left");
  });
});

describe("hanging requests", () => {
  it("rejects promptly when the client aborts, and close() still resolves", async () => {
    fake.enqueue({ type: "hang" });
    const abort = new AbortController();
    const stream = client.messages.stream(params, { signal: abort.signal });
    const settled = caught(() => stream.finalMessage());
    await fake.waitForRequests(1);
    const abortedAt = Date.now();
    abort.abort();
    const error = await settled;

    expect(error).toBeInstanceOf(Anthropic.APIUserAbortError);
    expect(Date.now() - abortedAt).toBeLessThan(500);
    await fake.close();
  });

  it("close() ends a request that is still hanging", async () => {
    fake.enqueue({ type: "hang" });
    const settled = caught(() => client.messages.create(params));
    await fake.waitForRequests(1);
    await fake.close();

    expect(await settled).toBeInstanceOf(Anthropic.APIConnectionError);
  });
});

describe("recording", () => {
  it("records each request with its parsed body and accepts Bearer auth from apiKey and authToken", async () => {
    fake.setDefault(text("ok"));
    await client.messages.create(params);
    const tokenClient = new Anthropic({ authToken: "oauth-token", baseURL: fake.url, maxRetries: 0 });
    await tokenClient.messages.stream(params).finalMessage();

    expect(fake.requests).toHaveLength(2);
    const [first, second] = fake.requests;
    expect(first).toMatchObject({ method: "POST", path: "/v1/messages", body: { model: "claude-test-model" } });
    expect(first?.body.stream).toBeUndefined();
    expect(first?.headers.authorization).toBe("Bearer test-key");
    expect(second?.headers.authorization).toBe("Bearer oauth-token");
    expect(second?.body.stream).toBe(true);
    expect(JSON.parse(second?.rawBody ?? "")).toEqual(second?.body);
  });

  it("accepts x-api-key auth, counts tokens without recording, lists its models, and 404s unknown routes", async () => {
    fake.enqueue(text("ok"));
    const response = await fetch(`${fake.url}/v1/messages`, {
      method: "POST",
      headers: { "x-api-key": "raw-key", "content-type": "application/json" },
      body: JSON.stringify(params),
    });
    const counted = await client.messages.countTokens(params);
    const missing = await fetch(`${fake.url}/v1/files`);
    const models = await fetch(`${fake.url}/v1/models`);

    expect(response.status).toBe(200);
    expect(response.headers.get("request-id")).toBe("req_1");
    expect(fake.requests.map((r) => r.headers["x-api-key"])).toEqual(["raw-key"]);
    expect(counted.input_tokens).toBeGreaterThan(0);
    expect(missing.status).toBe(404);
    expect(await missing.json()).toMatchObject({ type: "error", error: { type: "not_found_error" } });
    expect(((await models.json()) as { data: { id: string }[] }).data.map((m) => m.id)).toEqual(["claude-sonnet-5-5", "claude-haiku-5"]);
  });

  it("lets a respond script decide from the request it sees", async () => {
    fake.enqueue({ type: "respond", fn: (req) => text(`you said: ${requestText(req)}`) });
    const message = await client.messages.create({
      ...params,
      messages: [
        { role: "user", content: "read it" },
        { role: "assistant", content: [{ type: "tool_use", id: "toolu_9", name: "read_file", input: {} }] },
        { role: "user", content: [{ type: "tool_result", tool_use_id: "toolu_9", content: "secret-in-tool-result" }] },
      ],
    });

    expect(message.content[0]).toMatchObject({ text: expect.stringContaining("secret-in-tool-result") });
    expect(message.content[0]).toMatchObject({ text: expect.stringContaining("secret-in-system") });
    const [request] = fake.requests;
    expect(request && lastUserContent(request)).toEqual([{ type: "tool_result", tool_use_id: "toolu_9", content: "secret-in-tool-result" }]);
  });

  it("consumes the queue in order and reports what is pending", async () => {
    fake.enqueue(text("one"), text("two"));
    expect(fake.pending()).toBe(2);
    const first = await client.messages.create(params);
    expect(fake.pending()).toBe(1);
    const second = await client.messages.create(params);

    expect([first.content[0], second.content[0]]).toMatchObject([{ text: "one" }, { text: "two" }]);
    expect(fake.pending()).toBe(0);
  });

  it("waitForRequests rejects with a clear message when requests do not come", async () => {
    await expect(fake.waitForRequests(1, 50)).rejects.toThrow("waited 50 ms for 1 request(s) to /v1/messages, got 0");
  });
});

describe("server web tools, as the API bills them", () => {
  const page = "p".repeat(1_200_000); // 300,000 tokens at 4 characters a token
  const fetchTool = (extra: Record<string, unknown> = {}) => ({ type: "web_fetch_20260318" as const, name: "web_fetch" as const, ...extra });
  const fetches = (n: number) => ({ type: "message" as const, blocks: [...Array.from({ length: n }, (_, i) => ({ fetch: { url: `https://example.com/${i}`, page } })), { text: "Read." }] });

  it("cuts a fetched page to max_content_tokens and bills it as input of the call", async () => {
    fake.enqueue(fetches(1));
    const stream = client.messages.stream({ ...params, tools: [fetchTool({ max_content_tokens: 1_000 })] });
    const final = await stream.finalMessage();
    expect(final.content.map((b) => b.type)).toEqual(["server_tool_use", "web_fetch_tool_result", "text"]);
    expect(final.content[0]).toEqual({ type: "server_tool_use", id: "srvtoolu_1", name: "web_fetch", input: { url: "https://example.com/0" }, caller: { type: "direct" } });
    const result = final.content[1] as Anthropic.WebFetchToolResultBlock;
    expect(result.content).toMatchObject({ type: "web_fetch_result", url: "https://example.com/0", content: { type: "document", source: { type: "text", data: "p".repeat(4_000) } } });
    // 10 of the request, 1,000 of the page read by the one step after it.
    expect(final.usage).toMatchObject({ input_tokens: 1_010, server_tool_use: { web_search_requests: 0, web_fetch_requests: 1 } });
  });

  it("without max_content_tokens brings the whole page; each result is billed again by every later step", async () => {
    fake.enqueue(fetches(1), fetches(2));
    const one = await client.messages.create({ ...params, tools: [fetchTool()] });
    expect(one.usage.input_tokens).toBe(10 + 300_000);
    const two = await client.messages.create({ ...params, tools: [fetchTool({ max_content_tokens: 100 })] });
    expect(two.usage.input_tokens).toBe(10 + 100 * 2 + 100 * 1);
    expect(fake.requests.map((r) => r.usage?.input_tokens)).toEqual([300_010, 310]);
  });

  it("bounds the uses by max_uses (an error result past it, not billed), and makes none without the tool", async () => {
    fake.enqueue(fetches(3), fetches(1), { type: "message", blocks: [{ search: { query: "q", results: [{ url: "https://a.example", title: "A", content: "x".repeat(400) }] } }, { text: "Found." }] });
    const bounded = await client.messages.create({ ...params, tools: [fetchTool({ max_uses: 1, max_content_tokens: 10 })] });
    expect(bounded.content.filter((b) => b.type === "web_fetch_tool_result").map((b) => (b as Anthropic.WebFetchToolResultBlock).content.type)).toEqual(["web_fetch_result", "web_fetch_tool_result_error", "web_fetch_tool_result_error"]);
    expect((bounded.content[3] as Anthropic.WebFetchToolResultBlock).content).toEqual({ type: "web_fetch_tool_result_error", error_code: "max_uses_exceeded" });
    expect(bounded.usage).toMatchObject({ input_tokens: 10 + 10 * 3, server_tool_use: { web_fetch_requests: 1 } });
    const none = await client.messages.create(params);
    expect(none.content).toEqual([{ type: "text", text: "Read.", citations: null }]);
    expect(none.usage.server_tool_use).toBeNull();
    const searched = await client.messages.create({ ...params, tools: [{ type: "web_search_20260318", name: "web_search", max_uses: 2 }] });
    expect(searched.usage).toMatchObject({ input_tokens: 10 + 100, server_tool_use: { web_search_requests: 1, web_fetch_requests: 0 } });
  });

  it("never reports more output than the request's max_tokens", async () => {
    fake.enqueue(text("long", { usage: { output_tokens: 5_000 } }));
    expect((await client.messages.create(params)).usage.output_tokens).toBe(256);
  });
});

/** Every `code` along an error's cause chain. */
function causeCodes(error: unknown): unknown[] {
  const codes: unknown[] = [];
  for (let e = error as { code?: unknown; cause?: unknown } | undefined; e; e = e.cause as typeof e) codes.push(e.code);
  return codes;
}
