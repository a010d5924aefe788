// Hearth's Chat Completions client against raw loopback servers: the stream as servers really
// send it (keep-alive comments, CRLF, events split across packets, no blank line at the end),
// error bodies in the shapes servers use, and an address nobody listens on, each as the owner
// reads it once model-errors.ts has classified it.
import { createServer, type RequestListener, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { afterEach, describe, expect, it } from "vitest";
import { classifyModelError } from "../../../src/agent/model-errors.ts";
import { ChatApi, chatApiErrors, type ChatChunk } from "../../../src/agent/providers/openai/chat-api.ts";

let server: Server | undefined;
afterEach(async () => {
  const s = server;
  server = undefined;
  if (s) await new Promise<void>((resolve) => (s.closeAllConnections(), s.close(() => resolve())));
});

async function serve(handler: RequestListener): Promise<string> {
  const s = createServer(handler);
  server = s;
  await new Promise<void>((resolve) => s.listen(0, "127.0.0.1", () => resolve()));
  return `http://127.0.0.1:${(s.address() as AddressInfo).port}/v1`;
}

const params = { model: "m", messages: [{ role: "user" as const, content: "hi" }] };

async function collect(api: ChatApi): Promise<ChatChunk[]> {
  const out: ChatChunk[] = [];
  for await (const c of api.streamChat(params, new AbortController().signal)) out.push(c);
  return out;
}

async function failure(run: () => Promise<unknown>, baseURL: string): Promise<string> {
  try {
    await run();
  } catch (err) {
    return classifyModelError(err, "m", chatApiErrors, baseURL, "the key").message;
  }
  throw new Error("expected the request to fail");
}

describe("the Chat Completions client", () => {
  it("reads a stream with keep-alive comments, CRLF line ends, events split across packets and no blank line after the last", async () => {
    const seen: Array<{ auth: string | undefined; body: string }> = [];
    const url = await serve((req, res) => {
      let body = "";
      req.on("data", (b: Buffer) => (body += b.toString()));
      req.on("end", () => {
        seen.push({ auth: req.headers.authorization, body });
        res.writeHead(200, { "content-type": "text/event-stream" });
        res.write(": PROCESSING\r\n\r\n");
        res.write('data: {"model":"m-1","choices":[{"delta":{"content":"Hel');
        setTimeout(() => {
          res.write('lo"}}]}\r\n\r\ndata: {"choices":[{"delta":{"content":" there"},"finish_reason":"stop"}]}\n\n');
          res.end('data: {"choices":[],"usage":{"prompt_tokens":3,"completion_tokens":2}}');
        }, 20);
      });
    });
    const chunks = await collect(new ChatApi({ baseURL: `${url}/`, headers: { "X-Title": "Hearth" } }));
    expect(chunks).toEqual([
      { model: "m-1", choices: [{ delta: { content: "Hello" } }] },
      { choices: [{ delta: { content: " there" }, finish_reason: "stop" }] },
      { choices: [], usage: { prompt_tokens: 3, completion_tokens: 2 } },
    ]);
    // No key: no Authorization header at all (local servers), and the body asks for a stream.
    expect(seen).toEqual([{ auth: undefined, body: JSON.stringify({ ...params, stream: true }) }]);
  });

  it("stops at [DONE] and sends the key as a bearer token", async () => {
    let auth: string | undefined;
    const url = await serve((req, res) => {
      auth = req.headers.authorization;
      res.writeHead(200, { "content-type": "text/event-stream" });
      res.end('data: {"choices":[]}\n\ndata: [DONE]\n\ndata: {"choices":[{"delta":{"content":"never"}}]}\n\n');
    });
    expect(await collect(new ChatApi({ baseURL: url, apiKey: "sk-test" }))).toEqual([{ choices: [] }]);
    expect(auth).toBe("Bearer sk-test");
  });

  it("an error event in the stream is the API's error, with its type", async () => {
    const url = await serve((_req, res) => {
      res.writeHead(200, { "content-type": "text/event-stream" });
      res.end('data: {"choices":[{"delta":{"content":"a"}}]}\n\ndata: {"error":{"message":"upstream overloaded","type":"server_error"}}\n\n');
    });
    const api = new ChatApi({ baseURL: url });
    let caught: unknown;
    try {
      await collect(api);
    } catch (err) {
      caught = err;
    }
    expect(classifyModelError(caught, "m", chatApiErrors, url)).toEqual({ kind: "server", model: "m", message: "The model stream failed: upstream overloaded" });
  });

  it.each([
    ['{"error":{"message":"model m is not loaded","type":"invalid_request_error"}}', "The model API rejected the request (HTTP 400): model m is not loaded"],
    ['{"error":"model m does not support tools"}', "The model API rejected the request (HTTP 400): model m does not support tools"],
    ['{"message":"bad input"}', "The model API rejected the request (HTTP 400): bad input"],
    ["plain words from a proxy", "The model API rejected the request (HTTP 400): plain words from a proxy"],
  ])("an HTTP error with the body %s reads: %s", async (body, message) => {
    const url = await serve((_req, res) => void res.writeHead(400, { "content-type": "application/json" }).end(body));
    expect(await failure(() => new ChatApi({ baseURL: url }).createChat(params), url)).toBe(message);
  });

  it("an address nobody listens on names the address and the refusal", async () => {
    const url = await serve((_req, res) => void res.end());
    await new Promise<void>((resolve) => (server!.close(() => resolve()), (server = undefined)));
    expect(await failure(() => new ChatApi({ baseURL: url }).listModels(), url)).toMatch(
      new RegExp(`^Could not reach the model API at ${url.replace(/[.]/g, "\\.")} \\(connect ECONNREFUSED 127\\.0\\.0\\.1:\\d+\\)\\.$`),
    );
  });

  it("lists the models' ids", async () => {
    const url = await serve((req, res) => void res.writeHead(200, { "content-type": "application/json" }).end(req.url === "/v1/models" ? '{"object":"list","data":[{"id":"a"},{"id":"b"}]}' : "{}"));
    expect(await new ChatApi({ baseURL: url }).listModels()).toEqual(["a", "b"]);
  });
});
