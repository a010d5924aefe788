// The provider's web tools through the real SDK and the fake model: blocks kept verbatim,
// rendered as progress lines, sent back byte-equal; pause_turn; scope rules.
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { Message } from "../../../../src/agent/messages.ts";
import { Transcript } from "../../../../src/agent/transcript.ts";
import { createWebTools } from "../../../../src/agent/tools/web/index.ts";
import { parseConfig } from "../../../../src/config/config.ts";
import { testEgress } from "../../../support/egress.ts";
import { silentLogger } from "../../../../src/process/log.ts";
import { startFakeModel, text, type FakeModel, type ServerContentBlock } from "../../../support/fake-model.ts";
import { loopHarness, type Harness } from "../../../support/loop-harness.ts";

let fake: FakeModel;
let h: Harness;
beforeEach(async () => {
  fake = await startFakeModel();
});
afterEach(async () => {
  h?.cleanup();
  await fake.close();
});

const webFor = (raw: object = {}, sharedAllow: string[] = []) => {
  const config = parseConfig({ timezone: "Europe/Berlin", tools: { shared: { allow: sharedAllow }, ...raw } }, { home: "/tmp/hearth-web-test", env: {} });
  return createWebTools({ web: config.tools.web, timezone: config.timezone, sharedAllow: config.tools.shared.allow, log: silentLogger, egress: testEgress() });
};

const searchUse: ServerContentBlock = { type: "server_tool_use", id: "srvtoolu_01", name: "web_search", input: { query: "hearth release date" }, caller: { type: "direct" } };
const searchResult: ServerContentBlock = {
  type: "web_search_tool_result",
  tool_use_id: "srvtoolu_01",
  caller: { type: "direct" },
  content: [{ type: "web_search_result", url: "https://example.com/news", title: "Hearth 1.0", encrypted_content: "EncRyPtEd==", page_age: "2 days ago" }],
};
const citation = { type: "web_search_result_location", url: "https://example.com/news", title: "Hearth 1.0", encrypted_index: "EnCiNdEx", cited_text: "Hearth 1.0 ships in March." };
const fetchUse: ServerContentBlock = { type: "server_tool_use", id: "srvtoolu_02", name: "web_fetch", input: { url: "https://www.example.com/page" }, caller: { type: "direct" } };
const fetchResult: ServerContentBlock = {
  type: "web_fetch_tool_result",
  tool_use_id: "srvtoolu_02",
  caller: { type: "direct" },
  content: { type: "web_fetch_result", url: "https://www.example.com/page", retrieved_at: "2026-11-23T10:00:00Z", content: { type: "document", source: { type: "text", media_type: "text/plain", data: "Page body." }, title: "Page", citations: null } },
};

const withoutCache = (b: Record<string, unknown>) => {
  const { cache_control: _c, ...rest } = b;
  return rest;
};

describe("server web tools", () => {
  it("renders progress lines, stores the blocks verbatim and sends them back byte-equal", async () => {
    h = loopHarness(fake, []);
    const serverTools = webFor().serverToolsFor("main");
    fake.enqueue({
      type: "message",
      blocks: [{ server: searchUse }, { server: searchResult }, { server: fetchUse }, { server: fetchResult }, { text: "Hearth 1.0 ships in March.", citations: [citation] }],
      usage: { server_tool_use: { web_search_requests: 1 } },
    });
    const first = await h.run("when does hearth ship?", { serverTools });
    expect(first.status).toBe("completed");
    expect(first.text).toBe("Hearth 1.0 ships in March.");
    expect(first.usage.webSearchRequests).toBe(1);
    const progress = h.events.filter((e) => e.type === "tool_start" || e.type === "tool_end");
    expect(progress).toEqual([
      { type: "tool_start", id: "srvtoolu_01", name: "web_search", summary: "🔎 searching: hearth release date" },
      { type: "tool_end", id: "srvtoolu_01", name: "web_search", ok: true },
      { type: "tool_start", id: "srvtoolu_02", name: "web_fetch", summary: "🌐 reading: example.com" },
      { type: "tool_end", id: "srvtoolu_02", name: "web_fetch", ok: true },
    ]);
    const stored = h.recorded.find((m) => m.role === "assistant")!;
    expect(stored.role === "assistant" && stored.content).toEqual([
      { type: "server", raw: searchUse },
      { type: "server", raw: searchResult },
      { type: "server", raw: fetchUse },
      { type: "server", raw: fetchResult },
      { type: "text", text: "Hearth 1.0 ships in March.", citations: [citation] },
    ]);

    // The next request carries the stored turn: every block as the API sent it.
    const history: Message[] = JSON.parse(JSON.stringify(h.recorded)); // as a transcript would reload it
    fake.enqueue(text("You're welcome."));
    await h.run("thanks", { serverTools, history });
    const sent = fake.requests[1]!.body.messages[1];
    expect(sent.role).toBe("assistant");
    expect(JSON.stringify(sent.content)).toBe(
      JSON.stringify([searchUse, searchResult, fetchUse, fetchResult, { type: "text", text: "Hearth 1.0 ships in March.", citations: [citation] }]),
    );
  });

  it("keeps the blocks through a transcript written to disk and read back (a restart)", async () => {
    const dir = mkdtempSync(join(tmpdir(), "hearth-web-transcript-"));
    try {
      h = loopHarness(fake, []);
      const file = join(dir, "main.jsonl");
      const first = Transcript.open(file, "main", silentLogger);
      fake.enqueue({ type: "message", blocks: [{ server: searchUse }, { server: searchResult }, { text: "March.", citations: [citation] }] }, text("ok"));
      await h.run("when?", { serverTools: webFor().serverToolsFor("main"), record: (message) => first.append({ type: "message", message }) });
      const reread = Transcript.open(file, "main", silentLogger).messages();
      expect(reread.map((m) => m.role)).toEqual(["user", "assistant"]);
      await h.run("thanks", { history: reread });
      expect(JSON.stringify(fake.requests[1]!.body.messages[1].content)).toBe(
        JSON.stringify([searchUse, searchResult, { type: "text", text: "March.", citations: [citation] }]),
      );
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it("reports a failed server search as a failed progress line", async () => {
    h = loopHarness(fake, []);
    const failed = { type: "web_search_tool_result", tool_use_id: "srvtoolu_01", caller: { type: "direct" }, content: { type: "web_search_tool_result_error", error_code: "max_uses_exceeded" } };
    fake.enqueue({ type: "message", blocks: [{ server: searchUse }, { server: failed }, { text: "I could not search." }] });
    await h.run("search", { serverTools: webFor().serverToolsFor("main") });
    expect(h.events.filter((e) => e.type === "tool_end")).toEqual([{ type: "tool_end", id: "srvtoolu_01", name: "web_search", ok: false }]);
  });

  it("continues a turn the provider paused, without adding a user message", async () => {
    h = loopHarness(fake, []);
    fake.enqueue({ type: "message", blocks: [{ server: searchUse }, { server: searchResult }], stopReason: "pause_turn" }, text("Found it: March."));
    const result = await h.run("search it", { serverTools: webFor().serverToolsFor("main") });
    expect(result.status).toBe("completed");
    expect(result.text).toBe("Found it: March.");
    expect(fake.requests).toHaveLength(2);
    const messages = fake.requests[1]!.body.messages;
    expect(messages.map((m: { role: string }) => m.role)).toEqual(["user", "assistant"]);
    expect(JSON.stringify(messages[1].content.map(withoutCache))).toBe(JSON.stringify([searchUse, searchResult]));
    expect(h.recorded.map((m) => m.role)).toEqual(["user", "assistant", "assistant"]);
  });

  it("offers the newest server tools to main with limits, domains and location, and none to shared scopes by default", async () => {
    const web = webFor({ web: { search: { maxUses: 3, blockedDomains: ["spam.example"] }, fetch: { allowedDomains: ["docs.example"] } } });
    h = loopHarness(fake, []);
    fake.enqueue(text("main"), text("shared"));
    await h.run("hi", { serverTools: web.serverToolsFor("main") });
    await h.run("hi", { scope: "shared", serverTools: web.serverToolsFor("shared") });
    expect(fake.requests[0]!.body.tools).toEqual([
      { type: "web_search_20260318", name: "web_search", max_uses: 3, blocked_domains: ["spam.example"], user_location: { type: "approximate", timezone: "Europe/Berlin" } },
      // A page is cut at tools.web.fetch.maxChars (100,000), about 4 characters a token.
      { type: "web_fetch_20260318", name: "web_fetch", max_uses: 10, max_content_tokens: 25_000, allowed_domains: ["docs.example"] },
    ]);
    expect(fake.requests[1]!.body.tools).toBeUndefined();
  });

  it("gives a shared scope only the server tools tools.shared.allow lists, and none when turned off", () => {
    expect(webFor({}, ["web_search"]).serverToolsFor("shared").map((t) => t.name)).toEqual(["web_search"]);
    expect(webFor({ web: { search: { enabled: false }, fetch: { enabled: false } } }).serverToolsFor("main")).toEqual([]);
    const local = webFor({ web: { fetch: { mode: "local" }, search: { mode: "local", provider: "searxng", baseUrl: "http://127.0.0.1:9" } } });
    expect(local.serverToolsFor("main")).toEqual([]);
    expect(local.tools.map((t) => t.name)).toEqual(["web_search", "web_fetch"]);
  });

  it("offers local Brave search only with a key, taken from BRAVE_API_KEY", () => {
    const local = { tools: { web: { search: { mode: "local" } } } };
    const withKey = parseConfig(local, { home: "/tmp/hearth-web-test", env: { BRAVE_API_KEY: "brave-secret" } });
    expect(withKey.tools.web.search.apiKey).toBe("brave-secret");
    const tools = (config: typeof withKey) => createWebTools({ web: config.tools.web, timezone: "UTC", sharedAllow: [], log: silentLogger, egress: testEgress() }).tools.map((t) => t.name);
    expect(tools(withKey)).toEqual(["web_search"]);
    expect(tools(parseConfig(local, { home: "/tmp/hearth-web-test", env: {} }))).toEqual([]);
  });

  it("does not send back the server blocks of an interrupted message", async () => {
    const { toApiMessages } = await import("../../../../src/agent/providers/anthropic/request.ts");
    const usage = { inputTokens: 0, outputTokens: 0, cacheReadTokens: 0, cacheCreationTokens: 0 };
    const out = toApiMessages([
      { role: "user", kind: "message", text: "q", ts: 1 },
      { role: "assistant", content: [{ type: "server", raw: searchUse }, { type: "text", text: "Half an ans" }], stop: "aborted", model: "m", usage, ts: 2 },
      { role: "user", kind: "message", text: "again", ts: 3 },
    ]);
    expect(out[1]).toEqual({ role: "assistant", content: [{ type: "text", text: "Half an ans" }, { type: "text", text: "[interrupted]" }] });
  });

  it("refuses both allowedDomains and blockedDomains in config", () => {
    expect(() => webFor({ web: { search: { allowedDomains: ["a.example"], blockedDomains: ["b.example"] } } })).toThrow(/cannot be used together with allowedDomains/);
  });
});
