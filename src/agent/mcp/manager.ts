// All configured MCP servers: started together in the background at daemon start, stopped at
// shutdown, and offered to the agent as one dynamic tool source whose list is sorted by name.
import type { StdioLauncher } from "./launch.ts";
import type { Logger } from "../../process/log.ts";
import type { Scope } from "../messages.ts";
import type { DynamicToolSource, Tool } from "../tool.ts";
import { hearthCmd } from "../../process/hearth-command.ts";
import type { McpConfig } from "./config.ts";
import { McpConnection } from "./connection.ts";
import type { Backoff, ServerView } from "./server-view.ts";
import { McpAuthStore } from "./oauth-store.ts";
import { READ_RESOURCE_TOOL, readResourceTool, type Catalog } from "./resources.ts";

export const MCP_TOOL_PREFIX = "mcp__";

export interface McpManagerOptions {
  config: McpConfig;
  log: Logger;
  env?: NodeJS.ProcessEnv;
  /** `markerPrefixFor(home)`: lets the next start kill what a killed daemon's servers left. */
  markerPrefix?: string;
  backoff?: Partial<Backoff>;
  /** The home's `mcp-auth` folder: OAuth tokens of HTTP servers. Absent: no authorization. */
  authDir?: string;
  /**
   * Sends the owner one plain message (the login link of a server that needs a login). Absent:
   * nobody is told (`hearth mcp` and doctor probes). Must not throw.
   */
  notifyOwner?: (text: string) => Promise<void>;
  /** The workspace folder: the root offered to main-scope servers (shared ones get none). */
  workspace?: string;
  /** How long a login link sent to the owner stays valid (default 10 minutes). */
  loginTimeoutMs?: number;
  /** How stdio servers' processes start (launch.ts): the daemon's confines them; default unconfined. */
  launch?: StdioLauncher;
}

export class McpManager implements DynamicToolSource {
  readonly #servers: McpConnection[];
  readonly #o: McpManagerOptions;
  readonly #log: Logger;
  readonly #store: McpAuthStore | undefined;
  /** Logins the daemon started (a link sent to the owner), by server: one at a time each. */
  readonly #logins = new Map<string, { cancel: () => Promise<void> }>();
  #stopped = false;
  #tools: readonly Tool[] | null = null;
  readonly #readResource: Tool = readResourceTool(() => this.#servers) as unknown as Tool;

  constructor(opts: McpManagerOptions) {
    const log = (this.#log = opts.log.child({ component: "mcp" }));
    this.#o = opts;
    this.#store = opts.authDir ? new McpAuthStore(opts.authDir) : undefined;
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
            ...(this.#store ? { authStore: this.#store } : {}),
            ...(opts.workspace && opts.config.servers[name]!.scope === "main" && opts.config.servers[name]!.roots === "workspace" ? { roots: [opts.workspace] } : {}),
            onNeedsLogin: () => void this.#startLogin(name),
            ownerAskedOnLogin: opts.notifyOwner !== undefined && this.#store !== undefined,
            ...(opts.launch ? { launch: opts.launch } : {}),
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
    this.#stopped = true;
    await Promise.all([...this.#logins.values()].map((l) => l.cancel()));
    await Promise.all(this.#servers.map((s) => s.stop()));
  }

  /** Connects one server again now (after `hearth mcp login`/`logout`); false when there is no such server. */
  async reconnect(server: string): Promise<boolean> {
    const s = this.#servers.find((x) => x.name === server);
    if (!s) return false;
    await this.#logins.get(server)?.cancel();
    await s.reconnect();
    return true;
  }

  /**
   * A server needs the owner: the daemon opens a loopback login of its own and sends the link
   * to the owner's chat, once per login; when the browser comes back the server reconnects.
   */
  async #startLogin(server: string): Promise<void> {
    const notify = this.#o.notifyOwner;
    const conn = this.#servers.find((x) => x.name === server);
    if (!notify || !this.#store || !conn || this.#logins.has(server) || this.#stopped) return;
    const placeholder = { cancel: async () => {} };
    this.#logins.set(server, placeholder);
    try {
      const { beginLogin } = await import("./login.ts");
      const start = await beginLogin({ name: server, config: conn.config, store: this.#store, ...(this.#o.env ? { env: this.#o.env } : {}), ...(this.#o.loginTimeoutMs ? { timeoutMs: this.#o.loginTimeoutMs } : {}) });
      if (start.type === "authorized") {
        this.#logins.delete(server);
        await conn.reconnect();
        return;
      }
      this.#logins.set(server, { cancel: start.cancel });
      await notify(loginText(server, start.authorizationUrl));
      const end = await start.done;
      if (this.#logins.get(server)?.cancel === start.cancel) this.#logins.delete(server);
      if (end.type === "authorized") {
        this.#log.info("mcp.logged_in", { server });
        await conn.reconnect();
      } else this.#log.warn("mcp.login_failed", { server, error: end.error });
    } catch (err) {
      this.#logins.delete(server);
      const error = err instanceof Error ? err.message : String(err);
      this.#log.warn("mcp.login_failed", { server, error });
      await notify(`The MCP server "${server}" needs you to log in, but the login cannot start: ${error}`);
    }
  }

  /** Every server's tools, sorted by name; the same array until a server's list changes. */
  tools(): readonly Tool[] {
    this.#tools ??= [...this.#servers.flatMap((s) => s.tools()), ...(this.#servers.some((s) => s.hasResources()) ? [this.#readResource] : [])].sort((a, b) =>
      a.name < b.name ? -1 : a.name > b.name ? 1 : 0,
    );
    return this.#tools;
  }

  /** The tools of one server, for `hearth mcp tools NAME`; null when no server has that name. */
  toolsOf(server: string): Array<{ name: string; description: string }> | null {
    const s = this.#servers.find((x) => x.name === server);
    return s ? s.tools().map((t) => ({ name: t.name, description: t.description })) : null;
  }

  /** One server's resources and prompts; null when no server has that name. */
  async catalog(server: string): Promise<Catalog | { error: string } | null> {
    const s = this.#servers.find((x) => x.name === server);
    return s ? s.catalog() : null;
  }

  /** The connection of one server (tests, `hearth mcp call`); undefined when none has that name. */
  server(name: string): McpConnection | undefined {
    return this.#servers.find((x) => x.name === name);
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
    // The tool itself refuses a main-only server's resources (resources.ts).
    if (toolName === READ_RESOURCE_TOOL) return this.#servers.some((s) => s.config.scope === "shared" && s.hasResources()) ? null : `${toolName} reads MCP servers that only the owner's private chat may use.`;
    const server = this.#servers.find((s) => toolName.startsWith(`${MCP_TOOL_PREFIX}${s.name}__`));
    if (server?.config.scope === "shared") return null;
    return `${toolName} belongs to an MCP server that only the owner's private chat may use.`;
  }
}

/** The owner's message for a server that needs a login: the link on a line of its own. */
export function loginText(server: string, url: string): string {
  return (
    `The MCP server "${server}" needs you to log in. Open this link in a browser on the machine Hearth runs on ` +
    `(it returns to Hearth there):\n${url}\nOr run \`${hearthCmd(`mcp login ${server}`)}\` on that machine.`
  );
}
