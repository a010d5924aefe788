// What a tool is, and how a set of tools is offered to the model and checked per scope.
import { z } from "zod";
import type { Logger } from "../process/log.ts";
import type { ImageBlock, Scope } from "./messages.ts";
import { destinationName, normalHost, type Destination, type Requester } from "../egress/policy.ts";

/** What a tool returns. Failures are values: `isError` results go back to the model. */
export interface ToolOutput {
  content: string;
  /** Images for the model after `content` (MCP image results). */
  images?: ImageBlock[];
  isError?: boolean;
}

export interface ToolContext {
  /** Aborted when the run is stopped; long tools must stop promptly and clean up. */
  signal: AbortSignal;
  /** The workspace folder: cwd of `exec`, root of the file tools. */
  workspace: string;
  scope: Scope;
  sessionKey: string;
  /**
   * In a shared chat, the sender id of the member the run answers (every message of the run is
   * theirs): their own notes are part of the memory scope. Absent: nobody's notes are.
   */
  person?: string;
  /**
   * In a shared scope, the session whose chat folder is the run's memory when it is not
   * `sessionKey`: a background task started in a group (session `task:<id>`) has the group's.
   * Absent: `sessionKey`.
   */
  chatKey?: string;
  log: Logger;
  /**
   * Sends a file to the chat the run answers, at most once per tool call (and per file and
   * caption within one reply) even across a crash and replay. Absent when the run answers no
   * chat (a scheduled job, the heartbeat). Rejects when the platform refused the file.
   */
  sendFile?: (file: OutgoingFile) => Promise<SentFile>;
  /**
   * Asks the person the run answers a question in their chat, and resolves with their next
   * message there (which then goes nowhere else) or the answer of the button they pressed
   * (`opts.choices`, where the chat's channel has buttons); null when none came within
   * `timeoutMs` or `signal` aborted. Absent when the run answers no chat. Never rejects.
   */
  ask?: AskPerson;
  /**
   * The run's say on a connection the egress rules leave open (ToolGate.permitConnection, bound
   * to this run). Absent when the run has no gate: the rules alone decide.
   */
  permitConnection?: PermitConnection;
  /**
   * The tool brought outside content into the run (a response from a host that is not the
   * owner's, a file that came from outside), in words for an approval question: "a response from
   * evil.example:443". Call it the moment the content enters, before the tool returns: the run is
   * tainted from then on (ToolGate.observeOutside), and the call's result carries it
   * (ToolResultMessage.outside), so the session stays tainted while the result is in view.
   * Absent when the run has no gate.
   */
  tookIn?: (what: string) => void;
  /** The run's taint now (ToolGate.taint): why it is tainted, or null; for a tool that must refuse or ask in a tainted run. Absent: no gate. */
  taintedBy?: () => string | null;
}

/**
 * What asks for a connection: the call as the owner is shown it, and for web_fetch the URL itself
 * (a URL the person wrote passes, and in a shared scope the first links from outside). `tool`
 * and its action are what a connection grant names: exec's whole `command` and the `folder` it
 * runs in, web_fetch's `url`. Without a tool (an MCP server),
 * `what` is the action.
 */
export interface ConnectionRequest {
  what: string;
  url?: string;
  tool?: "exec" | "web_fetch";
  command?: string;
  folder?: string;
}

/**
 * Decides a destination that egress.allow and egress.deny leave open (src/egress/policy.ts
 * Requester.permit): "tainted" asks the owner (or finds a grant for the host in this chat) when
 * the run holds outside content, "always" asks unless a grant covers it. Resolves null to
 * connect, or the refusal the connecting program is told. Never rejects.
 */
export type PermitConnection = (dest: Destination, request: ConnectionRequest, mode: "tainted" | "always", signal: AbortSignal) => Promise<string | null>;

/**
 * The egress requester for connections a tool call makes (exec's proxy, web_fetch's hops): the
 * run's permit, or without a gate (a tool tested alone) the rules alone — an open host passes
 * under "tainted" and is refused under "always", as nobody can be asked. Make one per call, when
 * it starts. Whatever a destination that is not the owner's answers taints the run (tookIn). In a
 * run that was clean when the call started, the call's own further connections to a destination
 * it already reached are not asked on account of that taint: the call was written before anything
 * came in, and goes back only where it already went (git clone's and npm's next requests). Any
 * other destination is asked.
 */
export function connectionRequester(ctx: ToolContext, request: ConnectionRequest): Requester & { session: string } {
  const cleanAtStart = (ctx.taintedBy?.() ?? null) === null;
  const reached = new Set<string>();
  const key = (dest: Destination) => `${normalHost(dest.host)}:${dest.port}`;
  return {
    what: request.what,
    session: ctx.sessionKey,
    permit: (dest, mode, signal) => {
      if (mode === "tainted" && cleanAtStart && reached.has(key(dest))) return Promise.resolve(null);
      return ctx.permitConnection ? ctx.permitConnection(dest, request, mode, signal) : Promise.resolve(mode === "tainted" ? null : `${dest.host} is not in egress.allow`);
    },
    tookIn: (dest) => {
      reached.add(key(dest));
      ctx.tookIn?.(`a response from ${destinationName(dest)}`);
    },
  };
}

/** A button under a question (ToolContext.ask): pressing it answers as if `answer` were typed. */
export interface AskChoice {
  label: string;
  answer: string;
}

export interface AskOptions {
  timeoutMs: number;
  signal: AbortSignal;
  /** Buttons to show where the channel has them; the typed answer is taken either way. */
  choices?: readonly AskChoice[];
}

/** See ToolContext.ask. */
export type AskPerson = (text: string, opts: AskOptions) => Promise<string | null>;

/**
 * Asked before a tool acts (the owner's approvals, src/approvals/), and told what entered the
 * run. The tool runner calls `admit` for every call that passed the scope check and validation,
 * and `observe` after every result; the loop also calls `observe` for the provider's server
 * tools ("server:web_search"). Absent: every call runs.
 */
export interface ToolGate {
  /**
   * Resolves null to run the call, or the text the model gets in place of its result (it was not
   * approved). May wait for the owner for minutes; must resolve soon after `signal` aborts, and
   * must not throw. Calls `ctx.tookIn` (see ToolContext.tookIn) before resolving null for a call
   * whose result will bring outside content the proxy cannot see (a command on an SSH host).
   */
  admit(call: { id: string; name: string; input: unknown; mcp?: McpToolOrigin }, ctx: { workspace: string; signal: AbortSignal; tookIn?: (what: string) => void }): Promise<string | null>;
  /** Tool `name` returned content into the run (a web page, an MCP result): it may taint the run. */
  observe(name: string): void;
  /**
   * Outside content entered the run, in words for a question ("a response from evil.example:443",
   * "a file downloaded from outside"): the run is tainted from this moment, also for the rest of
   * the call that brought it. Must not throw.
   */
  observeOutside(what: string): void;
  /**
   * The clause a question gives for the run's taint now: what this run read, what it started
   * with, or what its view holds ("this run read a web page"); null when it is untainted. Cheap
   * enough to call per connection; must not throw.
   */
  taint(): string | null;
  /** See ToolContext.permitConnection; `signal` is the run's or the connection's. */
  permitConnection?: PermitConnection;
}

/** A workspace file to send to the chat (send_file, markdown images). */
export interface OutgoingFile {
  /** Absolute path, already checked against the scope: for messages and logs, never to read again. */
  file: string;
  /** The bytes to send, read from the descriptor the outgoing-file rule checked (send-file.ts). */
  data: Uint8Array;
  name: string;
  mime: string;
  /** Shown as a picture (within the platform's photo limits) rather than as a document. */
  asPhoto: boolean;
  caption?: string;
}

/** `already`: a replay found it sent before; `printed`: a channel without files (the terminal) was given its path. */
export type SentFile = { type: "sent" | "already" | "printed" };

export interface Tool<S extends z.ZodType = z.ZodType> {
  name: string;
  /** Sent to the model: one or two sentences that say when to use the tool. */
  description: string;
  input: S;
  /**
   * The JSON Schema sent to the model, when it does not come from `input` (an MCP server's
   * schema, which the server itself validates; `input` then only checks for an object).
   */
  inputSchema?: ToolSpec["input_schema"];
  /** Read-only tools may run concurrently with each other. */
  readOnly: boolean;
  /**
   * Runs the tool with input already validated against `input`. Should return failures as
   * `{ isError: true }`; a throw is caught by the loop and turned into such a result.
   */
  execute(input: z.output<S>, ctx: ToolContext): Promise<ToolOutput>;
  /**
   * A refusal the tool can tell before it is run (send_file: the file may not leave this chat),
   * or null. Checked before the owner is asked to approve the call, so nobody is asked about
   * what would be refused anyway.
   */
  precheck?(input: z.output<S>, ctx: ToolContext): string | null;
  /** A one-line summary of a call for progress lines ("exec: ls -la"). */
  summarize?(input: z.output<S>): string;
  /** Set for a tool an MCP server provides: see McpToolOrigin. */
  mcp?: McpToolOrigin;
}

/**
 * Where an MCP tool comes from: its server, the server's name for it, whether the owner trusts it
 * (`mcp.servers.<name>.trust`), and what the server says of it (`annotations`: readOnlyHint…),
 * which the approvals show and never rely on.
 */
export interface McpToolOrigin {
  server: string;
  tool: string;
  trusted: boolean;
  annotations: Readonly<Record<string, unknown>>;
}

export const defineTool = <S extends z.ZodType>(tool: Tool<S>): Tool => tool as unknown as Tool;

/** The JSON shape the Messages API takes for a tool. */
export interface ToolSpec {
  name: string;
  description: string;
  input_schema: { type: "object"; [key: string]: unknown };
}

const specCache = new WeakMap<Tool, ToolSpec>();

/** The tool's API spec, computed once per tool so it is byte-stable across requests. */
export function toolSpec(tool: Tool): ToolSpec {
  let spec = specCache.get(tool);
  if (!spec) {
    const { $schema: _ignored, ...schema } = (tool.inputSchema ?? z.toJSONSchema(tool.input, { io: "input" })) as Record<string, unknown>;
    spec = { name: tool.name, description: tool.description, input_schema: { ...schema, type: "object" } };
    specCache.set(tool, spec);
  }
  return spec;
}

/**
 * Decides whether a scope may use a tool. Called for every call, after the model asked for it,
 * so a refusal holds whatever the model was told. Returns null when allowed, else the reason.
 */
export type ToolPermission = (toolName: string, scope: Scope) => string | null;

/**
 * Tools that come and go while the daemon runs (MCP servers). `tools()` is called for every
 * request and every call: it must be cheap, must not throw, and must return the same objects
 * in the same (sorted) order while nothing changed, so the tool list stays byte-stable.
 * Names must not collide with the static tools (they are ignored if they do).
 */
export interface DynamicToolSource {
  tools(): readonly Tool[];
}

export class ToolSet {
  readonly #tools = new Map<string, Tool>();
  readonly #sources: readonly DynamicToolSource[];
  /** Checked for every call (tool-runner): null allows it. */
  readonly permission: ToolPermission;
  /** Decides which tools the model is told about; the permission unless `refusing` narrowed it. */
  readonly #listed: ToolPermission;

  constructor(tools: Tool[], permission: ToolPermission = () => null, sources: readonly DynamicToolSource[] = [], listed: ToolPermission = permission) {
    for (const t of tools) {
      if (this.#tools.has(t.name)) throw new Error(`Tool "${t.name}" is defined twice; tool names must be unique.`);
      this.#tools.set(t.name, t);
    }
    this.permission = permission;
    this.#sources = sources;
    this.#listed = listed;
  }

  /**
   * The same tools, described to the model exactly as this set describes them (so a request
   * keeps its cached prefix), but every call `refuse` answers with a reason is refused.
   */
  refusing(refuse: ToolPermission): ToolSet {
    return new ToolSet([...this.#tools.values()], (name, scope) => this.permission(name, scope) ?? refuse(name, scope), this.#sources, this.#listed);
  }

  /**
   * The same tools, with the permission (of calls and of what is listed) replaced by
   * `widen(permission)`: the task tools for a run of a group the owner opened to them
   * (tool-policy.ts withTaskTools). A later `refusing` still narrows it.
   */
  widened(widen: (base: ToolPermission) => ToolPermission): ToolSet {
    return new ToolSet([...this.#tools.values()], widen(this.permission), this.#sources, widen(this.#listed));
  }

  get(name: string): Tool | undefined {
    const fixed = this.#tools.get(name);
    if (fixed) return fixed;
    for (const s of this.#sources) for (const t of s.tools()) if (t.name === name) return t;
    return undefined;
  }

  /** Tools the scope may use: the static ones in definition order, then each source's. */
  forScope(scope: Scope): Tool[] {
    const dynamic = this.#sources.flatMap((s) => s.tools()).filter((t) => !this.#tools.has(t.name));
    return [...this.#tools.values(), ...dynamic].filter((t) => this.#listed(t.name, scope) === null);
  }

  specsFor(scope: Scope): ToolSpec[] {
    return this.forScope(scope).map(toolSpec);
  }
}
