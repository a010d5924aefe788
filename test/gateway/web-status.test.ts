// Web tools through a real in-process gateway: main scope's requests carry the server tools,
// a group's do not, and /status names what the session's last run read from the web.
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { waitFor } from "../support/daemon.ts";
import { startFakeModel, text, type FakeModel } from "../support/fake-model.ts";
import { startTestGateway, type TestGateway } from "../support/test-gateway.ts";

let fake: FakeModel;
let t: TestGateway | undefined;
beforeEach(async () => {
  fake = await startFakeModel();
});
afterEach(async () => {
  await t?.stop();
  await fake.close();
});

const search = { type: "server_tool_use", id: "srvtoolu_1", name: "web_search", input: { query: "hearth release" } };
const searched = { type: "web_search_tool_result", tool_use_id: "srvtoolu_1", content: [] };
const fetch = { type: "server_tool_use", id: "srvtoolu_2", name: "web_fetch", input: { url: "https://www.example.com/news" } };
const fetched = { type: "web_fetch_tool_result", tool_use_id: "srvtoolu_2", content: { type: "web_fetch_tool_error", error_code: "url_not_accessible" } };

describe("web tools in the gateway", () => {
  it("offers server tools to the owner's chat only, and /status shows what the last run read", async () => {
    t = await startTestGateway(fake.url, { memory: false, telegram: { groups: { policy: "open" } } });
    fake.enqueue({ type: "message", blocks: [{ server: search }, { server: searched }, { server: fetch }, { server: fetched }, { text: "It ships in March." }] });
    const dm = t.channel.say({ chat: "1", type: "dm", sender: "1", text: "when does hearth ship?" });
    await waitFor("the answer", () => t!.channel.replies.has(dm), 15_000);
    expect(t.channel.replies.get(dm)).toEqual(["It ships in March."]);
    expect(fake.requests[0]!.body.tools.filter((x: { type?: string }) => (x.type ?? "").startsWith("web_")).map((x: { name: string }) => x.name)).toEqual(["web_search", "web_fetch"]);

    const status = t.channel.say({ chat: "1", type: "dm", sender: "1", text: "/status" });
    await waitFor("the status", () => t!.channel.replies.has(status), 15_000);
    const lines = t.channel.replies.get(status)![0]!.split("\n");
    expect(lines.filter((l) => l.includes("web"))).toEqual(["Last run read web content: search: hearth release, example.com"]);

    fake.enqueue(text("hi group"));
    const group = t.channel.say({ chat: "-100", type: "group", sender: "7", text: "@bot hello" });
    await waitFor("the group answer", () => t!.channel.replies.has(group), 15_000);
    expect((fake.requests[1]!.body.tools ?? []).filter((x: { type?: string }) => (x.type ?? "").startsWith("web_"))).toEqual([]);
  });
});

describe("web use in hearth usage", () => {
  it("counts server searches (priced) and Hearth's own fetches per day", async () => {
    const { runUsage } = await import("../../src/cli/usage.ts");
    const { startLocalWeb } = await import("../support/web-fixtures.ts");
    const { toolCall } = await import("../support/fake-model.ts");
    const web = await startLocalWeb();
    try {
      web.route("/page", (_req, res) => res.writeHead(200, { "content-type": "text/plain" }).end("plain page"));
      t = await startTestGateway(fake.url, { memory: false, config: { tools: { web: { fetch: { mode: "local", allowPrivate: ["127.0.0.1"] } } } } });
      fake.enqueue(
        toolCall("web_fetch", { url: `${web.url}/page` }, { usage: { input_tokens: 1000, output_tokens: 100 } }),
        { type: "message", blocks: [{ server: search }, { server: searched }, { text: "Done." }], usage: { input_tokens: 1000, output_tokens: 100, server_tool_use: { web_search_requests: 2 } } },
      );
      const dm = t.channel.say({ chat: "1", type: "dm", sender: "1", text: "read it and search" });
      await waitFor("the answer", () => t!.channel.replies.has(dm), 15_000);
      expect(t.channel.replies.get(dm)).toEqual(["Done."]);
      let out = "";
      const io = { stdout: { write: (s: string) => ((out += s), true) }, stderr: { write: () => true } } as unknown as { stdout: NodeJS.WritableStream; stderr: NodeJS.WritableStream };
      expect(runUsage(t.home, ["--by", "purpose", "--since", "2020-01-01"], io)).toBe(0);
      // Two calls: 2 × (1000·3 + 100·15) = 9,000 per million = $0.009, plus 2 searches × $0.01.
      expect(out).toBe(
        [
          "Usage since 2020-01-01 00:00 UTC (2020-01-01), by purpose:",
          "PURPOSE  CALLS  INPUT  CACHE WRITE  CACHE READ  OUTPUT  SEARCHES  FETCHES     COST",
          "chat         2  2,000            0           0     200         2        1  $0.0290",
          "Total        2  2,000            0           0     200         2        1  $0.0290",
          "",
        ].join("\n"),
      );
    } finally {
      await web.close();
    }
  });
});
