// The egress proxy on its Unix socket, spoken to as a client in a sandbox would: SOCKS5 (names
// resolved by the proxy), CONNECT and a plain request; a refusal says why; each connection is
// recorded with its bytes once it ends.
import { once } from "node:events";
import { createServer, type Server } from "node:http";
import net, { type AddressInfo } from "node:net";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
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
});
