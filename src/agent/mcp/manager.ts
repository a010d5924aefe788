// All configured MCP servers: started together in the background at daemon start, stopped at
// shutdown, and offered to the agent as one dynamic tool source whose list is sorted by name.
import type { Logger } from "../../log.ts";
import type { Scope } from "../messages.ts";
import type { DynamicToolSource, Tool } from "../tool.ts";
import type { McpConfig } from "./config.ts";
import { McpConnection, type Backoff, type ServerView } from "./connection.ts";

export const MCP_TOOL_PREFIX = "mcp__";

export interface McpManagerOptions {
  config: McpConfig;
  log: Logger;
  env?: NodeJS.ProcessEnv;
  /** `markerPrefixFor(home)`: lets the next start kill what a killed daemon's servers left. */
  markerPrefix?: string;
  backoff?: Partial<Backoff>;
}

export class McpManager implements DynamicToolSource {
  readonly #servers: McpConnection[];
  #tools: readonly Tool[] | null = null;

  constructor(opts: McpManagerOptions) {
    const log = opts.log.child({ component: "mcp" });
    this.#servers = Object.keys(opts.config.servers)
      .sort()
      .map(
        (name) =>
          new McpConnection({
            name,
            config: opts.config.servers[name]!,
            log,
            ...(opts.env ? { env: opts.env } : {}),
            ...(opts.markerPrefix ? { markerPrefix: opts.markerPrefix } : {}),
            ...(opts.backoff ? { backoff: opts.backoff } : {}),
            onToolsChanged: () => {
              this.#tools = null;
            },
          }),
      );
  }

  /** Starts every enabled server in the background: never waits for one, never throws. */
  start(): void {
    for (const s of this.#servers) s.start();
  }

  /** Resolves when every server's current connection attempt has settled (doctor, tests). */
  async settled(): Promise<void> {
    await Promise.all(this.#servers.map((s) => s.settled()));
  }

  async stop(): Promise<void> {
    await Promise.all(this.#servers.map((s) => s.stop()));
  }

  /** Every server's tools, sorted by name; the same array until a server's list changes. */
  tools(): readonly Tool[] {
    this.#tools ??= this.#servers.flatMap((s) => s.tools()).sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
    return this.#tools;
  }

  /** The tools of one server, for `hearth mcp tools NAME`; null when no server has that name. */
  toolsOf(server: string): Array<{ name: string; description: string }> | null {
    const s = this.#servers.find((x) => x.name === server);
    return s ? s.tools().map((t) => ({ name: t.name, description: t.description })) : null;
  }

  views(): ServerView[] {
    return this.#servers.map((s) => s.view());
  }

  /**
   * The scope rule for `mcp__…` tools (null: allowed): main may use every server; a shared scope
   * only servers configured with `scope: "shared"`. Unknown servers are refused to shared scopes.
   */
  permission(toolName: string, scope: Scope): string | null {
    if (scope === "main") return null;
    const server = this.#servers.find((s) => toolName.startsWith(`${MCP_TOOL_PREFIX}${s.name}__`));
    if (server?.config.scope === "shared") return null;
    return `${toolName} belongs to an MCP server that only the owner's private chat may use.`;
  }
}
