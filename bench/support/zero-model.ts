// A zero-latency Messages API for benchmarks: answers every request at once with a short SSE
// message and records when each request arrived and when its last byte was written.
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";

export interface ZeroModel {
  url: string;
  /** performance.now() at each request's arrival, in arrival order. */
  arrivals: number[];
  /** performance.now() right after each response's last byte was handed to the socket. */
  lastBytes: number[];
  close(): Promise<void>;
}

const sse = (type: string, data: unknown) => `event: ${type}\ndata: ${JSON.stringify({ type, ...(data as object) })}\n\n`;

export async function startZeroModel(reply = "ok"): Promise<ZeroModel> {
  const arrivals: number[] = [];
  const lastBytes: number[] = [];
  let n = 0;
  const server: Server = createServer((req, res) => {
    arrivals.push(performance.now());
    req.resume();
    req.on("end", () => {
      const id = `msg_${++n}`;
      res.writeHead(200, { "content-type": "text/event-stream" });
      res.end(
        sse("message_start", { message: { id, type: "message", role: "assistant", model: "bench", content: [], stop_reason: null, usage: { input_tokens: 10, output_tokens: 0 } } }) +
          sse("content_block_start", { index: 0, content_block: { type: "text", text: "" } }) +
          sse("content_block_delta", { index: 0, delta: { type: "text_delta", text: reply } }) +
          sse("content_block_stop", { index: 0 }) +
          sse("message_delta", { delta: { stop_reason: "end_turn" }, usage: { output_tokens: 1 } }) +
          sse("message_stop", {}),
      );
      lastBytes.push(performance.now());
    });
  });
  server.keepAliveTimeout = 60_000;
  await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    arrivals,
    lastBytes,
    close: () =>
      new Promise<void>((r) => {
        server.closeAllConnections();
        server.close(() => r());
      }),
  };
}
