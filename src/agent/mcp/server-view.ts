// What a connection to an MCP server is, as the rest of Hearth sees it: its status and view
// (`hearth mcp`, `/status`, doctor) and the backoff of its restarts. The live connection is
// connection.ts.

/** `needs_login`: an OAuth-protected server that waits for the owner to log in (no retries meanwhile). */
export type ServerStatus = "disabled" | "starting" | "ready" | "down" | "needs_login" | "stopped";
export type TransportKind = "stdio" | "http" | "sse";

/** What `hearth mcp`, `/status` and doctor show of a server. */
export interface ServerView {
  name: string;
  transport: TransportKind;
  scope: "main" | "shared";
  status: ServerStatus;
  /** Hearth's names of its tools (`mcp__<server>__<tool>`), sorted. */
  tools: string[];
  /** The last failure (start, exit, list), kept after a later success; never holds env values. */
  lastError?: string;
  /** Times it was started again after exiting or failing. */
  restarts: number;
}

export interface Backoff {
  /** First delay before a restart (default 1 s); doubles per failed attempt. */
  baseMs: number;
  /** Longest delay (default 60 s). */
  maxMs: number;
}
