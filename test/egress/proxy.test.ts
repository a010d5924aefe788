// The egress proxy on its Unix socket, spoken to as a client in a sandbox would: SOCKS5 (names
// resolved by the proxy), CONNECT and a plain request; a refusal says why; each connection is
// recorded with its bytes once it ends.
import { once } from "node:events";
import { createServer, type Server } from "node:http";
import net, { type AddressInfo } from "node:net";
import { readdirSync, readFileSync } from "node:fs";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { findSocat } from "../../src/egress/relay.ts";
import { waitFor } from "../support/daemon.ts";
import { testEgress } from "../support/egress.ts";

let server: Server;
let port: number;
beforeAll(async () => {
  server = createServer((req, res) => res.end(`hello ${req.url}`));
  server.listen(0, "127.0.0.1");
  await once(server, "listening");
  port = (server.address() as AddressInfo).port;
});
afterAll(() => server.close());

const requester = { what: "exec: test", session: "main", permit: async () => null };

/** Writes `chunks` in turn (each after the previous answer began), and resolves with everything read until the proxy closes. */
async function talk(socketPath: string, chunks: Buffer[]): Promise<Buffer> {
  const s = net.connect(socketPath);
  await once(s, "connect");
  const got: Buffer[] = [];
  s.on("data", (c: Buffer) => got.push(c));
  for (const [i, c] of chunks.entries()) {
    s.write(c);
    if (i < chunks.length - 1) await once(s, "data");
  }
  await once(s, "close");
  return Buffer.concat(got);
}

describe("the egress proxy", () => {
  it("SOCKS5 with a name: greets, connects to the resolved address, carries the request, records the bytes", async () => {
    const egress = testEgress({ allowPrivate: ["localhost"] });
    const proxy = await egress.open(requester);
    const socket = path.join(proxy.dir, proxy.socketName);
    const name = Buffer.from("localhost");
    const connect = Buffer.concat([Buffer.from([5, 1, 0, 3, name.length]), name, Buffer.from([port >> 8, port & 255])]);
    const request = Buffer.from("GET /socks HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n\r\n");
    const answer = await talk(socket, [Buffer.from([5, 1, 0]), connect, request]);
    expect([...answer.subarray(0, 12)]).toEqual([5, 0, 5, 0, 0, 1, 0, 0, 0, 0, 0, 0]);
    expect(answer.toString("latin1")).toMatch(/\r\n\r\nhello \/socks$/);
    await proxy.close();
    expect(egress.records).toEqual([{ host: "localhost", port, protocol: "socks5", decision: "connected", sent: request.length, received: answer.length - 12, what: "exec: test", session: "main" }]);
  });

  it("CONNECT to a refused host is answered 403 with the reason, and a plain request the same", async () => {
    const egress = testEgress();
    const proxy = await egress.open(requester);
    const socket = path.join(proxy.dir, proxy.socketName);
    const tunnel = await talk(socket, [Buffer.from(`CONNECT 127.0.0.1:${port} HTTP/1.1\r\nHost: 127.0.0.1:${port}\r\n\r\n`)]);
    const reason = "127.0.0.1 is a loopback address, not a public one; the owner can allow it in egress.allowPrivate";
    expect(tunnel.toString()).toMatch(new RegExp(`^HTTP/1.1 403 Forbidden\\r\\n[^]*\\r\\n\\r\\nHearth's egress policy refused 127.0.0.1:${port}: ${reason.replace(/[.;]/g, "\\$&")}\\n$`));
    const plain = await talk(socket, [Buffer.from(`GET http://127.0.0.1:${port}/x HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n`)]);
    expect(plain.toString()).toMatch(/^HTTP\/1.1 403 Forbidden\r\n/);
    expect(plain.toString()).toContain(`Hearth's egress policy refused 127.0.0.1:${port}: ${reason}\n`);
    await proxy.close();
    expect(egress.records.map((r) => [r.protocol, r.decision, r.reason])).toEqual([
      ["connect", "refused", reason],
      ["http", "refused", reason],
    ]);
  });

  it("tells the requester what it took in: every connection opened to a destination not in egress.own (egress.allow included), before its answer; not one refused, nor one to an own destination", async () => {
    const took: string[] = [];
    const taking = { ...requester, tookIn: (d: { host: string; port: number }) => took.push(`${d.host}:${d.port}`) };
    const egress = testEgress({ allowPrivate: ["127.0.0.1", "localhost"], allow: [`localhost:${port}`], deny: ["denied.example"], own: [] });
    const proxy = await egress.open(taking);
    const socket = path.join(proxy.dir, proxy.socketName);
    const name = Buffer.from("localhost");
    const socks = Buffer.concat([Buffer.from([5, 1, 0, 3, name.length]), name, Buffer.from([port >> 8, port & 255])]);
    await talk(socket, [Buffer.from([5, 1, 0]), socks, Buffer.from("GET /s HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n\r\n")]);
    expect(took).toEqual([`localhost:${port}`]);
    await talk(socket, [Buffer.from(`CONNECT 127.0.0.1:${port} HTTP/1.1\r\nHost: x\r\n\r\n`), Buffer.from("GET /c HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n")]);
    expect(await talk(socket, [Buffer.from(`GET http://127.0.0.1:${port}/p HTTP/1.1\r\nHost: 127.0.0.1:${port}\r\nConnection: close\r\n\r\n`)])).toBeTruthy();
    await talk(socket, [Buffer.from("CONNECT denied.example:443 HTTP/1.1\r\nHost: denied.example:443\r\n\r\n")]);
    expect(took).toEqual([`localhost:${port}`, `127.0.0.1:${port}`, `127.0.0.1:${port}`]);
    await proxy.close();

    const own = testEgress({ allowPrivate: ["127.0.0.1"], own: [`127.0.0.1:${port}`] });
    const ownProxy = await own.open(taking);
    await talk(path.join(ownProxy.dir, ownProxy.socketName), [Buffer.from(`GET http://127.0.0.1:${port}/own HTTP/1.1\r\nHost: 127.0.0.1:${port}\r\nConnection: close\r\n\r\n`)]);
    await ownProxy.close();
    expect(took).toHaveLength(3);
  });

  it("a SOCKS5 command other than CONNECT is refused (7), and a client that offers no method without authentication gets 0xff", async () => {
    const egress = testEgress({ allowPrivate: ["127.0.0.1"] });
    const proxy = await egress.open(requester);
    const socket = path.join(proxy.dir, proxy.socketName);
    const bind = await talk(socket, [Buffer.from([5, 1, 0]), Buffer.from([5, 2, 0, 1, 127, 0, 0, 1, port >> 8, port & 255])]);
    expect([...bind]).toEqual([5, 0, 5, 7, 0, 1, 0, 0, 0, 0, 0, 0]);
    const auth = await talk(socket, [Buffer.from([5, 1, 2])]);
    expect([...auth]).toEqual([5, 0xff]);
    await proxy.close();
    expect(egress.records).toEqual([]);
  });

  it("answers a client that half-closes (shutdown(SHUT_WR)) right after its request: a plain request, and SOCKS5 sent in one piece", async () => {
    const egress = testEgress({ allowPrivate: ["127.0.0.1", "localhost"] });
    const proxy = await egress.open(requester);
    const socket = path.join(proxy.dir, proxy.socketName);
    const halfClosed = async (bytes: Buffer): Promise<string> => {
      const s = net.connect(socket);
      await once(s, "connect");
      const got: Buffer[] = [];
      s.on("data", (c: Buffer) => got.push(c));
      s.end(bytes);
      await once(s, "close");
      return Buffer.concat(got).toString("latin1");
    };
    const plain = await halfClosed(Buffer.from(`GET http://127.0.0.1:${port}/half HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n`));
    expect(plain).toMatch(/^HTTP\/1.1 200 OK\r\n[^]*\r\n\r\nhello \/half$/);
    const name = Buffer.from("localhost");
    const request = Buffer.from("GET /half-socks HTTP/1.1\r\nHost: localhost\r\n\r\n");
    const socks = await halfClosed(Buffer.concat([Buffer.from([5, 1, 0, 5, 1, 0, 3, name.length]), name, Buffer.from([port >> 8, port & 255]), request]));
    expect(socks).toMatch(/^\x05\x00\x05\x00\x00\x01\x00{6}HTTP\/1.1 200 OK\r\n[^]*\r\n\r\nhello \/half-socks$/);
    await proxy.close();
    expect(egress.records.map((r) => [r.protocol, r.decision, r.sent])).toEqual([
      ["http", "connected", 0],
      ["socks5", "connected", request.length],
    ]);
  });
});

/** A destination that speaks first (as an ssh server does): sends `down` bytes at once, reads until the client's end, then ends too. */
async function speakingServer(down: number): Promise<{ port: number; got: Promise<number>; close: () => void }> {
  let gotIt!: (n: number) => void;
  const got = new Promise<number>((r) => (gotIt = r));
  const srv = net.createServer((s) => {
    let n = 0;
    s.on("data", (c: Buffer) => (n += c.length));
    s.on("end", () => {
      gotIt(n);
      s.end();
    });
    s.write(Buffer.alloc(down, 9));
  });
  srv.listen(0, "127.0.0.1");
  await once(srv, "listening");
  return { port: (srv.address() as AddressInfo).port, got, close: () => srv.close() };
}

/** The socat processes this test process started (children of any of its threads). */
function socatChildren(): number[] {
  const pids: number[] = [];
  for (const task of readdirSync(`/proc/${process.pid}/task`)) {
    let children = "";
    try {
      children = readFileSync(`/proc/${process.pid}/task/${task}/children`, "utf8");
    } catch {
      continue;
    }
    for (const pid of children.split(" ").filter(Boolean).map(Number)) {
      try {
        if (readFileSync(`/proc/${pid}/cmdline`, "utf8").split("\0").some((a) => a.startsWith("FD:3"))) pids.push(pid);
      } catch {
        // exited meanwhile
      }
    }
  }
  return pids;
}

describe.each([
  ["socat", findSocat()],
  ["Node's pipes", null],
] as const)("a tunnel carried by %s", (_name, socat) => {
  it("counts exactly the bytes each way, and each side sees the other's end", async () => {
    if (_name === "socat") expect(socat, "socat is needed for this test (apt-get install socat)").not.toBeNull();
    const dest = await speakingServer(1_000_000);
    const egress = testEgress({ allowPrivate: ["127.0.0.1"] }, undefined, socat);
    const proxy = await egress.open(requester);
    const s = net.connect(path.join(proxy.dir, proxy.socketName));
    await once(s, "connect");
    // The first 1,000 bytes go with the request head, as a client that does not wait for the answer sends them.
    s.write(Buffer.concat([Buffer.from(`CONNECT 127.0.0.1:${dest.port} HTTP/1.1\r\nHost: 127.0.0.1:${dest.port}\r\n\r\n`), Buffer.alloc(1_000, 1)]));
    const got: Buffer[] = [];
    s.on("data", (c: Buffer) => got.push(c));
    const established = "HTTP/1.1 200 Connection Established\r\n\r\n";
    await waitFor("all that the destination sent", () => got.reduce((n, c) => n + c.length, 0) >= established.length + 1_000_000);
    // The command ends its side: the destination sees the end, ends its own, and the command sees that.
    const ended = once(s, "end");
    s.end(Buffer.alloc(54_321, 2));
    expect(await dest.got).toBe(55_321);
    await ended;
    const answer = Buffer.concat(got);
    expect(answer.subarray(0, established.length).toString()).toBe(established);
    expect(answer.length - established.length).toBe(1_000_000);
    await proxy.close();
    dest.close();
    expect(egress.records).toEqual([{ host: "127.0.0.1", port: dest.port, protocol: "connect", decision: "connected", sent: 55_321, received: 1_000_000, what: "exec: test", session: "main" }]);
  });

  it("the proxy's close ends an open tunnel, records it and leaves no process behind", async () => {
    const held = new Set<net.Socket>();
    const srv = net.createServer((c) => {
      held.add(c);
      c.on("close", () => held.delete(c));
      c.write("banner\n");
    });
    srv.listen(0, "127.0.0.1");
    await once(srv, "listening");
    const port2 = (srv.address() as AddressInfo).port;
    const egress = testEgress({ allowPrivate: ["127.0.0.1"] }, undefined, socat);
    const proxy = await egress.open(requester);
    const s = net.connect(path.join(proxy.dir, proxy.socketName));
    await once(s, "connect");
    const name = Buffer.from("127.0.0.1");
    s.write(Buffer.concat([Buffer.from([5, 1, 0, 5, 1, 0, 3, name.length]), name, Buffer.from([port2 >> 8, port2 & 255])]));
    const got: Buffer[] = [];
    s.on("data", (c: Buffer) => got.push(c));
    await waitFor("the banner through the tunnel", () => Buffer.concat(got).toString("latin1").endsWith("banner\n"));
    if (socat) await waitFor("socat carrying the tunnel", () => socatChildren().length === 1);
    const clientClosed = once(s, "close");
    await proxy.close();
    expect(socatChildren()).toEqual([]);
    await clientClosed;
    await waitFor("the destination's side closed", () => held.size === 0);
    srv.close();
    expect(egress.records).toEqual([{ host: "127.0.0.1", port: port2, protocol: "socks5", decision: "connected", sent: 0, received: 7, what: "exec: test", session: "main" }]);
  });
});
