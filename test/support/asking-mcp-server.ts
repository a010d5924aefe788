// A Streamable HTTP MCP server on loopback (one session, official SDK) whose tools ask the user
// a question (elicitation) once `together` calls are under way, so questions of concurrent
// calls overlap:
//   ask {who}      asks on the call's own response stream (relatedRequestId, as the SDK's
//                  servers do when a tool handler passes its request id);
//   ask-loose {who} asks without naming the call (the question goes on the session's own stream);
//   link {who}     asks the user to open a link (URL mode), on the call's stream.
// Each returns "<who>: <action> <content as JSON>".
import { randomUUID } from "node:crypto";
import { createServer, type Server } from "node:http";
import { McpServer } from "@modelcontextprotocol/sdk/server/mcp.js";
import { StreamableHTTPServerTransport } from "@modelcontextprotocol/sdk/server/streamableHttp.js";
import { z } from "zod";

export interface AskingMcpServer {
  url: string;
  /** How many calls must be under way before any of them asks (default 1). */
  together: number;
  close(): Promise<void>;
}

export async function startAskingMcpServer(): Promise<AskingMcpServer> {
  const state = { together: 1, started: 0 };
  let release: () => void = () => {};
  let gate = new Promise<void>((r) => (release = r));
  /** Resolves once `together` calls have arrived (counted from the last release). */
  const arrive = async (): Promise<void> => {
    state.started++;
    if (state.started >= state.together) {
      state.started = 0;
      const open = release;
      gate = new Promise<void>((r) => (release = r));
      open();
      return;
    }
    await gate;
  };

  const mcp = new McpServer({ name: "asking", version: "1.0.0" });
  const nameSchema = { type: "object" as const, properties: { name: { type: "string" as const, title: "Name" } }, required: ["name"] };
  const reply = (who: string, r: { action: string; content?: unknown }) => ({
    content: [{ type: "text" as const, text: `${who}: ${r.action}${r.content ? ` ${JSON.stringify(r.content)}` : ""}` }],
  });
  mcp.registerTool("ask", { description: "Asks on the call's own stream.", inputSchema: { who: z.string() } }, async ({ who }, extra) => {
    await arrive();
    const r = await mcp.server.elicitInput({ message: `Who is calling for ${who}?`, requestedSchema: nameSchema }, { relatedRequestId: extra.requestId });
    return reply(who, r);
  });
  mcp.registerTool("ask-loose", { description: "Asks without naming the call.", inputSchema: { who: z.string() } }, async ({ who }) => {
    await arrive();
    const r = await mcp.server.elicitInput({ message: `Who is calling for ${who}?`, requestedSchema: nameSchema });
    return reply(who, r);
  });
  mcp.registerTool("link", { description: "Asks the user to open a link.", inputSchema: { who: z.string() } }, async ({ who }, extra) => {
    await arrive();
    const r = await mcp.server.elicitInput({ mode: "url", message: `Sign in for ${who}.`, url: "https://auth.example/sign-in", elicitationId: randomUUID() }, { relatedRequestId: extra.requestId });
    return reply(who, r);
  });

  const transport = new StreamableHTTPServerTransport({ sessionIdGenerator: () => randomUUID() });
  await mcp.connect(transport);
  const http: Server = createServer((req, res) => {
    if (new URL(req.url ?? "/", "http://x").pathname !== "/mcp") return void res.writeHead(404).end();
    void transport.handleRequest(req, res);
  });
  await new Promise<void>((resolve) => http.listen(0, "127.0.0.1", () => resolve()));
  return {
    url: `http://127.0.0.1:${(http.address() as { port: number }).port}/mcp`,
    get together() {
      return state.together;
    },
    set together(n: number) {
      state.together = n;
      state.started = 0;
    },
    close: async () => {
      await mcp.close().catch(() => {});
      await new Promise<void>((resolve) => {
        http.close(() => resolve());
        http.closeAllConnections();
      });
    },
  };
}
