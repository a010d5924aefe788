// `hearth mcp` and `hearth mcp tools NAME`: the configured MCP servers — from the running daemon
// when there is one, else by starting them here for a moment. Also doctor's server checks.
import { McpManager } from "../agent/mcp/manager.ts";
import type { ServerView } from "../agent/mcp/server-view.ts";
import { READ_RESOURCE_TOOL, type Catalog } from "../agent/mcp/resources.ts";
import { applyHomeEnv, homeEnv, loadConfig } from "../config/config.ts";
import type { Config } from "../config/schema.ts";
import { homePaths } from "../config/home.ts";
import { silentLogger } from "../process/log.ts";
import { UsageError } from "./args.ts";
import { connectDaemon } from "./client.ts";
import { hearthCmd } from "../process/hearth-command.ts";

interface McpIO {
  /** `mcp call`: a server's questions are answered here. */
  stdin?: NodeJS.ReadableStream;
  stdout: NodeJS.WritableStream;
  stderr: NodeJS.WritableStream;
}

type ToolLine = { name: string; description: string };

export async function runMcp(home: string, args: string[], io: McpIO): Promise<number> {
  const [action, ...rest] = args;
  // The servers started here see the variables the daemon's would (.env, and secrets an
  // upgrade of config.json moves there), so a server that runs under `hearth start` runs here.
  if (action === undefined || action === "list" || action === "tools") applyHomeEnv(home);
  if (action === undefined || action === "list") {
    if (rest.length) throw new UsageError(`Unexpected arguments: ${rest.join(" ")}`);
    const config = loadConfig({ home });
    if (Object.keys(config.mcp.servers).length === 0) {
      io.stdout.write("No MCP servers configured. Add one under mcp.servers in config.json (see docs/extensions.md).\n");
      return 0;
    }
    const views = await fromDaemonOr(home, (d) => d.rpc("mcp.list", {}) as Promise<ServerView[]>, io, () => probeServers(config, undefined, home));
    io.stdout.write(formatServers(views));
    return views.some((v) => v.status === "down" || v.status === "needs_login") ? 1 : 0;
  }
  if (action === "tools") {
    const [name, ...extra] = rest;
    if (!name || extra.length) throw new UsageError("mcp tools needs one server NAME.");
    const config = loadConfig({ home });
    if (!config.mcp.servers[name]) throw new UsageError(`No MCP server "${name}" is configured. \`${hearthCmd("mcp")}\` lists them.`);
    const { tools, catalog } = await fromDaemonOr(
      home,
      async (d) => ({ tools: (await d.rpc("mcp.tools", { name })) as ToolLine[], catalog: (await d.rpc("mcp.catalog", { name })) as Catalog | { error: string } }),
      io,
      async () => {
        const { manager, views, catalog } = await probeWith(config, [name], home, name);
        const view = views[0]!;
        if (view.status !== "ready") throw new Error(`The MCP server "${name}" did not start: ${view.lastError ?? view.status}`);
        return { tools: manager.toolsOf(name) ?? [], catalog: catalog ?? { resources: [], prompts: [] } };
      },
    );
    if (tools.length === 0) io.stdout.write(`The MCP server "${name}" offers no tools (or none its tools.allow/deny lets through).\n`);
    for (const t of tools) io.stdout.write(`${t.name}\n    ${oneLine(t.description)}\n`);
    if ("error" in catalog) {
      io.stderr.write(`${catalog.error}\n`);
      return 1;
    }
    if (catalog.resources.length) io.stdout.write(`\nResources (${READ_RESOURCE_TOOL} reads them):\n`);
    for (const r of catalog.resources) io.stdout.write(`${r.uri}\n    ${oneLine(r.name + (r.description ? ` — ${r.description}` : ""))}\n`);
    if (catalog.prompts.length) io.stdout.write("\nPrompts:\n");
    for (const p of catalog.prompts) io.stdout.write(`${p.name}\n    ${oneLine(p.description)}\n`);
    return 0;
  }
  if (action === "login") return (await import("./mcp-auth.ts")).runMcpLogin(home, rest, io);
  if (action === "logout") return (await import("./mcp-auth.ts")).runMcpLogout(home, rest, io);
  if (action === "call") return (await import("./mcp-auth.ts")).runMcpCall(home, rest, io);
  throw new UsageError(`Unknown mcp action "${action}".`);
}

async function fromDaemonOr<T>(home: string, ask: (d: { rpc(m: string, p: unknown): Promise<unknown> }) => Promise<T>, io: McpIO, local: () => Promise<T>): Promise<T> {
  const daemon = await connectDaemon(homePaths(home).socket);
  if (daemon) {
    try {
      return await ask(daemon);
    } finally {
      await daemon.close();
    }
  }
  io.stderr.write("Hearth is not running: starting the servers here to check them.\n");
  return local();
}

/** Starts each enabled server (all, or those named), waits for its first attempt, stops them. */
export async function probeServers(config: Config, only?: string[], home?: string): Promise<ServerView[]> {
  return (await probeWith(config, only, home)).views;
}

/**
 * `home`: where the servers' OAuth tokens are (absent: HTTP servers are tried without them);
 * `catalogOf`: a server whose resources and prompts are listed before they stop.
 */
async function probeWith(config: Config, only?: string[], home?: string, catalogOf?: string): Promise<{ manager: McpManager; views: ServerView[]; catalog?: Catalog | { error: string } | null }> {
  const servers = Object.fromEntries(Object.entries(config.mcp.servers).filter(([n]) => !only || only.includes(n)));
  // The daemon's environment, as `hearth start` makes it (doctor leaves its own alone).
  const env = home ? homeEnv(home) : process.env;
  const manager = new McpManager({ config: { servers }, log: silentLogger, env, ...(home ? { authDir: homePaths(home).mcpAuth } : {}) });
  manager.start();
  try {
    await manager.settled();
    return { manager, views: manager.views(), ...(catalogOf ? { catalog: await manager.catalog(catalogOf) } : {}) };
  } finally {
    await manager.stop();
  }
}

export function formatServers(views: readonly ServerView[]): string {
  const lines = views.map((v) => {
    const tools = v.status === "disabled" ? "-" : `${v.tools.length} tool${v.tools.length === 1 ? "" : "s"}`;
    const head = `${v.name.padEnd(16)} ${v.status.padEnd(9)} ${v.transport.padEnd(5)} ${v.scope.padEnd(6)} ${tools}`;
    const restarts = v.restarts ? ` · restarted ${v.restarts}×` : "";
    return `${head}${restarts}${v.lastError ? `\n    last error: ${v.lastError}` : ""}`;
  });
  return `${"SERVER".padEnd(16)} ${"STATE".padEnd(9)} ${"VIA".padEnd(5)} ${"SCOPE".padEnd(6)} TOOLS\n${lines.join("\n")}\n`;
}

/** doctor: one check per configured server (it is started and its tools listed). */
export async function checkMcpServers(config: Config, home?: string): Promise<Array<{ name: string; ok: boolean; detail: string; fix?: string }>> {
  const views = await probeServers(config, undefined, home);
  return views.map((v) => {
    const name = `mcp ${v.name}`;
    if (v.status === "disabled") return { name, ok: true, detail: "disabled (enabled: false)" };
    if (v.status === "ready") return { name, ok: true, detail: `starts (${v.transport}) and lists ${v.tools.length} tool${v.tools.length === 1 ? "" : "s"}` };
    if (v.status === "needs_login") return { name, ok: false, detail: "needs a login (OAuth)", fix: `run \`${hearthCmd(`mcp login ${v.name}`)}\`` };
    return {
      name,
      ok: false,
      detail: `does not start: ${v.lastError ?? v.status}`,
      fix: v.transport === "stdio" ? `run its command by hand to see why, or fix mcp.servers.${v.name} in config.json` : `check that mcp.servers.${v.name}.url is reachable and its headers are right`,
    };
  });
}

const oneLine = (s: string): string => {
  const l = s.replace(/\s+/g, " ").trim();
  return l.length > 160 ? `${l.slice(0, 157)}…` : l;
};
