// The web tools' one seam: from `tools.web` config, the server tool definitions a request
// carries per scope (provider-side search / fetch) and Hearth's own local tools.
import type { Logger } from "../../../process/log.ts";
import type { Scope } from "../../messages.ts";
import type { ServerToolDefinition } from "../../providers/model.ts";
import type { Tool, ToolContext } from "../../tool.ts";
import { braveSearch } from "./brave.ts";
import type { SearchProvider } from "./search.ts";
import { searxngSearch } from "./searxng.ts";
import type { Egress } from "../../../egress/egress.ts";
import { createWebFetchTool, createWebSearchTool } from "./tools.ts";

export { wrapExternal } from "./external-content.ts";
export { webReadsOf } from "./activity.ts";

/** The newest versions the installed SDK's types list. */
export const WEB_SEARCH_TOOL = "web_search_20260318";
export const WEB_FETCH_TOOL = "web_fetch_20260318";

interface DomainRules {
  enabled: boolean;
  mode: "server" | "local";
  maxUses: number;
  allowedDomains: string[];
  blockedDomains: string[];
}

/** `config.tools.web`, as the schema outputs it. */
export interface WebConfig {
  search: DomainRules & { provider: "brave" | "searxng"; baseUrl?: string | undefined; apiKey?: string | undefined };
  fetch: DomainRules & { timeoutMs: number; maxBytes: number; maxChars: number };
}

export interface WebTools {
  /** Local tools to add to the tool set (none in server mode). Shared scopes reach them only via tools.shared.allow. */
  tools: Tool[];
  /** Server tool definitions for a run in `scope`; [] when none apply. */
  serverToolsFor(scope: Scope): ServerToolDefinition[];
}

export function createWebTools(opts: {
  web: WebConfig;
  /** IANA zone, sent to web search as the user's approximate location. */
  timezone: string;
  /** tools.shared.allow: the only way server tools reach a shared scope. */
  sharedAllow: readonly string[];
  log: Logger;
  /** The egress policy Hearth's own fetches pass. */
  egress: Egress;
  /**
   * Counts each use of a local tool before it is made (usage records, the budget): null, or why a
   * search may not be sent (createWebSearchTool). A fetch costs nothing: its answer is ignored. Must not throw.
   */
  onUse?: (kind: "search" | "fetch", ctx: ToolContext) => string | null;
}): WebTools {
  const onUse = opts.onUse;
  const { search, fetch } = opts.web;
  const server: ServerToolDefinition[] = [];
  const tools: Tool[] = [];
  const domains = (r: DomainRules) => ({
    ...(r.allowedDomains.length ? { allowed_domains: r.allowedDomains } : {}),
    ...(r.blockedDomains.length ? { blocked_domains: r.blockedDomains } : {}),
  });
  if (search.enabled && search.mode === "server") {
    server.push({ type: WEB_SEARCH_TOOL, name: "web_search", max_uses: search.maxUses, ...domains(search), user_location: { type: "approximate", timezone: opts.timezone } });
  }
  if (fetch.enabled && fetch.mode === "server") {
    // A page is cut where Hearth's own fetch cuts it (maxChars, about 4 to a token): without a
    // bound one page could bring a call hundreds of thousands of input tokens.
    server.push({ type: WEB_FETCH_TOOL, name: "web_fetch", max_uses: fetch.maxUses, max_content_tokens: Math.ceil(fetch.maxChars / 4), ...domains(fetch) });
  }
  if (search.enabled && search.mode === "local") {
    const provider = localProvider(search, fetch.timeoutMs);
    if (provider) tools.push(createWebSearchTool({ provider, maxUses: search.maxUses, ...(onUse ? { onUse: (ctx: ToolContext) => onUse("search", ctx) } : {}) }));
    else opts.log.warn("web.search_unconfigured", { provider: search.provider, fix: search.provider === "brave" ? "set BRAVE_API_KEY" : "set tools.web.search.baseUrl" });
  }
  if (fetch.enabled && fetch.mode === "local") {
    tools.push(
      createWebFetchTool({
        maxUses: fetch.maxUses,
        egress: opts.egress,
        timeoutMs: fetch.timeoutMs,
        maxBytes: fetch.maxBytes,
        maxChars: fetch.maxChars,
        ...(onUse ? { onUse: (ctx: ToolContext) => void onUse("fetch", ctx) } : {}),
      }),
    );
  }
  const shared = server.filter((t) => opts.sharedAllow.includes(t.name));
  return { tools, serverToolsFor: (scope) => (scope === "main" ? server : shared) };
}

function localProvider(search: WebConfig["search"], timeoutMs: number): SearchProvider | null {
  if (search.provider === "searxng") return search.baseUrl ? searxngSearch({ baseUrl: search.baseUrl, timeoutMs }) : null;
  return search.apiKey ? braveSearch({ apiKey: search.apiKey, baseUrl: search.baseUrl, timeoutMs }) : null;
}
