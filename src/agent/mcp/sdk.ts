// The MCP SDK, loaded with the first server that connects: a daemon without MCP servers never
// pays for it (its client, transports and schemas are several megabytes of memory).
import type { Client } from "@modelcontextprotocol/sdk/client/index.js";
import type { SSEClientTransport } from "@modelcontextprotocol/sdk/client/sse.js";
import type { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import type { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import type { ElicitRequestSchema, ErrorCode, ListRootsRequestSchema, McpError } from "@modelcontextprotocol/sdk/types.js";

export interface McpSdk {
  Client: typeof Client;
  SSEClientTransport: typeof SSEClientTransport;
  StdioClientTransport: typeof StdioClientTransport;
  StreamableHTTPClientTransport: typeof StreamableHTTPClientTransport;
  ErrorCode: typeof ErrorCode;
  McpError: typeof McpError;
  ElicitRequestSchema: typeof ElicitRequestSchema;
  ListRootsRequestSchema: typeof ListRootsRequestSchema;
}

let loaded: Promise<McpSdk> | null = null;

/** The SDK's modules; the first call imports them, later calls share that import. */
export function loadMcpSdk(): Promise<McpSdk> {
  loaded ??= Promise.all([
    import("@modelcontextprotocol/sdk/client/index.js"),
    import("@modelcontextprotocol/sdk/client/sse.js"),
    import("@modelcontextprotocol/sdk/client/stdio.js"),
    import("@modelcontextprotocol/sdk/client/streamableHttp.js"),
    import("@modelcontextprotocol/sdk/types.js"),
  ]).then(([client, sse, stdio, http, types]) => ({
    Client: client.Client,
    SSEClientTransport: sse.SSEClientTransport,
    StdioClientTransport: stdio.StdioClientTransport,
    StreamableHTTPClientTransport: http.StreamableHTTPClientTransport,
    ErrorCode: types.ErrorCode,
    McpError: types.McpError,
    ElicitRequestSchema: types.ElicitRequestSchema,
    ListRootsRequestSchema: types.ListRootsRequestSchema,
  }));
  return loaded;
}
