// A small MCP server (stdio) that misbehaves on request, for Hearth's fault tests.
//   node fault-mcp-server.ts [--crash-at-start] [--ask] [--catalog]
// Tools: echo {text}; crash (exits mid-call); hang (never answers); big (1 MB of text);
// grow (adds the tool "extra", which sends tools/list_changed); env {name} (a variable's value);
// with --ask also ask {together?} (asks the user for a name and a yes/no through elicitation,
// returns what came back; with `together`, only once that many calls of it are under way).
// Each start appends a line to $FAULT_MCP_STARTS when that is set, so tests can count restarts.
import { appendFileSync } from "node:fs";
import { McpServer } from "@modelcontextprotocol/sdk/server/mcp.js";
import { StdioServerTransport } from "@modelcontextprotocol/sdk/server/stdio.js";
import { z } from "zod";

if (process.env.FAULT_MCP_STARTS) appendFileSync(process.env.FAULT_MCP_STARTS, `${process.pid}\n`);
if (process.argv.includes("--crash-at-start")) {
  process.stderr.write("fault server: refusing to start (--crash-at-start)\n");
  process.exit(3);
}

const server = new McpServer({ name: "fault", version: "1.0.0" });
const text = (t: string) => ({ content: [{ type: "text" as const, text: t }] });

server.registerTool("echo", { description: "Echoes text.", inputSchema: { text: z.string() } }, ({ text: t }) => text(`echo: ${t}`));
server.registerTool("crash", { description: "Exits the server in the middle of the call." }, () => {
  process.stderr.write("fault server: crashing on purpose\n");
  process.exit(7);
});
server.registerTool("hang", { description: "Never answers." }, () => new Promise<never>(() => {}));
server.registerTool("big", { description: "Returns 1 MB of text." }, () => text(`BEGIN${"x".repeat(1024 * 1024 - 8)}END`));
server.registerTool("grow", { description: "Adds the tool extra." }, () => {
  server.registerTool("extra", { description: "Appeared later." }, () => text("extra here"));
  return text("grown");
});
server.registerTool("env", { description: "Returns an environment variable.", inputSchema: { name: z.string() } }, ({ name }) =>
  text(process.env[name] === undefined ? `${name} is not set` : `${name}=${process.env[name]}`),
);

/** Calls of "ask" that wait for `together` of them to be under way before asking. */
const waiting: Array<() => void> = [];
if (process.argv.includes("--ask")) server.registerTool("ask", { description: "Asks the user who they are.", inputSchema: { together: z.number().optional() } }, async ({ together }) => {
  if (together !== undefined) {
    const all = new Promise<void>((resolve) => waiting.push(resolve));
    if (waiting.length >= together) for (const go of waiting.splice(0)) go();
    await all;
  }
  const r = await server.server.elicitInput({
    message: "Who are you?",
    requestedSchema: { type: "object", properties: { name: { type: "string", title: "Name", minLength: 2 }, ok: { type: "boolean", title: "Go ahead?" } }, required: ["name", "ok"] },
  });
  return text(`${r.action}${r.content ? ` ${JSON.stringify(r.content)}` : ""}`);
});

if (process.argv.includes("--catalog")) {
  server.registerResource("today", "fault://notes/today", { description: "Today's notes.", mimeType: "text/plain" }, (uri) => ({ contents: [{ uri: uri.href, text: "Nothing yet." }] }));
  server.registerResource("plan", "fault://notes/plan", { mimeType: "text/plain" }, (uri) => ({ contents: [{ uri: uri.href, text: "Ship it." }] }));
  server.registerPrompt("summarize", { description: "Summarizes the notes.", argsSchema: { length: z.string().optional() } }, () => ({
    messages: [{ role: "user" as const, content: { type: "text" as const, text: "Summarize the notes." } }],
  }));
}

await server.connect(new StdioServerTransport());
// The daemon's stdin closing means it is gone: leave with it.
process.stdin.on("close", () => process.exit(0));
