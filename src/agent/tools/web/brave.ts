// Brave Search API (https://api.search.brave.com/res/v1/web/search), key in X-Subscription-Token.
import { getJson, plain, str, type SearchProvider } from "./search.ts";

export const BRAVE_URL = "https://api.search.brave.com/res/v1/web/search";

export function braveSearch(opts: { apiKey: string; baseUrl?: string | undefined; timeoutMs: number }): SearchProvider {
  return {
    name: "brave",
    async search(query, count, signal) {
      const url = new URL(opts.baseUrl ?? BRAVE_URL);
      url.searchParams.set("q", query);
      url.searchParams.set("count", String(count));
      const body = (await getJson("Brave", url, { "x-subscription-token": opts.apiKey }, signal, opts.timeoutMs)) as { web?: { results?: unknown[] } };
      const results = Array.isArray(body?.web?.results) ? body.web.results : [];
      return results.slice(0, count).map((r) => {
        const o = r as Record<string, unknown>;
        return { title: plain(str(o.title)), url: str(o.url), snippet: plain(str(o.description)) };
      });
    },
  };
}
