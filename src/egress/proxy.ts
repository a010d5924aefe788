// The egress proxy: one listener on a Unix socket per command (or extension process), speaking
// HTTP (plain requests in absolute form, and CONNECT tunnels) and SOCKS5 (CONNECT, names resolved
// here: socks5h) on the same socket — the first byte tells them apart. Every destination is put
// to `decide` (the egress policy with the requester's permit) and, when allowed, connected to the
// very address the policy checked. Each connection is recorded once it closes, with the bytes
// that went each way.
import { once } from "node:events";
import http from "node:http";
import net from "node:net";
import type { Logger } from "../process/log.ts";
import type { Destination, EgressDecision } from "./policy.ts";
import { startRelay, type Relay } from "./relay.ts";

export type ProxyProtocol = "http" | "connect" | "socks5";

/** One connection through the proxy, as the audit log keeps it. */
export interface ConnectionRecord {
  host: string;
  port: number;
  protocol: ProxyProtocol;
  decision: "connected" | "refused" | "failed";
  /** Why it was refused, or why connecting failed. */
  reason?: string;
  /** Bytes from the command to the destination, and back. */
  sent: number;
  received: number;
}

export interface ProxyOptions {
  /** Where to listen; the folder must exist and be the daemon's alone. */
  socketPath: string;
  /** The policy's decision for one destination. Must not reject; resolves soon after `signal` aborts. */
  decide(dest: Destination, signal: AbortSignal): Promise<EgressDecision>;
  /** Called once per connection when it has ended. Must not throw. */
  record(r: ConnectionRecord): void;
  /** A connection to `dest` is open, before anything it answers is passed on to the client. Must not throw. */
  opened(dest: Destination): void;
  log: Logger;
  /** socat, to carry the bytes of allowed tunnels (relay.ts); null: Node pipes them. */
  socat: string | null;
}

/** A client has this long to say where it goes (the owner's answer may then take longer). */
const HANDSHAKE_MS = 30_000;
/** An HTTP request head larger than this is refused by Node's parser. */
const MAX_HEADER_BYTES = 32 * 1024;

export class EgressProxy {
  readonly #server: net.Server;
  readonly #http: http.Server;
  readonly #sockets = new Set<net.Socket>();
  readonly #relays = new Set<Promise<void>>();
  readonly #stopRelays = new Set<() => void>();
  readonly #stop = new AbortController();
  readonly #o: ProxyOptions;

  private constructor(opts: ProxyOptions) {
    this.#o = opts;
    this.#http = http.createServer({ maxHeaderSize: MAX_HEADER_BYTES }, (req, res) => void this.#plain(req, res));
    this.#http.on("connect", (req: http.IncomingMessage, socket: net.Socket, head: Buffer) => void this.#tunnel(req, socket, head));
    this.#http.on("clientError", (_err, socket) => socket.destroy());
    // A client may shutdown(SHUT_WR) once its request is sent (`nc -N`, a script that closes its
    // writing side): its end is not the end of the connection. Half-open sockets keep the
    // answer's way open, and the HTTP server then answers the request it has instead of aborting it.
    // (http.Server reads this field on a client end; Node has no option for it.)
    (this.#http as http.Server & { httpAllowHalfOpen: boolean }).httpAllowHalfOpen = true;
    this.#server = net.createServer({ allowHalfOpen: true }, (socket) => this.#accept(socket));
  }

  /** Listens on `opts.socketPath`; resolves once connections are taken. */
  static async listen(opts: ProxyOptions): Promise<EgressProxy> {
    const proxy = new EgressProxy(opts);
    proxy.#server.listen(opts.socketPath);
    await once(proxy.#server, "listening");
    return proxy;
  }

  /**
   * Stops listening and ends every connection (killing any socat carrying one); a decision still
   * waiting is aborted. Resolves once every socket has closed and every socat has exited, so
   * every connection has been recorded.
   */
  async close(): Promise<void> {
    this.#stop.abort();
    for (const stop of this.#stopRelays) stop();
    // Still in the set means its "close" has not been emitted (a socket leaves the set in its
    // close listener), even when it was destroyed already: `closed` turns true a tick earlier.
    const closing = [...this.#sockets].map((s) => once(s, "close").then(() => {}));
    for (const s of this.#sockets) s.destroy();
    await Promise.all([...closing, ...this.#relays, new Promise<void>((resolve) => this.#server.close(() => resolve()))]);
  }

  #track(socket: net.Socket): void {
    this.#sockets.add(socket);
    socket.once("close", () => this.#sockets.delete(socket));
    socket.on("error", () => socket.destroy());
  }

  #accept(socket: net.Socket): void {
    this.#track(socket);
    socket.setTimeout(HANDSHAKE_MS, () => socket.destroy());
    socket.once("readable", () => {
      const first = socket.read(1) as Buffer | null;
      if (!first) return void socket.destroy();
      socket.unshift(first);
      if (first[0] === 0x05) void this.#socks(socket);
      else this.#http.emit("connection", socket);
    });
  }

  async #decide(dest: Destination): Promise<EgressDecision> {
    try {
      return await this.#o.decide(dest, this.#stop.signal);
    } catch (err) {
      this.#o.log.warn("egress.decide_threw", { error: err });
      return { type: "refuse", reason: "the egress policy failed" };
    }
  }

  /** `CONNECT host:port`: a tunnel (HTTPS, or anything else a client wraps in it). */
  async #tunnel(req: http.IncomingMessage, client: net.Socket, head: Buffer): Promise<void> {
    const dest = parseAuthority(req.url ?? "");
    if (!dest) return void refuseHttp(client, `"${(req.url ?? "").slice(0, 100)}" is not host:port`);
    const decision = await this.#decide(dest);
    if (decision.type === "refuse") {
      this.#o.record({ ...dest, protocol: "connect", decision: "refused", reason: decision.reason, sent: 0, received: 0 });
      return void refuseHttp(client, `Hearth's egress policy refused ${dest.host}:${dest.port}: ${decision.reason}`);
    }
    const upstream = await connectTo(decision.address.address, dest.port, this.#stop.signal);
    if ("error" in upstream) {
      this.#o.record({ ...dest, protocol: "connect", decision: "failed", reason: upstream.error, sent: 0, received: 0 });
      return void answerHttp(client, 502, `Could not connect to ${dest.host}:${dest.port}: ${upstream.error}`);
    }
    this.#o.opened(dest);
    client.setTimeout(0);
    client.write("HTTP/1.1 200 Connection Established\r\n\r\n");
    this.#splice(client, upstream.socket, head, dest, "connect");
  }

  /** A plain HTTP request in absolute form (`GET http://host/path`): forwarded, the answer streamed back. */
  async #plain(req: http.IncomingMessage, res: http.ServerResponse): Promise<void> {
    let url: URL;
    try {
      url = new URL(req.url ?? "");
    } catch {
      return void sendText(res, 400, "This is Hearth's egress proxy: requests must name an absolute http:// URL.");
    }
    if (url.protocol !== "http:") return void sendText(res, 400, `Only http:// is proxied as a plain request; ${url.protocol} goes through CONNECT.`);
    const dest = { host: url.hostname, port: Number(url.port || 80) };
    const decision = await this.#decide(dest);
    if (decision.type === "refuse") {
      this.#o.record({ host: dest.host, port: dest.port, protocol: "http", decision: "refused", reason: decision.reason, sent: 0, received: 0 });
      return void sendText(res, 403, `Hearth's egress policy refused ${dest.host}:${dest.port}: ${decision.reason}`);
    }
    const headers = { ...req.headers };
    for (const h of ["proxy-connection", "proxy-authorization", "connection", "keep-alive"]) delete headers[h];
    let sent = 0;
    let received = 0;
    let failed: string | undefined;
    const upstream = http.request({
      host: decision.address.address,
      family: decision.address.family,
      port: dest.port,
      method: req.method,
      path: `${url.pathname}${url.search}`,
      headers: { ...headers, host: url.host, connection: "close" },
      setHost: false,
      agent: false,
      signal: this.#stop.signal,
    });
    req.on("data", (c: Buffer) => (sent += c.length));
    upstream.on("response", (answer) => {
      this.#o.opened(dest);
      res.writeHead(answer.statusCode ?? 502, answer.statusMessage, answer.headers);
      answer.on("data", (c: Buffer) => (received += c.length));
      answer.pipe(res);
    });
    upstream.on("error", (err) => {
      failed = err.message;
      if (!res.headersSent) sendText(res, 502, `Could not reach ${dest.host}:${dest.port}: ${err.message}`);
      else res.destroy();
    });
    res.once("close", () => {
      upstream.destroy();
      this.#o.record({ host: dest.host, port: dest.port, protocol: "http", decision: failed ? "failed" : "connected", ...(failed ? { reason: failed } : {}), sent, received });
    });
    req.pipe(upstream);
  }

  /** SOCKS5 without authentication, CONNECT only; names are resolved here (socks5h). */
  async #socks(client: net.Socket): Promise<void> {
    const reader = new ByteReader(client);
    const greeting = await reader.take(2);
    if (!greeting || greeting[0] !== 0x05) return void client.destroy();
    const methods = await reader.take(greeting[1]!);
    if (!methods || !methods.includes(0x00)) {
      client.end(Buffer.from([0x05, 0xff]));
      return;
    }
    client.write(Buffer.from([0x05, 0x00]));
    const request = await reader.take(4);
    if (!request || request[0] !== 0x05) return void client.destroy();
    const dest = await readSocksDestination(reader, request[3]!);
    if (!dest) return void client.end(socksReply(0x08));
    if (request[1] !== 0x01) return void client.end(socksReply(0x07));
    const decision = await this.#decide(dest);
    if (decision.type === "refuse") {
      this.#o.record({ ...dest, protocol: "socks5", decision: "refused", reason: decision.reason, sent: 0, received: 0 });
      return void client.end(socksReply(0x02));
    }
    const upstream = await connectTo(decision.address.address, dest.port, this.#stop.signal);
    if ("error" in upstream) {
      this.#o.record({ ...dest, protocol: "socks5", decision: "failed", reason: upstream.error, sent: 0, received: 0 });
      return void client.end(socksReply(0x05));
    }
    this.#o.opened(dest);
    client.setTimeout(0);
    client.write(socksReply(0x00));
    this.#splice(client, upstream.socket, reader.rest(), dest, "socks5");
  }

  /** Joins the two sockets both ways (relay.ts); records the connection once both have closed. */
  #splice(client: net.Socket, upstream: net.Socket, head: Buffer, dest: Destination, protocol: ProxyProtocol): void {
    this.#track(upstream);
    const relay: Relay = startRelay(client, upstream, head, this.#o.socat);
    const stop = () => relay.stop();
    this.#stopRelays.add(stop);
    const recorded = relay.done.then(({ sent, received }) => {
      this.#stopRelays.delete(stop);
      this.#o.record({ host: dest.host, port: dest.port, protocol, decision: "connected", sent, received });
    });
    this.#relays.add(recorded);
    void recorded.then(() => this.#relays.delete(recorded));
  }
}

/** Reads exact byte counts off a socket in paused mode; null when it ended first. */
class ByteReader {
  #buffered = Buffer.alloc(0);
  readonly #socket: net.Socket;

  constructor(socket: net.Socket) {
    this.#socket = socket;
  }

  async take(n: number): Promise<Buffer | null> {
    while (this.#buffered.length < n) {
      const chunk = this.#socket.read() as Buffer | null;
      if (chunk) {
        this.#buffered = Buffer.concat([this.#buffered, chunk]);
        continue;
      }
      if (this.#socket.destroyed || this.#socket.readableEnded) return null;
      const ended = await Promise.race([once(this.#socket, "readable").then(() => false), once(this.#socket, "close").then(() => true)]).catch(() => true);
      if (ended && this.#socket.readableLength === 0) return null;
    }
    const out = this.#buffered.subarray(0, n);
    this.#buffered = this.#buffered.subarray(n);
    return out;
  }

  /** What was read past the last `take` (a client that sent its first bytes early). */
  rest(): Buffer {
    return this.#buffered;
  }
}

async function readSocksDestination(reader: ByteReader, atyp: number): Promise<Destination | null> {
  let host: string;
  if (atyp === 0x01) {
    const a = await reader.take(4);
    if (!a) return null;
    host = [...a].join(".");
  } else if (atyp === 0x03) {
    const len = await reader.take(1);
    const name = len ? await reader.take(len[0]!) : null;
    if (!name) return null;
    host = name.toString("latin1");
  } else if (atyp === 0x04) {
    const a = await reader.take(16);
    if (!a) return null;
    host = [...Array(8).keys()].map((i) => a.readUInt16BE(i * 2).toString(16)).join(":");
  } else {
    return null;
  }
  const port = await reader.take(2);
  return port ? { host, port: port.readUInt16BE(0) } : null;
}

/** A SOCKS5 reply with `code` (0 success, 2 not allowed by the ruleset, 5 refused, 7 command not supported, 8 address type not supported). */
const socksReply = (code: number) => Buffer.from([0x05, code, 0x00, 0x01, 0, 0, 0, 0, 0, 0]);

/** `host:port` or `[v6]:port`, as CONNECT names its target. */
export function parseAuthority(authority: string): Destination | null {
  const m = /^(\[[^\]]+\]|[^:[\]]+):(\d{1,5})$/.exec(authority.trim());
  if (!m) return null;
  return { host: m[1]!.replace(/^\[(.*)\]$/, "$1"), port: Number(m[2]) };
}

/**
 * Connects, or gives up when `signal` aborts while connecting. The signal is not handed to
 * net.connect: it would destroy an established socket with an AbortError at close, which
 * surfaced as an uncaught exception; close() ends established sockets itself.
 */
function connectTo(address: string, port: number, signal: AbortSignal): Promise<{ socket: net.Socket } | { error: string }> {
  return new Promise((resolve) => {
    if (signal.aborted) return resolve({ error: "the proxy is closing" });
    const socket = net.connect({ host: address, port });
    const abort = () => socket.destroy(new Error("the proxy is closing"));
    signal.addEventListener("abort", abort, { once: true });
    socket.once("connect", () => {
      signal.removeEventListener("abort", abort);
      resolve({ socket });
    });
    socket.once("error", (err) => {
      signal.removeEventListener("abort", abort);
      resolve({ error: err.message });
    });
  });
}

function answerHttp(socket: net.Socket, status: number, text: string): void {
  const body = `${text}\n`;
  const reason = status === 403 ? "Forbidden" : status === 502 ? "Bad Gateway" : "Bad Request";
  socket.end(`HTTP/1.1 ${status} ${reason}\r\nContent-Type: text/plain; charset=utf-8\r\nContent-Length: ${Buffer.byteLength(body)}\r\nConnection: close\r\n\r\n${body}`);
}

const refuseHttp = (socket: net.Socket, text: string) => answerHttp(socket, 403, text);

function sendText(res: http.ServerResponse, status: number, text: string): void {
  const body = `${text}\n`;
  res.writeHead(status, { "content-type": "text/plain; charset=utf-8", "content-length": Buffer.byteLength(body), connection: "close" });
  res.end(body);
}
