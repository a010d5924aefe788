// The client features against server-everything (stdio): roots (the workspace), progress that
// keeps a long call alive past its timeout, cancellation of a running call, resources read
// through mcp_read_resource, and the server's prompts in its catalog.
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { mcpServerSchema } from "../../../src/agent/mcp/config.ts";
import { McpManager } from "../../../src/agent/mcp/manager.ts";
import { silentLogger } from "../../../src/process/log.ts";

const EVERYTHING = fileURLToPath(new URL("../../../node_modules/@modelcontextprotocol/server-everything/dist/index.js", import.meta.url));

let workspace: string;
let manager: McpManager;
beforeAll(async () => {
  workspace = mkdtempSync(join(tmpdir(), "hearth-ws-"));
  manager = new McpManager({
    config: { servers: { everything: mcpServerSchema.parse({ command: process.execPath, args: [EVERYTHING, "stdio"], timeoutMs: 20_000 }) } },
    log: silentLogger,
    workspace,
    backoff: { baseMs: 60_000 },
  });
  manager.start();
  await manager.settled();
});
afterAll(async () => {
  await manager.stop();
  rmSync(workspace, { recursive: true, force: true });
});

const ctx = (signal = new AbortController().signal, scope: "main" | "shared" = "main") => ({ signal, scope }) as never;
const tool = (name: string) => manager.tools().find((t) => t.name === name)!;

describe("server-everything as a client sees it", () => {
  it("gets the workspace as its root", async () => {
    const out = await tool("mcp__everything__get-roots-list").execute({}, ctx());
    expect(out.content).toContain(`Current MCP Roots (1 total):\n\n1. ${workspace.split("/").at(-1)}\n   URI: ${pathToFileURL(workspace).href}`);
  });

  it("a call that reports progress outlives its timeout; a stopped call is cancelled at once", async () => {
    const conn = manager.server("everything")!;
    Object.assign(conn.config, { timeoutMs: 1500 });
    try {
      const done = await conn.call("trigger-long-running-operation", { duration: 3, steps: 6 }, new AbortController().signal);
      expect(done.isError).toBeUndefined();
      expect(done.content).toContain("Long running operation completed");
      const stop = new AbortController();
      const started = Date.now();
      const running = conn.call("trigger-long-running-operation", { duration: 30, steps: 30 }, stop.signal);
      stop.abort();
      expect(await running).toEqual({ isError: true, content: "Cancelled: the run was stopped while everything ran trigger-long-running-operation." });
      expect(Date.now() - started).toBeLessThan(10_000);
      expect((await conn.call("echo", { message: "still here" }, new AbortController().signal)).content).toBe("Echo: still here");
    } finally {
      Object.assign(conn.config, { timeoutMs: 20_000 });
    }
  });

  it("lists and reads resources through mcp_read_resource, and lists its prompts", async () => {
    const read = tool("mcp_read_resource");
    const listed = await read.execute({ server: "everything" }, ctx());
    const uri = "demo://resource/static/document/architecture.md";
    expect(listed.content).toContain(`${uri}  architecture.md — Static document file exposed from /docs: architecture.md`);
    const doc = await read.execute({ server: "everything", uri }, ctx());
    expect(doc.isError).toBeUndefined();
    expect(doc.content.startsWith(`[resource ${uri}]\n`)).toBe(true);
    expect(await read.execute({ server: "everything", uri }, ctx(undefined, "shared"))).toEqual({
      isError: true,
      content: 'mcp_read_resource on "everything" belongs to an MCP server that only the owner\'s private chat may use.',
    });
    expect(manager.permission("mcp_read_resource", "shared")).toBe("mcp_read_resource reads MCP servers that only the owner's private chat may use.");
    const catalog = await manager.catalog("everything");
    expect(catalog && "prompts" in catalog ? catalog.prompts.map((p) => p.name) : catalog).toEqual(expect.arrayContaining(["simple-prompt", "args-prompt", "resource-prompt"]));
  });
});
