// mcp.servers in config.json: defaults, and clear refusals of servers that cannot work.
import { describe, expect, it } from "vitest";
import { parseConfig } from "../../../src/config/config.ts";

describe("mcp.servers", () => {
  const parse = (servers: unknown) => parseConfig({ mcp: { servers } }, { home: "/tmp/h", env: {} });
  it("fills a stdio server's defaults", () => {
    expect(parse({ gh: { command: "npx", args: ["-y", "x"] } }).mcp.servers.gh).toEqual({
      enabled: true,
      scope: "main",
      timeoutMs: 60_000,
      answerTimeoutMs: 300_000,
      roots: "workspace",
      tools: { deny: [] },
      sandbox: true,
      trust: [],
      command: "npx",
      args: ["-y", "x"],
      env: {},
      headers: {},
    });
  });
  it("refuses a server with neither or both of command and url, and a name with underscores", () => {
    expect(() => parse({ a: {} })).toThrow('✖ give "command" (a stdio server) or "url" (a Streamable HTTP server)\n  → at mcp.servers.a');
    expect(() => parse({ a: { command: "x", url: "http://127.0.0.1/mcp" } })).toThrow('✖ give either "command" (stdio) or "url" (HTTP), not both\n  → at mcp.servers.a');
    expect(() => parse({ my_server: { command: "x" } })).toThrow("✖ server names are 1–32 letters, digits or hyphens (they become part of tool names)\n  → at mcp.servers.my_server");
  });
});
