// One MCP server: connects in the background, lists its tools, calls them, and reconnects with
// backoff when it exits. Failures never throw out of here: they become the server's state
// (`down` with its last error) and `isError` results for the model.
import { AsyncLocalStorage } from "node:async_hooks";
import { randomUUID } from "node:crypto";
import type { Client } from "@modelcontextprotocol/sdk/client/index.js";
import type { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import type { Transport } from "@modelcontextprotocol/sdk/shared/transport.js";
import type { Tool as McpTool } from "@modelcontextprotocol/sdk/types.js";
import { redact, registerSecret, type Logger } from "../../process/log.ts";
import type { Scope } from "../messages.ts";
import type { Tool, ToolContext, ToolOutput } from "../tool.ts";
import { EXEC_MARKER_VAR, killMarked } from "../tools/exec-marker.ts";
import { commandEnv } from "../tools/exec.ts";
import { expandVariables, type McpServerConfig } from "./config.ts";
import { CLIENT_CAPABILITIES, installClientFeatures, type ActiveCall } from "./client-features.ts";
import { httpAuthFor } from "./http-auth.ts";
import { LoginRequiredError, StepUpRequiredError } from "./oauth-provider.ts";
import type { McpAuthStore } from "./oauth-store.ts";
import { hearthCmd } from "../../process/hearth-command.ts";
import { unconfined, type StdioLauncher } from "./launch.ts";
import { toToolOutput } from "./results.ts";
import { listAllTools, serverTools, toolsSignature } from "./server-tools.ts";
import { resourceOutput, type Catalog } from "./resources.ts";
import { loadMcpSdk, type McpSdk } from "./sdk.ts";
import type { Backoff, ServerStatus, ServerView, TransportKind } from "./server-view.ts";

export interface ConnectionOptions {
  name: string;
  config: McpServerConfig;
  log: Logger;
  /** The daemon's environment (default process.env): base of a stdio server's, and of ${VAR}. */
  env?: NodeJS.ProcessEnv;
  /** `markerPrefixFor(home)`: stdio servers carry it, so an orphan of a killed daemon is found at the next start. */
  markerPrefix?: string;
  backoff?: Partial<Backoff>;
  /** Called after the tool list changed (connect, list_changed). Must not throw. */
  onToolsChanged: () => void;
  /** Where OAuth tokens of HTTP servers are kept; absent: HTTP servers get no authorization. */
  authStore?: McpAuthStore;
  /**
   * Called when the server needs the owner to log in (`scope`: the scopes a step-up asks for).
   * Must not throw; the connection waits in `needs_login` until reconnect() is called.
   */
  onNeedsLogin?: (scope: string | undefined) => void;
  /** The folders offered as roots (main-scope servers: the workspace). Default none. */
  roots?: readonly string[];
  /**
   * Whether onNeedsLogin reaches someone (the daemon sends the owner a link): the model is then
   * told the owner was asked; otherwise (`hearth mcp call`) to run `hearth mcp login NAME`.
   */
  ownerAskedOnLogin?: boolean;
  /** How a stdio server's process is started (launch.ts); default as configured, unconfined. */
  launch?: StdioLauncher;
}

/** Who makes a call: the run's way to ask its chat (absent: it answers none) and its scope. */
export interface CallFrom {
  ask?: ToolContext["ask"];
  scope: Scope;
}

/** A server that stayed up this long has its backoff reset when it exits. */
const STABLE_MS = 10_000;
const STDERR_TAIL = 2000;
/**
 * The call whose request is being sent and answered. A server that asks a question inside a tool
 * call over Streamable HTTP sends it on that call's own response stream, which the SDK reads in
 * the asynchronous context of the call's send: so a question arriving there runs with its call
 * here. Over stdio and SSE nothing on the wire ties a question to a call (see #callAsking).
 * Connecting always runs outside any call, so a transport opened during a call carries none.
 */
const callContext = new AsyncLocalStorage<ActiveCall>();

export class McpConnection {
  readonly name: string;
  readonly config: McpServerConfig;
  readonly #log: Logger;
  readonly #env: NodeJS.ProcessEnv;
  readonly #markerPrefix: string | undefined;
  readonly #backoff: Backoff;
  readonly #onToolsChanged: () => void;
  readonly #authStore: McpAuthStore | undefined;
  readonly #onNeedsLogin: (scope: string | undefined) => void;
  readonly #roots: readonly string[];
  /** Calls under way, oldest first: a server's question (elicitation) belongs to one of them. */
  readonly #calls: ActiveCall[] = [];
  readonly #ownerAskedOnLogin: boolean;
  #status: ServerStatus;
  #transportKind: TransportKind;
  #client: Client | null = null;
  /** Loaded when the first connection starts (sdk.ts). */
  #sdk: McpSdk | null = null;
  /** The client whose handshake is under way: closed by stop() so a hung start cannot delay shutdown. */
  #opening: Client | null = null;
  #marker: string | null = null;
  #tools: Tool[] = [];
  #toolsSignature = "";
  #lastError: string | undefined;
  #restarts = 0;
  #attempt = 0;
  #connectedAt = 0;
  #timer: NodeJS.Timeout | undefined;
  #stderrTail = "";
  #connecting: Promise<void> | null = null;
  readonly #launch: StdioLauncher;
  /** What the last start of the stdio process opened (its egress proxy), closed before the next start and at stop. */
  #launched: { close(): Promise<void> } | null = null;

  constructor(opts: ConnectionOptions) {
    this.name = opts.name;
    this.config = opts.config;
    this.#log = opts.log;
    this.#env = opts.env ?? process.env;
    this.#markerPrefix = opts.markerPrefix;
    this.#backoff = { baseMs: opts.backoff?.baseMs ?? 1000, maxMs: opts.backoff?.maxMs ?? 60_000 };
    this.#onToolsChanged = opts.onToolsChanged;
    this.#authStore = opts.authStore;
    this.#onNeedsLogin = opts.onNeedsLogin ?? (() => {});
    this.#roots = opts.roots ?? [];
    this.#ownerAskedOnLogin = opts.ownerAskedOnLogin ?? false;
    this.#status = opts.config.enabled ? "starting" : "disabled";
    this.#transportKind = opts.config.command ? "stdio" : "http";
    this.#launch = opts.launch ?? unconfined;
  }

  /** Starts connecting in the background; returns at once. */
  start(): void {
    if (this.#status !== "starting") return;
    this.#connecting = this.#connect();
  }

  /** Resolves once the current connection attempt (if any) has settled: for doctor and tests. */
  async settled(): Promise<void> {
    while (this.#connecting) await this.#connecting;
  }

  view(): ServerView {
    return {
      name: this.name,
      transport: this.#transportKind,
      scope: this.config.scope,
      status: this.#status,
      tools: this.#tools.map((t) => t.name),
      // Shown by `hearth status` and the dashboard: a server's words may echo a key it was given,
      // and every key the configuration marks as a secret is registered with the redactor.
      ...(this.#lastError ? { lastError: redact(this.#lastError) } : {}),
      restarts: this.#restarts,
    };
  }

  /** Whether the server said it has resources (known once it connected). */
  hasResources(): boolean {
    return this.#client?.getServerCapabilities()?.resources !== undefined;
  }

  /** Its resources and prompts (the first 100 pages of each); `error` when it cannot answer now. */
  async catalog(signal?: AbortSignal): Promise<Catalog | { error: string }> {
    const client = this.#client;
    if (!client) return { error: `The MCP server "${this.name}" is ${this.#status}${this.#lastError ? ` (${this.#lastError})` : ""}.` };
    const caps = client.getServerCapabilities() ?? {};
    const opts = { timeout: this.config.timeoutMs, ...(signal ? { signal } : {}) };
    try {
      const resources: Catalog["resources"] = [];
      const prompts: Catalog["prompts"] = [];
      for (let page = 0, cursor: string | undefined; caps.resources && page < 100; page++) {
        const r = await client.listResources(cursor ? { cursor } : {}, opts);
        resources.push(...r.resources.map((x) => ({ name: x.name, uri: x.uri, description: x.description ?? "" })));
        if (!(cursor = r.nextCursor)) break;
      }
      for (let page = 0, cursor: string | undefined; caps.prompts && page < 100; page++) {
        const r = await client.listPrompts(cursor ? { cursor } : {}, opts);
        prompts.push(...r.prompts.map((x) => ({ name: x.name, description: x.description ?? "" })));
        if (!(cursor = r.nextCursor)) break;
      }
      return { resources, prompts };
    } catch (err) {
      return { error: `The MCP server "${this.name}" could not list its resources and prompts: ${err instanceof Error ? err.message : String(err)}` };
    }
  }

  /** Reads one resource; never throws. */
  async readResource(uri: string, signal: AbortSignal): Promise<ToolOutput> {
    const client = this.#client;
    if (!client) return { isError: true, content: `The MCP server "${this.name}" cannot take calls now: it is ${this.#status}.` };
    try {
      const r = await client.readResource({ uri }, { signal, timeout: this.config.timeoutMs });
      return resourceOutput(r.contents);
    } catch (err) {
      if (signal.aborted) return { isError: true, content: `Cancelled: the run was stopped while ${this.name} read ${uri}.` };
      return { isError: true, content: `Reading ${uri} from the MCP server "${this.name}" failed: ${err instanceof Error ? err.message : String(err)}` };
    }
  }

  /** Its tools for the model: the same objects while the list is unchanged; kept while it restarts. */
  tools(): readonly Tool[] {
    return this.#tools;
  }

  /**
   * Connects again now (after a login): the current connection, if any, is closed first and the
   * backoff starts over and the last error is forgotten (it described the state before the
   * login). Does nothing to a stopped or disabled server.
   */
  async reconnect(): Promise<void> {
    if (this.#status === "stopped" || this.#status === "disabled") return;
    clearTimeout(this.#timer);
    await this.#connecting?.catch(() => {});
    const client = this.#client;
    this.#client = null;
    await client?.close().catch(() => {});
    this.#attempt = 0;
    this.#lastError = undefined;
    this.#status = "starting";
    this.#connecting = this.#connect();
    await this.#connecting;
  }

  /** Stops it for good: no more restarts; a stdio child (and what it started) is ended. */
  async stop(): Promise<void> {
    if (this.#status === "disabled") return;
    this.#status = "stopped";
    clearTimeout(this.#timer);
    const client = this.#client;
    this.#client = null;
    await Promise.all([client?.close().catch(() => {}), this.#opening?.close().catch(() => {})]);
    await this.#connecting?.catch(() => {});
    if (this.#marker) await killMarked(this.#marker);
    await this.#closeLaunched();
  }

  async #closeLaunched(): Promise<void> {
    const launched = this.#launched;
    this.#launched = null;
    await launched?.close().catch(() => {});
  }

  #connect(): Promise<void> {
    return callContext.exit(() => this.#connectNow());
  }

  async #connectNow(): Promise<void> {
    let client: Client | null = null;
    try {
      client = await this.#open();
      if (this.#status === "stopped") {
        await client.close().catch(() => {});
        return;
      }
      this.#opening = client;
      const tools = await listAllTools(client, this.config.timeoutMs);
      this.#opening = null;
      if (this.#status !== "starting") {
        await client.close().catch(() => {});
        return;
      }
      this.#client = client;
      this.#connectedAt = Date.now();
      this.#status = "ready";
      this.#setTools(tools);
      this.#log.info("mcp.ready", { server: this.name, transport: this.#transportKind, tools: this.#tools.length });
    } catch (err) {
      await client?.close().catch(() => {});
      if (err instanceof LoginRequiredError) this.#needLogin(err.message, undefined);
      else this.#fail(this.#describe(err));
    } finally {
      this.#opening = null;
      this.#connecting = null;
    }
  }

  async #open(): Promise<Client> {
    const sdk = (this.#sdk = await loadMcpSdk());
    if (this.config.command) return this.#connectWith(await this.#stdioTransport(sdk));
    const url = new URL(this.config.url!);
    const headers = expandVariables(this.config.headers, this.#env, `mcp.servers.${this.name}.headers`);
    for (const v of Object.values(headers)) registerSecret(v);
    const requestInit = { headers };
    const auth = this.#authStore ? httpAuthFor(this.name, this.config, this.#authStore, this.#env) : {};
    try {
      this.#transportKind = "http";
      return await this.#connectWith(new sdk.StreamableHTTPClientTransport(url, { requestInit, ...auth }));
    } catch (httpErr) {
      if (httpErr instanceof LoginRequiredError || (httpErr instanceof Error && httpErr.name === "PkceUnsupportedError")) throw httpErr;
      // Older servers speak only the 2024 HTTP+SSE transport; the spec's fallback is to try it.
      this.#transportKind = "sse";
      try {
        return await this.#connectWith(new sdk.SSEClientTransport(url, { requestInit, ...auth }));
      } catch {
        this.#transportKind = "http";
        throw httpErr;
      }
    }
  }

  async #stdioTransport(sdk: McpSdk): Promise<StdioClientTransport> {
    const where = `mcp.servers.${this.name}.env`;
    const configured = expandVariables(this.config.env, this.#env, where);
    for (const [k, v] of Object.entries(this.config.env)) if (v.includes("${")) registerSecret(configured[k]);
    await this.#closeLaunched();
    const launch = await this.#launch({ name: this.name, command: this.config.command!, args: this.config.args, cwd: this.config.cwd });
    if (launch.type === "refused") throw new Error(launch.reason);
    this.#launched = launch;
    this.#marker = this.#markerPrefix ? `${this.#markerPrefix}.mcp-${randomUUID()}` : null;
    // The owner's env for the server wins over the launcher's (its HOME, say); the proxy's route is the namespace's either way.
    const env = { ...definedOnly(commandEnv(this.#env)), ...launch.env, ...configured, ...(this.#marker ? { [EXEC_MARKER_VAR]: this.#marker } : {}) };
    const transport = new sdk.StdioClientTransport({
      command: launch.command,
      args: launch.args,
      env,
      stderr: "pipe",
      ...(this.config.cwd ? { cwd: this.config.cwd } : {}),
    });
    this.#stderrTail = "";
    transport.stderr?.on("data", (chunk: Buffer) => {
      this.#stderrTail = (this.#stderrTail + chunk.toString("utf8")).slice(-STDERR_TAIL);
    });
    return transport;
  }

  async #connectWith(transport: Transport): Promise<Client> {
    const client = new this.#sdk!.Client(
      { name: "hearth", version: "0.1.0" },
      {
        capabilities: CLIENT_CAPABILITIES,
        listChanged: {
          tools: {
            onChanged: (err, tools) => {
              if (this.#client !== client) return;
              if (err) this.#log.warn("mcp.tools_refresh_failed", { server: this.name, error: err });
              else if (tools) this.#setTools(tools);
            },
          },
        },
      },
    );
    client.onclose = () => {
      if (this.#client === client) this.#onExit();
    };
    installClientFeatures(client, this.#sdk!, {
      server: this.name,
      roots: this.#roots,
      callAsking: () => this.#callAsking(),
      answerTimeoutMs: this.config.answerTimeoutMs,
      log: this.#log,
    });
    this.#opening = client;
    try {
      await client.connect(transport, { timeout: this.config.timeoutMs });
    } catch (err) {
      await client.close().catch(() => {});
      throw err;
    } finally {
      this.#opening = null;
    }
    return client;
  }

  /**
   * The call a server's question belongs to: the one on whose response stream it came; else the
   * only call under way. With several under way and nothing to tell them apart, none: guessing
   * could show one chat's question in another and take its answer from there.
   */
  #callAsking(): ActiveCall | { unknown: string } {
    const own = callContext.getStore();
    if (own) return this.#calls.includes(own) ? own : { unknown: "the call it came with has ended" };
    if (this.#calls.length === 1) return this.#calls[0]!;
    if (this.#calls.length === 0) return { unknown: "the server asked outside a call" };
    return { unknown: `${this.#calls.length} calls to this server are under way and nothing in the question says which one it belongs to` };
  }

  #onExit(): void {
    this.#client = null;
    if (this.#status === "stopped") return;
    if (Date.now() - this.#connectedAt >= STABLE_MS) this.#attempt = 0;
    const tail = lastLine(this.#stderrTail);
    this.#fail(`the server exited${tail ? `: ${tail}` : ""}`);
  }

  #fail(error: string): void {
    if (this.#status === "stopped") return;
    this.#status = "down";
    this.#lastError = error;
    const delay = Math.min(this.#backoff.maxMs, this.#backoff.baseMs * 2 ** this.#attempt);
    this.#attempt++;
    this.#log.warn("mcp.down", { server: this.name, error, retryInMs: delay });
    clearTimeout(this.#timer);
    this.#timer = setTimeout(() => {
      if (this.#status !== "down") return;
      this.#restarts++;
      this.#status = "starting";
      this.#connecting = this.#connect();
    }, delay);
    this.#timer.unref();
  }

  #needLogin(error: string, scope: string | undefined): void {
    if (this.#status === "stopped") return;
    this.#status = "needs_login";
    this.#lastError = error;
    clearTimeout(this.#timer);
    this.#log.warn("mcp.needs_login", { server: this.name, ...(scope ? { scope } : {}) });
    this.#onNeedsLogin(scope);
  }

  /** An SDK error of that code (the SDK is loaded by then: it was needed to connect). */
  #isMcpError(err: unknown, code: "ConnectionClosed" | "RequestTimeout"): boolean {
    const sdk = this.#sdk;
    return sdk !== null && err instanceof sdk.McpError && err.code === sdk.ErrorCode[code];
  }

  #describe(err: unknown): string {
    const closed = this.#isMcpError(err, "ConnectionClosed");
    const message = closed ? "the server exited before it was ready" : err instanceof Error ? err.message : String(err);
    const tail = this.config.command ? lastLine(this.#stderrTail) : "";
    return tail && !message.includes(tail) ? `${message}: ${tail}` : message;
  }

  #setTools(listed: McpTool[]): void {
    const call = (tool: string, input: Record<string, unknown>, ctx: ToolContext) => this.call(tool, input, ctx.signal, { ...(ctx.ask ? { ask: ctx.ask } : {}), scope: ctx.scope });
    const tools = serverTools(this.name, this.config, listed, call, this.#log);
    const signature = toolsSignature(tools);
    if (signature === this.#toolsSignature) return;
    this.#toolsSignature = signature;
    this.#tools = tools;
    this.#onToolsChanged();
  }

  /**
   * Calls one of its tools; cancelled on `signal` and after `timeoutMs`. Never throws. `from`:
   * who asks the server's questions (default: nobody, in the main scope).
   */
  async call(tool: string, args: Record<string, unknown>, signal: AbortSignal, from: CallFrom = { scope: "main" }): Promise<ToolOutput> {
    const client = this.#client;
    if (!client) {
      const why = this.#status === "stopped" ? "Hearth is shutting down" : `it is ${this.#status}${this.#lastError ? ` (${this.#lastError})` : ""}`;
      return { isError: true, content: `The MCP server "${this.name}" cannot take calls now: ${why}. It restarts on its own; try again shortly.` };
    }
    // The call's own timer (not the SDK's): it stops while a person answers the server's
    // question and starts over on progress.
    const timedOut = new AbortController();
    let timer: NodeJS.Timeout | undefined;
    const startTimer = () => {
      clearTimeout(timer);
      timer = setTimeout(() => timedOut.abort(), this.config.timeoutMs);
    };
    const both = AbortSignal.any([signal, timedOut.signal]);
    const active: ActiveCall = { ask: from.ask, scope: from.scope, signal: both, pauseTimer: () => clearTimeout(timer), resumeTimer: startTimer };
    this.#calls.push(active);
    startTimer();
    try {
      const result = await callContext.run(active, () => client.callTool({ name: tool, arguments: args }, undefined, { signal: both, timeout: 2_147_483_647, onprogress: startTimer }));
      return toToolOutput(result as Record<string, unknown>);
    } catch (err) {
      if (timedOut.signal.aborted && !signal.aborted) {
        return { isError: true, content: `${tool} on the MCP server "${this.name}" timed out after ${this.config.timeoutMs} ms and was cancelled.` };
      }
      if (err instanceof StepUpRequiredError) {
        this.#authStore?.update(this.name, this.config.url!, (r) => ({ ...r, scope: err.scope }));
        this.#log.warn("mcp.step_up", { server: this.name, tool, scope: err.scope });
        this.#onNeedsLogin(err.scope);
        const next = this.#ownerAskedOnLogin ? "The owner has been asked to log in again to grant it." : `Log in again with \`${hearthCmd(`mcp login ${this.name}`)}\` to grant it, then try again.`;
        return { isError: true, content: `${tool} on the MCP server "${this.name}" needs more permission (scope "${err.scope}"). ${next}` };
      }
      if (err instanceof LoginRequiredError) {
        const c = this.#client;
        this.#client = null;
        void c?.close().catch(() => {});
        this.#needLogin(err.message, undefined);
        return { isError: true, content: err.message };
      }
      if (signal.aborted) return { isError: true, content: `Cancelled: the run was stopped while ${this.name} ran ${tool}.` };
      if (this.#isMcpError(err, "RequestTimeout")) {
        return { isError: true, content: `${tool} on the MCP server "${this.name}" timed out after ${this.config.timeoutMs} ms and was cancelled.` };
      }
      if (this.#isMcpError(err, "ConnectionClosed")) {
        return { isError: true, content: `The MCP server "${this.name}" exited during the call to ${tool}. Hearth restarts it; try again shortly.` };
      }
      return { isError: true, content: `${tool} on the MCP server "${this.name}" failed: ${err instanceof Error ? err.message : String(err)}` };
    } finally {
      clearTimeout(timer);
      this.#calls.splice(this.#calls.indexOf(active), 1);
    }
  }
}

function definedOnly(env: NodeJS.ProcessEnv): Record<string, string> {
  return Object.fromEntries(Object.entries(env).filter((e): e is [string, string] => e[1] !== undefined));
}

function lastLine(text: string): string {
  const lines = text.trim().split("\n").map((l) => l.trim()).filter(Boolean);
  return (lines.at(-1) ?? "").slice(0, 300);
}
