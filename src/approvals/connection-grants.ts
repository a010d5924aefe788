// What a connection grant covers. A press on "Allow for N min" or "Always" under a connection
// question grants exactly what was approved: the tool that connects and its action in one
// spelling (exec: the canonical command and its working folder; web_fetch: the URL as fetched)
// to that host and port, in that chat. Another file, path, port, glob, folder, tool, chat or host
// is another question. Wider reaches exist only as their own, explicitly worded choices: any
// command or fetch of the chat to that host and port, or to that host on any port.
import type { ConnectionRequest } from "../agent/tool.ts";
import type { Destination } from "../egress/policy.ts";
import type { Grant } from "./grant.ts";
import { execFacts, type ActionFacts } from "./policy.ts";

/** The tool name under which connections are asked, granted and audited (egress, src/egress/). */
export const CONNECT = "connect";

/** How far a press reaches: the call it showed, any call to its host and port, or any call to its host. */
export type GrantReach = "command" | "destination" | "host";

/**
 * A connection as the approvals see it: `command` is the call as the owner is shown it,
 * `canonical` the action a grant names (`exec: <canonical command>`, `web_fetch <URL>`, or the
 * requester's own words for anything else: "MCP server github"), `folder` where that action acts
 * (exec's working folder; the chat key for one that acts in no folder).
 */
export async function connectionFacts(dest: Destination, request: ConnectionRequest, chat: string): Promise<ActionFacts> {
  const action =
    request.tool === "exec" && request.command !== undefined && request.folder !== undefined
      ? { canonical: `exec: ${(await execFacts(request.command, request.folder)).canonical}`, folder: request.folder }
      : request.tool === "web_fetch" && request.url !== undefined
        ? { canonical: `web_fetch ${fetchedUrl(request.url)}`, folder: chat }
        : { canonical: request.what.trim(), folder: chat };
  return { tool: CONNECT, command: request.what, canonical: action.canonical, folder: action.folder, hosts: [dest.host], reroutes: false, port: dest.port };
}

/** The URL as it is fetched (`new URL` resolves dots and case the way the request will); as written when it does not parse. */
function fetchedUrl(url: string): string {
  try {
    return new URL(url.trim()).href;
  } catch {
    return url.trim();
  }
}

/** Whether connection grant `g` (of the same chat) covers the connection `facts`: its host always, and by its reach its port and action. */
export function coversConnection(g: Grant, facts: ActionFacts): boolean {
  if (facts.hosts.length !== 1 || g.host !== facts.hosts[0]) return false;
  switch (g.kind) {
    case "host":
      return true;
    case "destination":
      return g.port === facts.port;
    case "command":
      return g.port === facts.port && g.pattern === facts.canonical && g.folder === facts.folder;
    case "pattern":
      return false;
  }
}

/** The grant a press of `reach` makes for the connection `facts` in `chat`. */
export function connectionGrant(facts: ActionFacts, reach: GrantReach, chat: string, made: Pick<Grant, "expiresAt" | "by" | "at">): Grant {
  const host = facts.hosts[0]!;
  const port = facts.port ?? null;
  switch (reach) {
    case "command":
      return { tool: CONNECT, kind: "command", pattern: facts.canonical, folder: facts.folder, chat, host, port, ...made };
    case "destination":
      return { tool: CONNECT, kind: "destination", pattern: destinationText(host, port), folder: chat, chat, host, port, ...made };
    case "host":
      return { tool: CONNECT, kind: "host", pattern: host, folder: chat, chat, host, port: null, ...made };
  }
}

/** `127.0.0.1:8080`, `[::1]:443`; a host alone without a port. */
export const destinationText = (host: string, port: number | null): string => (port === null ? host : `${host.includes(":") ? `[${host}]` : host}:${port}`);

/** What the wider reaches cover, before the chat: "any command or fetch → 127.0.0.1:8080", "any command or fetch → 127.0.0.1, any port". */
export function wideReachText(host: string, reach: Exclude<GrantReach, "command">, port: number | null): string {
  return reach === "destination" ? `any command or fetch → ${destinationText(host, port)}` : `any command or fetch → ${host}, any port`;
}
