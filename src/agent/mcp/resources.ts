// A server's resources and prompts: `mcp_read_resource { server, uri }` reads one resource (or,
// without `uri`, lists them) under the same scope rule as the server's tools, and the catalog
// `hearth mcp tools NAME` prints. Resource contents map like tool results (results.ts).
import { z } from "zod";
import type { Tool, ToolOutput } from "../tool.ts";
import { toToolOutput } from "./results.ts";

export const READ_RESOURCE_TOOL = "mcp_read_resource";

export interface CatalogEntry {
  name: string;
  /** A resource's URI; absent for a prompt. */
  uri?: string;
  description: string;
}

export interface Catalog {
  resources: CatalogEntry[];
  prompts: CatalogEntry[];
}

const input = z.strictObject({
  server: z.string().min(1).describe("The MCP server's name."),
  uri: z.string().min(1).optional().describe("The resource's URI; leave it out to list the server's resources."),
});

/** What the tool needs of a server's connection (connection.ts McpConnection). */
export interface ResourceServer {
  readonly name: string;
  readonly config: { readonly scope: string };
  hasResources(): boolean;
  catalog(signal?: AbortSignal): Promise<Catalog | { error: string }>;
  readResource(uri: string, signal: AbortSignal): Promise<ToolOutput>;
}

/**
 * The tool over `servers` (those whose resources exist, at the time of the call). `servers` is
 * called per call; the tool object itself stays the same, so the tool list stays byte-stable.
 */
export function readResourceTool(servers: () => readonly ResourceServer[]): Tool<typeof input> {
  return {
    name: READ_RESOURCE_TOOL,
    description: "Reads a resource (a file, a record, a document) that an MCP server offers, by its URI; without a URI it lists the server's resources.",
    input,
    readOnly: true,
    async execute({ server, uri }, ctx): Promise<ToolOutput> {
      const conn = servers().find((s) => s.name === server);
      if (!conn || !conn.hasResources()) {
        const names = servers().filter((s) => s.hasResources() && (ctx.scope === "main" || s.config.scope === "shared")).map((s) => s.name);
        return { isError: true, content: `No MCP server "${server}" with resources. Servers with resources here: ${names.length ? names.join(", ") : "none"}.` };
      }
      if (ctx.scope !== "main" && conn.config.scope !== "shared") {
        return { isError: true, content: `${READ_RESOURCE_TOOL} on "${server}" belongs to an MCP server that only the owner's private chat may use.` };
      }
      if (uri === undefined) {
        const listed = await conn.catalog(ctx.signal);
        if ("error" in listed) return { isError: true, content: listed.error };
        return { content: listed.resources.map((r) => `${r.uri}  ${r.name}${r.description ? ` — ${r.description}` : ""}`).join("\n") || `"${server}" lists no resources.` };
      }
      return conn.readResource(uri, ctx.signal);
    },
  };
}

/** `resources/read` contents → tool output: each as an embedded resource would be. */
export function resourceOutput(contents: unknown[]): ToolOutput {
  return toToolOutput({ content: contents.map((c) => ({ type: "resource", resource: c })) });
}
