// Hearth's own web_fetch and web_search tools, for providers without server tools or when the
// owner prefers local fetching. Their output is always wrapped as external content.
import { z } from "zod";
import { connectionRequester, defineTool, type Tool, type ToolContext } from "../../tool.ts";
import type { Destination } from "../../../egress/policy.ts";
import { PageCache } from "./cache.ts";
import type { Extracted } from "./extract.ts";
import { wrapExternal } from "./external-content.ts";
import type { FetchLimits } from "./fetch.ts";
import { readingLine, searchingLine } from "./progress.ts";
import { SearchFailedError, type SearchProvider } from "./search.ts";
import type { Egress } from "../../../egress/egress.ts";

export interface WebFetchToolOptions extends FetchLimits {
  /** Characters of text returned to the model. */
  maxChars: number;
  maxUses: number;
  /** The egress policy every hop of a fetch passes (private addresses, egress.allow/deny/ask). */
  egress: Egress;
  clock?: () => number;
  /** Called once per page actually downloaded (not for cache hits), for the usage counts. Must not throw. */
  onUse?: (ctx: ToolContext) => void;
}

/**
 * Counts a tool's uses per run. A run's tool calls share its AbortSignal (ToolContext.signal),
 * so the signal identifies the run without the tool runner knowing about limits.
 */
function usesPerRun(max: number, what: string) {
  const used = new WeakMap<AbortSignal, number>();
  return (ctx: ToolContext): string | null => {
    const n = (used.get(ctx.signal) ?? 0) + 1;
    used.set(ctx.signal, n);
    return n > max ? `The ${what} limit for one answer (${max}) is reached; answer with what you have.` : null;
  };
}

interface CachedPage {
  url: string;
  page: Extracted;
  truncated: boolean;
}

export function createWebFetchTool(opts: WebFetchToolOptions): Tool {
  const cache = new PageCache<CachedPage>(opts.clock);
  const count = usesPerRun(opts.maxUses, "web_fetch");
  return defineTool({
    name: "web_fetch",
    description: "Fetch a web page, text, JSON or PDF by URL and return its main content as markdown/text.",
    input: z.object({ url: z.string().min(1).describe("http:// or https:// URL") }),
    readOnly: true,
    summarize: (input) => readingLine(input.url),
    async execute(input, ctx) {
      const over = count(ctx);
      if (over) return { content: over, isError: true };
      let cached = cache.get(input.url);
      if (!cached) {
        // Loaded on first use: node:https (with TLS), zlib and the address checks cost the
        // daemon ~10 MB of memory from start-up on, and most installations never fetch.
        const { fetchUrl, FetchFailedError, FetchRefusedError } = await import("./fetch.ts");
        const { extractContent, UnsupportedContentError } = await import("./extract.ts");
        // The URL asked for is what the run's link rule judges, for every hop: a redirect goes
        // where the server that URL named sends it, and each hop's host is still decided.
        const requester = connectionRequester(ctx, { what: `web_fetch ${input.url}`, url: input.url, tool: "web_fetch" });
        const target = async (url: URL) => {
          const dest = destinationOf(url);
          const decision = await opts.egress.decide(dest, requester, ctx.signal);
          if (decision.type === "refuse") {
            opts.egress.record({ ...dest, protocol: "http", decision: "refused", reason: decision.reason, sent: 0, received: 0, what: requester.what, session: ctx.sessionKey });
            throw new FetchRefusedError(`Refused: ${decision.reason}.`);
          }
          return decision.address;
        };
        try {
          opts.onUse?.(ctx);
          const got = await fetchUrl(input.url, { ...opts, target, signal: ctx.signal });
          opts.egress.record({ ...destinationOf(new URL(got.url)), protocol: "http", decision: "connected", sent: 0, received: got.body.length, what: requester.what, session: ctx.sessionKey });
          cached = { url: got.url, page: await extractContent(got.body, got.contentType, got.url, ctx.signal), truncated: got.truncated };
        } catch (err) {
          if (err instanceof FetchRefusedError || err instanceof FetchFailedError || err instanceof UnsupportedContentError) return { content: err.message, isError: true };
          throw err;
        }
        cache.set(input.url, cached);
        ctx.log.info("web.fetch", { host: new URL(cached.url).host, kind: cached.page.kind, chars: cached.page.text.length });
      }
      return { content: renderPage(cached, opts.maxChars, opts.maxBytes) };
    },
  });
}

/** Where a URL connects: its host and its port, the scheme's default when it names none. */
const destinationOf = (url: URL): Destination => ({ host: url.hostname, port: Number(url.port || (url.protocol === "https:" ? 443 : 80)) });

function renderPage(c: CachedPage, maxChars: number, maxBytes: number): string {
  const notes: string[] = [];
  let text = c.page.text;
  if (c.truncated) notes.push(`[The download was cut at ${maxBytes} bytes.]`);
  if (text.length > maxChars) {
    text = text.slice(0, maxChars);
    notes.push(`[Cut at ${maxChars} characters.]`);
  }
  const head = `${c.page.note ? `[${c.page.note}]\n\n` : ""}${c.page.title ? `# ${c.page.title}\n\n` : ""}`;
  return wrapExternal(c.url, `${head}${text}${notes.length ? `\n\n${notes.join(" ")}` : ""}`);
}

/**
 * `onUse` is called once per search before it is sent to the provider: it counts it (the usage
 * record, the budget) and returns null, or why it may not be sent (the budget), which the model
 * gets as the tool's error. Must not throw.
 */
export function createWebSearchTool(opts: { provider: SearchProvider; maxUses: number; onUse?: (ctx: ToolContext) => string | null }): Tool {
  const count = usesPerRun(opts.maxUses, "web_search");
  return defineTool({
    name: "web_search",
    description: "Search the web; returns titles, URLs and snippets. Use web_fetch to read a result.",
    input: z.object({ query: z.string().trim().min(1), count: z.int().min(1).max(20).optional().describe("results, default 5") }),
    readOnly: true,
    summarize: (input) => searchingLine(input.query),
    async execute(input, ctx) {
      const over = count(ctx);
      if (over) return { content: over, isError: true };
      const refused = opts.onUse?.(ctx) ?? null;
      if (refused) return { content: `Not searched: ${refused}.`, isError: true };
      try {
        const results = await opts.provider.search(input.query, input.count ?? 5, ctx.signal);
        ctx.log.info("web.search", { provider: opts.provider.name, results: results.length });
        if (results.length === 0) return { content: `No results for "${input.query}".` };
        return { content: results.map((r, i) => wrapExternal(r.url, `${i + 1}. ${r.title}\n${r.snippet}`)).join("\n") };
      } catch (err) {
        if (err instanceof SearchFailedError) return { content: err.message, isError: true };
        throw err;
      }
    },
  });
}
