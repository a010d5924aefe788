// A stdio MCP server (official SDK) with two tools that try the network, to see what a server's
// process can reach: `get {url}` fetches with node's fetch (which uses HTTP_PROXY when
// NODE_USE_ENV_PROXY is set, as the sandbox sets it), `connect {port}` opens a raw TCP connection
// to 127.0.0.1, `home` writes a file in $HOME. Each answers what happened, in one line.
import { writeFileSync } from "node:fs";
import net from "node:net";
import { McpServer } from "@modelcontextprotocol/sdk/server/mcp.js";
import { StdioServerTransport } from "@modelcontextprotocol/sdk/server/stdio.js";
import { z } from "zod";

const server = new McpServer({ name: "net", version: "1.0.0" });
server.registerTool("get", { inputSchema: { url: z.string() } }, async ({ url }) => {
  try {
    const res = await fetch(url);
    return { content: [{ type: "text", text: `HTTP ${res.status} ${(await res.text()).trim()}` }] };
  } catch (err) {
    return { content: [{ type: "text", text: `failed: ${(err as { cause?: Error }).cause?.message ?? (err as Error).message}` }] };
  }
});
server.registerTool("connect", { inputSchema: { port: z.number() } }, ({ port }) =>
  new Promise((resolve) => {
    const s = net.connect({ host: "127.0.0.1", port }, () => (s.end("x"), resolve({ content: [{ type: "text", text: "connected" }] })));
    s.on("error", (err) => resolve({ content: [{ type: "text", text: `failed: ${(err as NodeJS.ErrnoException).code}` }] }));
  }),
);
server.registerTool("home", { inputSchema: {} }, () => {
  try {
    writeFileSync(`${process.env.HOME}/probe.txt`, "kept\n");
    return { content: [{ type: "text", text: `wrote ${process.env.HOME}/probe.txt` }] };
  } catch (err) {
    return { content: [{ type: "text", text: `failed: ${(err as NodeJS.ErrnoException).code}` }] };
  }
});
await server.connect(new StdioServerTransport());
