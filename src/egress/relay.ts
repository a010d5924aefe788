// The bytes of an allowed tunnel (CONNECT or SOCKS5), once the proxy has decided and connected:
// carried between the command's socket and the destination's. Node streams top out at a few
// hundred MB/s; socat, handed both sockets' descriptors, copies them without passing through
// JavaScript, several times faster. Without socat, Node pipes them. Either way the bytes that
// went each way are counted exactly, for the audit.
import { spawn, type ChildProcess } from "node:child_process";
import { accessSync, constants } from "node:fs";
import type net from "node:net";
import path from "node:path";

/** Bytes from the command to the destination, and back. */
export interface Relayed {
  sent: number;
  received: number;
}

export interface Relay {
  /** Resolves once both sockets are closed (and socat, if it carried them, has exited). Never rejects. */
  done: Promise<Relayed>;
  /** Ends both connections now (kills socat). */
  stop(): void;
}

/** socat's block size: its default of 8 kB copies a fifth of what loopback carries. */
const BLOCK_BYTES = 262_144;

/**
 * -d -d -d: the info messages that count the bytes. FD addresses are taken as plain files unless
 * told: `shut-down` passes an end on as shutdown(SHUT_WR) (else the other side sees its EOF only
 * when socat gives up waiting, half a second later), and `nonblock=0` because socat, given Node's
 * non-blocking sockets, retries a full buffer so slowly that a download crawls at 1 MB/s.
 */
const SOCAT_ARGS = ["-d", "-d", "-d", "-b", String(BLOCK_BYTES), "FD:3,nonblock=0,shut-down", "FD:4,nonblock=0,shut-down"];

/** socat on PATH, or null (then tunnels are piped in Node). */
export function findSocat(pathVar = process.env.PATH ?? ""): string | null {
  for (const dir of pathVar.split(path.delimiter)) {
    if (!dir) continue;
    const file = path.join(dir, "socat");
    try {
      accessSync(file, constants.X_OK);
      return file;
    } catch {
      // not here
    }
  }
  return null;
}

/**
 * Carries `client` ↔ `upstream` until either closes. `head`: bytes the client sent past its
 * handshake, owed to the destination first. Both sockets must be open and have no 'data'
 * listener; from here the relay owns them.
 */
export function startRelay(client: net.Socket, upstream: net.Socket, head: Buffer, socat: string | null): Relay {
  return socat ? socatRelay(client, upstream, head, socat) : nodeRelay(client, upstream, head);
}

function nodeRelay(client: net.Socket, upstream: net.Socket, head: Buffer): Relay {
  let sent = head.length;
  let received = 0;
  if (head.length) upstream.write(head);
  client.on("data", (c: Buffer) => (sent += c.length));
  upstream.on("data", (c: Buffer) => (received += c.length));
  client.pipe(upstream);
  upstream.pipe(client);
  const closed = (s: net.Socket) => (s.closed ? Promise.resolve() : new Promise<void>((r) => s.once("close", () => r())));
  client.once("close", () => upstream.destroy());
  upstream.once("close", () => client.destroy());
  return {
    done: Promise.all([closed(client), closed(upstream)]).then(() => ({ sent, received })),
    stop: () => {
      client.destroy();
      upstream.destroy();
    },
  };
}

/**
 * Hands both descriptors to `socat FD:3 FD:4`. Node must stop reading first, or a chunk read
 * into JavaScript after the handover would be lost or reordered: whatever either socket had read
 * is written across by Node, and socat starts once that is flushed. socat's info messages name
 * every block it moved ("transferred N bytes from 3 to 4"): their sum is the count.
 */
function socatRelay(client: net.Socket, upstream: net.Socket, head: Buffer, socat: string): Relay {
  const toUpstream = Buffer.concat([head, ...takeBuffered(client)]);
  const toClient = Buffer.concat(takeBuffered(upstream));
  const count = { sent: toUpstream.length, received: toClient.length };
  let stopped = false;
  let child: ChildProcess | null = null;
  const closeBoth = () => {
    client.destroy();
    upstream.destroy();
  };
  const run = async (): Promise<Relayed> => {
    const flushed = await Promise.all([flush(upstream, toUpstream), flush(client, toClient)]);
    if (stopped || !flushed.every(Boolean)) return count;
    child = spawn(socat, SOCAT_ARGS, { stdio: ["ignore", "ignore", "pipe", client, upstream], env: {} });
    countTransfers(child, count);
    await new Promise<void>((resolve) => {
      child!.once("error", () => resolve());
      // socat holds its own copies now: closing Node's ends the connections only when it exits.
      child!.once("spawn", closeBoth);
      child!.once("close", () => resolve());
    });
    return count;
  };
  return {
    done: run().finally(closeBoth),
    stop: () => {
      stopped = true;
      if (child && child.exitCode === null && child.signalCode === null) child.kill("SIGKILL");
      closeBoth();
    },
  };
}

/** Adds up socat's "transferred N bytes from 3 to 4" (command → destination) and "from 4 to 3". */
function countTransfers(child: ChildProcess, count: Relayed): void {
  let rest = "";
  child.stderr!.setEncoding("latin1");
  child.stderr!.on("data", (text: string) => {
    const lines = (rest + text).split("\n");
    rest = lines.pop()!;
    for (const line of lines) {
      const m = / transferred (\d+) bytes from (\d+) to \d+$/.exec(line);
      if (m?.[2] === "3") count.sent += Number(m[1]);
      else if (m) count.received += Number(m[1]);
    }
  });
}

/**
 * Stops `socket` reading from its descriptor and returns what it had read already. Readable.read
 * may ask the handle to read again, but that read happens on a later turn of the event loop:
 * stopping it in the same turn leaves every further byte in the kernel, for socat.
 */
function takeBuffered(socket: net.Socket): Buffer[] {
  const chunks: Buffer[] = [];
  for (let c = socket.read() as Buffer | null; c; c = socket.read() as Buffer | null) chunks.push(c);
  (socket as net.Socket & { _handle?: { readStop?: () => number } | null })._handle?.readStop?.();
  return chunks;
}

/** Writes `bytes` and resolves once the kernel has them: true, or false when the socket failed first. */
function flush(socket: net.Socket, bytes: Buffer): Promise<boolean> {
  if (bytes.length === 0) return Promise.resolve(!socket.destroyed);
  return new Promise((resolve) => socket.write(bytes, (err) => resolve(!err)));
}
