// Which chat a server's question goes to when calls run at the same time: the chat of the call
// the question came with (Streamable HTTP: the call's own response stream), the only call under
// way when nothing ties it to one, and nobody — declined, with a log line — when several are
// under way and nothing tells them apart. A link to open (URL mode) is asked only in the
// owner's private chat (the main scope).
import { fileURLToPath } from "node:url";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { mcpServerSchema } from "../../../src/agent/mcp/config.ts";
import { McpManager } from "../../../src/agent/mcp/manager.ts";
import { createLogger } from "../../../src/process/log.ts";
import { startAskingMcpServer, type AskingMcpServer } from "../../support/asking-mcp-server.ts";

const FAULT = fileURLToPath(new URL("../../support/fault-mcp-server.ts", import.meta.url));
let http: AskingMcpServer;
let manager: McpManager;
const lines: string[] = [];

beforeAll(async () => {
  http = await startAskingMcpServer();
  manager = new McpManager({
    config: {
      servers: {
        web: mcpServerSchema.parse({ url: http.url, timeoutMs: 20_000 }),
        local: mcpServerSchema.parse({ command: process.execPath, args: [FAULT, "--ask"], timeoutMs: 20_000 }),
      },
    },
    log: createLogger({ level: "debug", sink: { write: (l) => lines.push(l) } }),
    backoff: { baseMs: 60_000 },
  });
  manager.start();
  await manager.settled();
  expect(manager.views().map((v) => [v.name, v.status, v.transport])).toEqual([
    ["local", "ready", "stdio"],
    ["web", "ready", "http"],
  ]);
});
afterAll(async () => {
  await manager.stop();
  await http.close();
});

/** A chat whose person answers every question with `answer`; records what it was asked. */
function chat(answer: string) {
  const asked: string[] = [];
  return { asked, ask: async (text: string) => (asked.push(text), answer) };
}

const run = (server: string, tool: string, input: Record<string, unknown>, from: { ask?: ReturnType<typeof chat>["ask"]; scope: "main" | "shared" }) =>
  manager.server(server)!.call(tool, input, new AbortController().signal, from);

const declines = () => lines.filter((l) => l.includes('"event":"mcp.elicitation_declined"')).map((l) => (JSON.parse(l) as { reason: string }).reason);
const question = (who: string) => `The MCP server "web" asks: Who is calling for ${who}?\n(Answer "decline" to refuse, "cancel" to stop.)\nName\n(text, required)`;

describe("a server's question while two chats' calls run at the same time", () => {
  it("goes to the chat of the call it came with, and that chat's answer goes back to that call", async () => {
    http.together = 2;
    lines.length = 0;
    const ann = chat("Ann");
    const bob = chat("Bob");
    const [a, b] = await Promise.all([run("web", "ask", { who: "alpha" }, { ask: ann.ask, scope: "main" }), run("web", "ask", { who: "beta" }, { ask: bob.ask, scope: "shared" })]);
    expect([a, b]).toEqual([{ content: 'alpha: accept {"name":"Ann"}' }, { content: 'beta: accept {"name":"Bob"}' }]);
    expect(ann.asked).toEqual([question("alpha")]);
    expect(bob.asked).toEqual([question("beta")]);
    expect(declines()).toEqual([]);
  });

  it("is declined, with a log line, when nothing says which call it belongs to (HTTP without the call's stream, stdio)", async () => {
    http.together = 2;
    lines.length = 0;
    const ann = chat("Ann");
    const bob = chat("Bob");
    const both = await Promise.all([run("web", "ask-loose", { who: "alpha" }, { ask: ann.ask, scope: "main" }), run("web", "ask-loose", { who: "beta" }, { ask: bob.ask, scope: "main" })]);
    expect(both).toEqual([{ content: "alpha: decline" }, { content: "beta: decline" }]);
    const local = await Promise.all([run("local", "ask", { together: 2 }, { ask: ann.ask, scope: "main" }), run("local", "ask", { together: 2 }, { ask: bob.ask, scope: "main" })]);
    expect(local).toEqual([{ content: "decline" }, { content: "decline" }]);
    expect(ann.asked).toEqual([]);
    expect(bob.asked).toEqual([]);
    const reason = "2 calls to this server are under way and nothing in the question says which one it belongs to";
    expect(declines()).toEqual([reason, reason, reason, reason]);
  });

  it("goes to the only call under way when nothing ties it to one", async () => {
    http.together = 1;
    const ann = chat("Ann");
    expect(await run("web", "ask-loose", { who: "alpha" }, { ask: ann.ask, scope: "main" })).toEqual({ content: 'alpha: accept {"name":"Ann"}' });
    expect(ann.asked).toEqual([question("alpha")]);
  });
});

describe("a link to open (URL mode)", () => {
  it("is asked in the owner's private chat and declined, unseen, in a shared chat", async () => {
    http.together = 1;
    lines.length = 0;
    const owner = chat("yes");
    expect(await run("web", "link", { who: "alpha" }, { ask: owner.ask, scope: "main" })).toEqual({ content: "alpha: accept {}" });
    expect(owner.asked).toEqual(['The MCP server "web" asks you to open this link: Sign in for alpha.\nhttps://auth.example/sign-in\nAnswer "yes" once you opened it, or "decline".']);
    const member = chat("yes");
    expect(await run("web", "link", { who: "beta" }, { ask: member.ask, scope: "shared" })).toEqual({ content: "beta: decline" });
    expect(member.asked).toEqual([]);
    expect(declines()).toEqual(["a link to open is sent only to the owner's private chat, and the call came from a shared chat"]);
  });
});
