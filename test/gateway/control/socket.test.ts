// The control socket's limits: line length, request ids, and who may connect.
import { lstatSync, mkdtempSync, rmSync } from "node:fs";
import { connect, Server, type Socket } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { CliChannel } from "../../../src/channels/terminal/channel.ts";
import type { InboundMessage } from "../../../src/channels/channel.ts";
import { lineDecoder, MAX_REQUEST_LINE_BYTES } from "../../../src/gateway/control/protocol.ts";
import { startControlSocket, type ControlSocket } from "../../../src/gateway/control/socket.ts";
import { silentLogger } from "../../../src/process/log.ts";

let dir: string;
let path: string;
let control: ControlSocket | undefined;
let received: InboundMessage[];
let rpcCalls: string[];

async function start(): Promise<void> {
  const cli = new CliChannel();
  await cli.start((m) => received.push(m));
  control = await startControlSocket(
    path,
    cli,
    { abort: () => {}, status: () => ({}) as never, rpc: async (method) => (rpcCalls.push(method), { method }) },
    silentLogger,
  );
}

/** A raw client: what it sends and every event line it gets back, and when the daemon hung up. */
async function client() {
  const socket: Socket = connect(path);
  await new Promise<void>((r) => socket.once("connect", () => r()));
  const events: any[] = [];
  socket.on("data", lineDecoder((v) => events.push(v), () => {}));
  socket.on("error", () => {});
  const closed = new Promise<void>((r) => socket.once("close", () => r()));
  return { socket, events, closed, send: (v: unknown) => socket.write(`${JSON.stringify(v)}\n`) };
}

const until = async (check: () => boolean) => {
  for (let i = 0; i < 500 && !check(); i++) await new Promise((r) => setTimeout(r, 10));
};

beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), "hearth-ctl-"));
  path = join(dir, "gateway.sock");
  received = [];
  rpcCalls = [];
});
afterEach(async () => {
  await control?.close();
  control = undefined;
  rmSync(dir, { recursive: true, force: true });
});

describe("control socket", () => {
  it("closes a connection that sends a 2 MB line, and keeps serving others", async () => {
    await start();
    const c = await client();
    const line = Buffer.alloc(2 * 1024 * 1024, "a");
    // In many small writes, as a slow client would: each byte must be looked at once.
    for (let i = 0; i < line.length; i += 16 * 1024) c.socket.write(line.subarray(i, i + 16 * 1024));
    await c.closed;
    expect(c.events).toEqual([{ type: "error", message: `Request line longer than ${MAX_REQUEST_LINE_BYTES} bytes: closing the connection.` }]);
    expect(received).toHaveLength(0);

    const other = await client();
    other.send({ type: "rpc", id: "r1", method: "pairing.list" });
    await until(() => other.events.length > 0);
    expect(other.events).toEqual([{ type: "rpc_result", id: "r1", ok: true, result: { method: "pairing.list" } }]);
    other.socket.destroy();
  });

  it("answers a reused request id with an error instead of accepting it", async () => {
    await start();
    const c = await client();
    c.send({ type: "chat", text: "first", requestId: "same" });
    c.send({ type: "chat", text: "second", requestId: "same" });
    c.send({ type: "rpc", id: "r", method: "pairing.list" });
    c.send({ type: "rpc", id: "r", method: "pairing.list" });
    await until(() => c.events.length >= 4);
    await new Promise((r) => setTimeout(r, 50)); // nothing else arrives
    // The rpc runs asynchronously: its result may come after the refusal of its duplicate.
    const byKind = (e: { type: string }) => (e.type === "rpc_result" ? 1 : 0);
    expect(c.events.slice(0, 2)).toEqual([
      { type: "accepted", requestId: "same" },
      { type: "error", requestId: "same", message: 'Request id "same" was already used on this connection; each request needs a new one.' },
    ]);
    expect(c.events.slice(2).sort((a, b) => byKind(a) - byKind(b))).toEqual([
      { type: "error", requestId: "r", message: 'Request id "r" was already used on this connection; each request needs a new one.' },
      { type: "rpc_result", id: "r", ok: true, result: { method: "pairing.list" } },
    ]);
    expect(received.map((m) => m.text)).toEqual(["first"]);
    expect(rpcCalls).toEqual(["pairing.list"]);
    c.socket.destroy();
  });

  it("lets two clients use the same request id: each is a message of its own", async () => {
    await start();
    const a = await client();
    const b = await client();
    a.send({ type: "chat", text: "from a", requestId: "1" });
    b.send({ type: "chat", text: "from b", requestId: "1" });
    await until(() => received.length >= 2);
    expect(received.map((m) => m.text).sort()).toEqual(["from a", "from b"]);
    expect(new Set(received.map((m) => m.id)).size).toBe(2);
    a.socket.destroy();
    b.socket.destroy();
  });

  it("creates the socket file owner-only at bind time, even with a permissive umask", async () => {
    const listen = Server.prototype.listen;
    const previousUmask = process.umask(0);
    let modeAtBind: number | null = null;
    // listen() binds synchronously: right after it returns, nothing else (a chmod) has run yet.
    Server.prototype.listen = function (this: Server, ...args: unknown[]) {
      const result = (listen as (...a: unknown[]) => Server).apply(this, args);
      modeAtBind = lstatSync(path).mode & 0o777;
      return result;
    } as typeof listen;
    try {
      await start();
    } finally {
      Server.prototype.listen = listen;
      expect(process.umask(previousUmask)).toBe(0); // the daemon's narrowed umask was restored
    }
    expect(modeAtBind).toBe(0o600);
    expect(lstatSync(path).mode & 0o777).toBe(0o600);
  });
});

describe("lineDecoder", () => {
  it("joins a line split across chunks, multi-byte characters included", () => {
    const values: unknown[] = [];
    const decode = lineDecoder((v) => values.push(v), () => {});
    const bytes = Buffer.from(`${JSON.stringify({ text: "héllo 👋" })}\n${JSON.stringify({ n: 2 })}\n`);
    for (let i = 0; i < bytes.length; i++) decode(bytes.subarray(i, i + 1));
    expect(values).toEqual([{ text: "héllo 👋" }, { n: 2 }]);
  });

  it("reports a line over the limit once and ignores everything after it", () => {
    const values: unknown[] = [];
    let tooLong = 0;
    const decode = lineDecoder((v) => values.push(v), () => {}, { maxLineBytes: 10, onTooLong: () => tooLong++ });
    decode('{"a":1}\n');
    decode("x".repeat(6));
    decode("x".repeat(6));
    decode('\n{"b":2}\n');
    expect(values).toEqual([{ a: 1 }]);
    expect(tooLong).toBe(1);
  });
});
