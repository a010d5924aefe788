// Hearth's own web_search against fake Brave and SearXNG endpoints on 127.0.0.1.
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import type { ToolContext } from "../../../../src/agent/tool.ts";
import { braveSearch } from "../../../../src/agent/tools/web/brave.ts";
import { searxngSearch } from "../../../../src/agent/tools/web/searxng.ts";
import { createWebSearchTool } from "../../../../src/agent/tools/web/tools.ts";
import { silentLogger } from "../../../../src/process/log.ts";
import { startLocalWeb, type LocalWeb } from "../../../support/web-fixtures.ts";

let web: LocalWeb;
beforeEach(async () => {
  web = await startLocalWeb();
});
afterEach(async () => {
  await web.close();
});

const ctx = (): ToolContext => ({ signal: new AbortController().signal, workspace: "/nonexistent", scope: "main", sessionKey: "test", log: silentLogger });
const seen: { url: string; headers: Record<string, unknown> }[] = [];
const json = (body: unknown) => (req: import("node:http").IncomingMessage, res: import("node:http").ServerResponse) => {
  seen.push({ url: req.url ?? "", headers: req.headers });
  res.writeHead(200, { "content-type": "application/json" }).end(JSON.stringify(body));
};
beforeEach(() => void (seen.length = 0));

const EXPECTED = `<external-content source="https://tea.example/ginger">
1. Ginger tea recipe
Slice fresh ginger & steep it "ten minutes".
</external-content>
<external-content source="https://tea.example/lemon">
2. Lemon tea
Add lemon.
</external-content>`;

describe("web_search (local)", () => {
  it("searches Brave with the key in its header and returns title, URL and snippet as external content", async () => {
    web.route("/res/v1/web/search", json({
      web: { results: [
        { title: "Ginger <strong>tea</strong> recipe", url: "https://tea.example/ginger", description: "Slice fresh ginger &amp; steep it &quot;ten minutes&quot;." },
        { title: "Lemon tea", url: "https://tea.example/lemon", description: "Add lemon." },
      ] },
    }));
    const search = createWebSearchTool({ provider: braveSearch({ apiKey: "brave-key-1", baseUrl: `${web.url}/res/v1/web/search`, timeoutMs: 5000 }), maxUses: 5 });
    const out = await search.execute({ query: "ginger tea", count: 2 }, ctx());
    expect(out).toEqual({ content: EXPECTED });
    expect(seen[0]!.url).toBe("/res/v1/web/search?q=ginger+tea&count=2");
    expect(seen[0]!.headers["x-subscription-token"]).toBe("brave-key-1");
    expect(search.summarize!({ query: "ginger tea" })).toBe("🔎 searching: ginger tea");
  });

  it("searches SearXNG's JSON API and keeps at most `count` results", async () => {
    web.route("/search", json({
      query: "ginger tea",
      results: [
        { title: "Ginger tea recipe", url: "https://tea.example/ginger", content: 'Slice fresh ginger & steep it "ten minutes".', engine: "duckduckgo" },
        { title: "Lemon tea", url: "https://tea.example/lemon", content: "Add lemon." },
        { title: "Third", url: "https://tea.example/third", content: "Not wanted." },
      ],
    }));
    const search = createWebSearchTool({ provider: searxngSearch({ baseUrl: `${web.url}/`, timeoutMs: 5000 }), maxUses: 5 });
    expect(await search.execute({ query: "ginger tea", count: 2 }, ctx())).toEqual({ content: EXPECTED });
    expect(seen[0]!.url).toBe("/search?q=ginger+tea&format=json");
  });

  it("says so when there are no results, and reports a failing provider as a tool error", async () => {
    web.route("/search", json({ results: [] }));
    const searx = createWebSearchTool({ provider: searxngSearch({ baseUrl: web.url, timeoutMs: 5000 }), maxUses: 5 });
    expect(await searx.execute({ query: "nothing" }, ctx())).toEqual({ content: 'No results for "nothing".' });
    web.route("/brave", (_req, res) => res.writeHead(401).end());
    const brave = createWebSearchTool({ provider: braveSearch({ apiKey: "bad", baseUrl: `${web.url}/brave`, timeoutMs: 5000 }), maxUses: 5 });
    expect(await brave.execute({ query: "x" }, ctx())).toEqual({ content: "Brave search answered HTTP 401 (check its API key).", isError: true });
  });
});
