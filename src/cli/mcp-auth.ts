// `hearth mcp login NAME`, `hearth mcp logout NAME` and `hearth mcp call NAME TOOL [JSON]`: the
// owner's side of an OAuth-protected MCP server, and a way to try any server's tool by hand with
// the daemon's own client code (authorization included).
import { spawn } from "node:child_process";
import { createInterface } from "node:readline";
import { beginLogin } from "../agent/mcp/login.ts";
import { McpManager } from "../agent/mcp/manager.ts";
import type { ServerView } from "../agent/mcp/server-view.ts";
import type { AskPerson } from "../agent/tool.ts";
import { McpAuthStore } from "../agent/mcp/oauth-store.ts";
import { applyHomeEnv, loadConfig } from "../config/config.ts";
import type { Config } from "../config/schema.ts";
import { homePaths } from "../config/home.ts";
import { hearthCmd } from "../process/hearth-command.ts";
import { silentLogger } from "../process/log.ts";
import { parse, UsageError } from "./args.ts";
import { connectDaemon } from "./client.ts";

export interface McpIO {
  stdin?: NodeJS.ReadableStream;
  stdout: NodeJS.WritableStream;
  stderr: NodeJS.WritableStream;
}

function serverConfig(home: string, name: string | undefined, action: string): { config: Config; name: string } {
  if (!name) throw new UsageError(`mcp ${action} needs one server NAME.`);
  // As the daemon has them: `${VAR}` in the server's auth and headers expands from the same variables.
  applyHomeEnv(home);
  const config = loadConfig({ home });
  if (!config.mcp.servers[name]) throw new UsageError(`No MCP server "${name}" is configured. \`${hearthCmd("mcp")}\` lists them.`);
  return { config, name };
}

export async function runMcpLogin(home: string, args: string[], io: McpIO): Promise<number> {
  const { values, positionals } = parse(args, { "no-browser": { type: "boolean" } }, true);
  if (positionals.length > 1) throw new UsageError(`Unexpected arguments: ${positionals.slice(1).join(" ")}`);
  const { config, name } = serverConfig(home, positionals[0], "login");
  const server = config.mcp.servers[name]!;
  if (!server.url) throw new UsageError(`The MCP server "${name}" runs as a command (stdio): only HTTP servers log in.`);
  const ok = await login(home, config, name, io, values["no-browser"] !== true);
  if (!ok) return 1;
  await tellDaemon(home, name, io);
  return 0;
}

export async function runMcpLogout(home: string, args: string[], io: McpIO): Promise<number> {
  const { positionals } = parse(args, {}, true);
  if (positionals.length > 1) throw new UsageError(`Unexpected arguments: ${positionals.slice(1).join(" ")}`);
  const { name } = serverConfig(home, positionals[0], "logout");
  const forgot = new McpAuthStore(homePaths(home).mcpAuth).forget(name);
  io.stdout.write(forgot ? `Logged out of "${name}": its tokens and client registration are forgotten.\n` : `Hearth was not logged in to "${name}".\n`);
  if (forgot) await tellDaemon(home, name, io);
  return 0;
}

/** Runs a login to the end; prints the link on a line of its own. False when it failed. */
async function login(home: string, config: Config, name: string, io: McpIO, openBrowser: boolean): Promise<boolean> {
  const store = new McpAuthStore(homePaths(home).mcpAuth);
  let start;
  try {
    start = await beginLogin({ name, config: config.mcp.servers[name]!, store });
  } catch (err) {
    io.stderr.write(`Cannot log in to "${name}": ${err instanceof Error ? err.message : String(err)}\n`);
    return false;
  }
  if (start.type === "redirect") {
    io.stdout.write(`Open this link in a browser on this machine to log in to "${name}":\n${start.authorizationUrl}\n`);
    if (openBrowser) tryOpenBrowser(start.authorizationUrl);
    io.stderr.write("Waiting for the browser to come back…\n");
    const end = await start.done;
    if (end.type === "failed") {
      io.stderr.write(`The login to "${name}" failed: ${end.error}\n`);
      return false;
    }
  }
  io.stdout.write(`Logged in to "${name}".\n`);
  return true;
}

async function tellDaemon(home: string, name: string, io: McpIO): Promise<void> {
  const daemon = await connectDaemon(homePaths(home).socket);
  if (!daemon) return;
  try {
    const view = (await daemon.rpc("mcp.reconnect", { name })) as ServerView;
    const tools = `${view.tools.length} tool${view.tools.length === 1 ? "" : "s"}`;
    io.stdout.write(`Hearth reconnected "${name}": ${view.status === "ready" ? `ready, ${tools}` : `${view.status}${view.lastError ? ` (${view.lastError})` : ""}`}.\n`);
  } catch (err) {
    io.stderr.write(`Hearth could not reconnect "${name}": ${err instanceof Error ? err.message : String(err)}\n`);
  } finally {
    await daemon.close();
  }
}

/** Only where a desktop is at hand; a failure is silent (the link is printed anyway). */
function tryOpenBrowser(url: string): void {
  const opener = process.platform === "darwin" ? "open" : process.env.DISPLAY || process.env.WAYLAND_DISPLAY ? "xdg-open" : null;
  if (!opener) return;
  try {
    spawn(opener, [url], { stdio: "ignore", detached: true }).on("error", () => {}).unref();
  } catch {
    // The printed link is enough.
  }
}

export async function runMcpCall(home: string, args: string[], io: McpIO): Promise<number> {
  const { values, positionals } = parse(args, { "no-browser": { type: "boolean" } }, true);
  const [serverName, tool, json, ...extra] = positionals;
  if (!tool || extra.length) throw new UsageError("mcp call needs a server NAME, a TOOL and optionally its arguments as one JSON object.");
  let input: Record<string, unknown> = {};
  if (json !== undefined) {
    let parsed: unknown;
    try {
      parsed = JSON.parse(json);
    } catch (err) {
      throw new UsageError(`The arguments are not JSON: ${(err as Error).message}`);
    }
    if (typeof parsed !== "object" || parsed === null || Array.isArray(parsed)) throw new UsageError("The arguments must be one JSON object, e.g. '{\"message\":\"hi\"}'.");
    input = parsed as Record<string, unknown>;
  }
  const { config, name } = serverConfig(home, serverName, "call");
  const one = { servers: { [name]: { ...config.mcp.servers[name]!, enabled: true } } };
  const manager = new McpManager({ config: one, log: silentLogger, authDir: homePaths(home).mcpAuth });
  manager.start();
  try {
    await manager.settled();
    const conn = manager.server(name)!;
    if (conn.view().status === "needs_login") {
      if (!(await login(home, config, name, io, values["no-browser"] !== true))) return 1;
      await conn.reconnect();
    }
    const view = conn.view();
    if (view.status !== "ready") {
      io.stderr.write(`The MCP server "${name}" did not start: ${view.lastError ?? view.status}\n`);
      return 1;
    }
    const terminal = terminalAsker(io);
    const url = config.mcp.servers[name]!.url;
    const stepUp = () => (url ? new McpAuthStore(homePaths(home).mcpAuth).read(name, url).scope : undefined);
    const asked = stepUp();
    const callOnce = () => conn.call(tool, input, new AbortController().signal, { ask: terminal.ask, scope: "main" });
    let out = await callOnce();
    // A 403 naming more scope (step-up): the owner is at this terminal, so the login that
    // grants it happens here, as the first one did, and the call is made once more.
    if (out.isError && stepUp() !== asked) {
      io.stderr.write(`${tool} on the MCP server "${name}" needs more permission (scope "${stepUp()}"): log in again to grant it.\n`);
      if (!(await login(home, config, name, io, values["no-browser"] !== true))) return (terminal.close(), 1);
      await conn.reconnect();
      out = await callOnce();
    }
    terminal.close();
    const text = [out.content, ...(out.images ?? []).map((i) => `[image: ${i.mediaType}, ${Math.round((i.data.length * 3) / 4)} bytes]`)].filter(Boolean).join("\n");
    (out.isError ? io.stderr : io.stdout).write(`${text}\n`);
    return out.isError ? 1 : 0;
  } finally {
    await manager.stop();
  }
}

/**
 * A server's questions asked on the terminal: the question on stdout, the answer one line of
 * stdin (an empty line takes the field's default). No stdin, or stdin closed: no answer (null).
 */
function terminalAsker(io: McpIO): { ask: AskPerson; close: () => void } {
  if (!io.stdin) return { ask: async () => null, close: () => {} };
  const rl = createInterface({ input: io.stdin, terminal: false });
  const lines: string[] = [];
  const waiting: Array<(line: string | null) => void> = [];
  let closed = false;
  rl.on("line", (l) => (waiting.length ? waiting.shift()!(l) : lines.push(l)));
  rl.on("close", () => {
    closed = true;
    for (const w of waiting.splice(0)) w(null);
  });
  return {
    ask: (text, opts) => {
      io.stdout.write(`${text}\n> `);
      if (lines.length) return Promise.resolve(lines.shift()!);
      if (closed) return Promise.resolve(null);
      return new Promise((resolve) => {
        const timer = setTimeout(() => settle(null), opts.timeoutMs);
        const settle = (l: string | null) => {
          clearTimeout(timer);
          const i = waiting.indexOf(settle);
          if (i >= 0) waiting.splice(i, 1);
          resolve(l);
        };
        opts.signal.addEventListener("abort", () => settle(null), { once: true });
        waiting.push(settle);
      });
    },
    close: () => rl.close(),
  };
}
