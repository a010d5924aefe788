// A stdio MCP server Hearth starts runs in the exec sandbox behind the egress proxy: a connection
// the policy refuses does not happen, whether the server asks the proxy or tries directly; opted
// out (`sandbox: false`), the same server reaches the same listener.
import { createServer, type Server } from "node:http";
import { mkdirSync, mkdtempSync, readFileSync, realpathSync, rmSync } from "node:fs";
import type { AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { sandboxedLauncher } from "../../src/agent/mcp/launch.ts";
import { McpManager } from "../../src/agent/mcp/manager.ts";
import { mcpSchema } from "../../src/agent/mcp/config.ts";
import { probeBwrap, resolveExecSandbox } from "../../src/agent/tools/sandbox.ts";
import { silentLogger } from "../../src/process/log.ts";
import { testEgress, unattendedRequester } from "../support/egress.ts";

const probe = probeBwrap();
if (!probe.ok) console.warn(`MCP sandbox tests skipped: ${probe.detail}`);
const SERVER = fileURLToPath(new URL("../support/net-mcp-server.ts", import.meta.url));

let listener: Server;
let port: number;
const hits: string[] = [];
let home: string;
beforeAll(async () => {
  listener = createServer((req, res) => (hits.push(req.url ?? ""), res.end("hello")));
  await new Promise<void>((r) => listener.listen(0, "127.0.0.1", r));
  port = (listener.address() as AddressInfo).port;
  home = realpathSync(mkdtempSync(path.join(tmpdir(), "hearth-mcpsb-")));
  mkdirSync(path.join(home, "workspace"));
});
afterAll(() => {
  listener.close();
  rmSync(home, { recursive: true, force: true });
});

async function callBoth(sandbox: boolean, allowPrivate: string[]): Promise<{ get: string; connect: string; home: string; records: string[] }> {
  const workspace = path.join(home, "workspace");
  const sb = resolveExecSandbox({ mode: "bwrap", network: true, home, workspace });
  const egress = testEgress({ allowPrivate });
  const config = mcpSchema.parse({ servers: { net: { command: process.execPath, args: [SERVER], sandbox } } });
  const mcp = new McpManager({
    config,
    log: silentLogger,
    launch: sandboxedLauncher({ sandbox: () => sb, egress, optedOut: (n) => config.servers[n]?.sandbox === false, requester: (n) => unattendedRequester(`MCP server ${n}`, `mcp:${n}`), workspace, homeOf: (n) => path.join(home, "mcp-home", n) }),
  });
  mcp.start();
  try {
    await mcp.settled();
    const tool = (name: string) => mcp.tools().find((t) => t.name === `mcp__net__${name}`)!;
    const ctx = { signal: new AbortController().signal, workspace, scope: "main" as const, sessionKey: "main", log: silentLogger };
    const get = (await tool("get").execute({ url: `http://127.0.0.1:${port}/from-server` }, ctx)).content;
    const connect = (await tool("connect").execute({ port }, ctx)).content;
    const own = (await tool("home").execute({}, ctx)).content;
    return { get, connect, home: own, records: egress.records.map((r) => `${r.decision} ${r.host}:${r.port} ${r.what}${r.reason ? ` — ${r.reason}` : ""}`) };
  } finally {
    await mcp.stop();
  }
}

describe.skipIf(!probe.ok)("a stdio MCP server in the sandbox", () => {
  it("cannot reach a loopback listener the policy refuses, through the proxy or around it", async () => {
    const r = await callBoth(true, []);
    // Node's fetch tunnels through the proxy with CONNECT; how it words the refused tunnel is its own.
    expect(r.get).toMatch(/^failed: /);
    expect(r.connect).toBe("failed: ECONNREFUSED");
    expect(r.records).toEqual([`refused 127.0.0.1:${port} MCP server net — 127.0.0.1 is a loopback address, not a public one; the owner can allow it in egress.allowPrivate`]);
    expect(hits).toEqual([]);
  });

  it("reaches it through the proxy once the host is in egress.allowPrivate, and still not directly", async () => {
    const r = await callBoth(true, ["127.0.0.1"]);
    expect(r.get).toBe("HTTP 200 hello");
    expect(r.connect).toBe("failed: ECONNREFUSED");
    expect(hits.splice(0)).toEqual(["/from-server"]);
    // Its HOME is a folder of its own in Hearth's home, writable and kept: npx and uvx have a cache.
    expect(r.home).toBe(`wrote ${path.join(home, "mcp-home", "net")}/probe.txt`);
    expect(readFileSync(path.join(home, "mcp-home", "net", "probe.txt"), "utf8")).toBe("kept\n");
  });

  it("opted out (sandbox: false), it reaches the listener directly, and the proxy is not asked", async () => {
    const r = await callBoth(false, []);
    expect(r.get).toBe("HTTP 200 hello");
    expect(r.connect).toBe("connected");
    expect(r.records).toEqual([]);
    expect(hits.splice(0)).toEqual(["/from-server"]);
  });
});
