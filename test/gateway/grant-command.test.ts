// /grant PATTERN through a real in-process gateway: the owner's own pattern, granted in the chat
// it is typed in and nowhere else; a wildcard on a delete's target is refused with the reason.
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { waitFor } from "../support/daemon.ts";
import { startFakeModel, type FakeModel } from "../support/fake-model.ts";
import { startTestGateway, type TestGateway } from "../support/test-gateway.ts";

let fake: FakeModel;
let gw: TestGateway;
beforeEach(async () => {
  fake = await startFakeModel();
  gw = await startTestGateway(fake.url, {
    memory: false,
    config: { timezone: "UTC", heartbeat: { every: "0" }, approvals: { exec: "always" } },
    telegram: { groups: { policy: "open", requireMention: false } },
  });
});
afterEach(async () => {
  await gw.stop();
  await fake.close();
});

async function ask(chat: string, sender: string, message: string, type: "dm" | "group" = "group"): Promise<string> {
  const id = gw.channel.say({ chat, type, sender, text: message });
  await waitFor(`a reply to ${message}`, () => gw.channel.replies.has(id), 10_000);
  return gw.channel.replies.get(id)!.join("\n");
}

describe("/grant", () => {
  it("the owner's pattern holds in the chat it was typed in; others may not grant; a wildcard on rm's target is refused", async () => {
    const ws = gw.config.workspace;
    expect(await ask("-100", "5", "/grant make *")).toBe("Only the owner can grant approvals.");
    expect(await ask("-100", "1", "/grant")).toBe("Usage: /grant PATTERN — commands matching it run without asking in this chat for 30 min (`*` matches within one command, e.g. /grant make *).");
    expect(await ask("-100", "1", "/grant rm -r build/*")).toBe("Not granted: a wildcard in rm's arguments could be any target of rm: write the exact command instead.");
    expect(await ask("-100", "1", "/grant make  *")).toBe(`Granted for 30 min: make * in ${ws}, in this chat. /grants lists it; /revoke N takes it back.`);
    expect(gw.gateway.context.approvals.grants.active()).toMatchObject([{ kind: "pattern", pattern: "make *", folder: ws, chat: "telegram:-100", host: null, by: "user1" }]);
    expect(await ask("1", "1", "/grants", "dm")).toMatch(
      new RegExp(`^Grants:\\n1\\. make \\* \\(your pattern\\) in ${ws.replace(/[/.]/g, "\\$&")} \\(chat telegram:-100\\) — 30 more min \\(by user1, .+\\)\\nRevoke one with /revoke N; allow a pattern of your own in a chat with /grant PATTERN\\.$`),
    );
    const gate = (chatId: string) =>
      gw.gateway.context.approvals.gateFor({ sessionKey: `group:telegram:${chatId}`, scope: "shared", chat: { channel: "telegram", chatId }, taintedBy: null });
    const signal = new AbortController().signal;
    expect(await gate("-100").admit({ id: "c1", name: "exec", input: { command: "make deploy" } }, { workspace: ws, signal })).toBeNull();
    // Another chat: asked (no chat there shows buttons in this harness, so it is not run).
    expect(await gate("-200").admit({ id: "c2", name: "exec", input: { command: "make deploy" } }, { workspace: ws, signal })).toMatch(/^Not run: exec needs the owner's approval/);
  });
});
