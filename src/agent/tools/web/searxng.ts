// A SearXNG instance's JSON API (`/search?q=…&format=json`; the instance must enable the json format).
import { getJson, plain, str, type SearchProvider } from "./search.ts";

export function searxngSearch(opts: { baseUrl: string; timeoutMs: number }): SearchProvider {
  return {
    name: "searxng",
    async search(query, count, signal) {
      const url = new URL(`${opts.baseUrl.replace(/\/+$/, "")}/search`);
      url.searchParams.set("q", query);
      url.searchParams.set("format", "json");
      const body = (await getJson("SearXNG", url, {}, signal, opts.timeoutMs)) as { results?: unknown[] };
      const results = Array.isArray(body?.results) ? body.results : [];
      return results.slice(0, count).map((r) => {
        const o = r as Record<string, unknown>;
        return { title: plain(str(o.title)), url: str(o.url), snippet: plain(str(o.content)) };
      });
    },
  };
}
