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
