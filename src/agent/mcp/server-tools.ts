// A server's tools as Hearth's tools: listed page by page, filtered by the server's allow and
// deny lists, named `mcp__<server>__<tool>` and described for the model. Calling one goes back
// to the connection (connection.ts call), which never throws.
import type { Client } from "@modelcontextprotocol/sdk/client/index.js";
import type { Tool as McpTool } from "@modelcontextprotocol/sdk/types.js";
import { z } from "zod";
import type { Logger } from "../../process/log.ts";
import type { Tool, ToolContext, ToolOutput } from "../tool.ts";
import type { McpServerConfig } from "./config.ts";

const MAX_DESCRIPTION = 2000;
const anyObject = z.record(z.string(), z.unknown());

/** `mcp__<server>__<tool>`, with characters the model API refuses replaced, at most 64 characters. */
export function hearthToolName(server: string, tool: string): string {
  return `mcp__${server}__${tool.replace(/[^A-Za-z0-9_-]/g, "_")}`.slice(0, 64);
}

/** Every tool the server lists (at most 100 pages). Throws what the client throws. */
export async function listAllTools(client: Client, timeout: number): Promise<McpTool[]> {
  const tools: McpTool[] = [];
  let cursor: string | undefined;
  for (let page = 0; page < 100; page++) {
    const r = await client.listTools(cursor ? { cursor } : {}, { timeout });
    tools.push(...r.tools);
    cursor = r.nextCursor;
    if (!cursor) break;
  }
  return tools;
}

/**
 * The listed tools the server's config lets through, as Hearth's tools sorted by name. A tool
 * whose Hearth name another already has is logged and left out. `call` runs one (by the server's
 * own name); it must not throw.
 */
export function serverTools(server: string, config: McpServerConfig, listed: McpTool[], call: (tool: string, input: Record<string, unknown>, ctx: ToolContext) => Promise<ToolOutput>, log: Logger): Tool[] {
  const allow = config.tools.allow ? new Set(config.tools.allow) : null;
  const deny = new Set(config.tools.deny);
  const byName = new Map<string, Tool>();
  for (const t of listed) {
    if ((allow && !allow.has(t.name)) || deny.has(t.name)) continue;
    const name = hearthToolName(server, t.name);
    if (byName.has(name)) {
      log.warn("mcp.tool_name_clash", { server, tool: t.name, as: name });
      continue;
    }
    byName.set(name, adapt(server, config, name, t, call));
  }
  return [...byName.values()].sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
}

/** What of a tool list the model sees: a list with the same signature changed nothing. */
export function toolsSignature(tools: Tool[]): string {
  return JSON.stringify(tools.map((t) => [t.name, t.description, t.inputSchema, t.readOnly]));
}

function adapt(server: string, config: McpServerConfig, name: string, t: McpTool, call: (tool: string, input: Record<string, unknown>, ctx: ToolContext) => Promise<ToolOutput>): Tool {
  const description = (t.description?.trim() || `The ${t.name} tool of the ${server} MCP server.`).slice(0, MAX_DESCRIPTION);
  return {
    name,
    description,
    input: anyObject,
    inputSchema: { ...(t.inputSchema as Record<string, unknown>), type: "object" },
    readOnly: t.annotations?.readOnlyHint === true,
    mcp: { server, tool: t.name, trusted: config.trust === "*" || config.trust.includes(t.name), annotations: { ...(t.annotations ?? {}) } },
    execute: (input, ctx) => call(t.name, input as Record<string, unknown>, ctx),
  };
}
