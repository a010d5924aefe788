// A background task that reaches agent.maxTurns, through a real gateway in this process: the
// task ends as stopped at its turn cap and says so, without the chat's "Say continue".
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { waitFor } from "../support/daemon.ts";
import { startFakeModel, text, toolCall, type FakeModel } from "../support/fake-model.ts";
import { firstUserText, lastUserText } from "../support/task-script.ts";
import { startTestGateway, type TestGateway } from "../support/test-gateway.ts";

let fake: FakeModel;
let gw: TestGateway;
beforeEach(async () => {
  fake = await startFakeModel();
});
afterEach(async () => {
  await gw?.stop();
  await fake.close();
});

describe("a background task at agent.maxTurns", () => {
  it("ends stopped at its turn cap, and its result says so", async () => {
    gw = await startTestGateway(fake.url, { config: { agent: { maxTurns: 2 }, tools: { exec: { sandbox: "off" } } }, memory: false });
    fake.setDefault({
      type: "respond",
      fn: (req) => {
        const last = lastUserText(req);
        if (firstUserText(req).includes("Background task")) return toolCall("exec", { command: "echo step" });
        const started = /Started background task ([0-9a-f]{6})/.exec(last);
        if (started) return text(`Started ${started[1]}.`);
        return toolCall("spawn_task", { task: "Take many steps.", label: "steps" });
      },
    });
    gw.channel.deliver({ id: "m1", channel: "telegram", chat: { id: "1", type: "dm", members: ["1"] }, sender: { id: "1", name: "Ann", isOwner: true }, text: "start it", addressed: true, receivedAt: Date.now() });
    await waitFor("the result", () => (gw.channel.replies.get("send:1") ?? []).some((t) => / Task [0-9a-f]{6} /.test(t)));
    const [v] = gw.gateway.context.tasks.list();
    expect(v!.state).toBe("over-turns");
    expect(gw.channel.replies.get("send:1")).toEqual([expect.stringMatching(new RegExp(`^⏹ Task ${v!.id} "steps" was stopped: it reached its turn cap of 2 steps \\(agent\\.maxTurns\\) \\(\\d+s, \\$0\\.\\d{4}\\)\\.$`))]);
  }, 60_000);
});
