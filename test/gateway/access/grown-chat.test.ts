// A private chat that gains someone, in a real in-process gateway: the owner's contact moves off
// it before its next message runs, the owner is told once in their own private chat, and a chat
// marked shared is never the owner's chat again after a restart.
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { chatPlaces } from "../../../src/gateway/access/chat-places.ts";
import { waitFor } from "../../support/daemon.ts";
import { startFakeModel, text, type FakeModel } from "../../support/fake-model.ts";
import { startTestGateway, type TestGateway } from "../../support/test-gateway.ts";

let fake: FakeModel;
let home: string;
let gw: TestGateway | undefined;
beforeEach(async () => {
  fake = await startFakeModel();
  home = mkdtempSync(join(tmpdir(), "hearth-grown-"));
});
afterEach(async () => {
  await gw?.stop();
  gw = undefined;
  rmSync(home, { recursive: true, force: true });
  await fake.close();
});

const start = async () => {
  gw = await startTestGateway(fake.url, { home, memory: false });
  return gw;
};

describe("a private chat that gains someone", () => {
  it("moves the owner's contact to their own private chat at once, tells them there once, and keeps the grown chat from being theirs after a restart", async () => {
    const { channel, gateway } = await start();
    const ask = async (id: string, chat: string, members: string[], answer: string) => {
      fake.enqueue(text(answer));
      channel.say({ id, chat, type: "dm", sender: "1", isOwner: true, members, text: `words-of-${id}` });
      await waitFor(`the answer to ${id}`, () => channel.replies.get(id)?.includes(answer) === true);
      return fake.requests.at(-1)!;
    };
    await ask("a", "room", ["1"], "Private.");
    expect(gateway.context.sessions.ownerContact()).toMatchObject({ channel: "telegram", chatId: "room" });

    const grown = await ask("b", "room", ["1", "9", "10"], "Shared now.");
    expect(grown.rawBody).toContain("words-of-b");
    expect(grown.rawBody).not.toContain("words-of-a");
    expect(gateway.context.sessions.ownerContact()).toMatchObject({ channel: "telegram", chatId: "1" });
    const notice = "🔓 9 and 10 can now read telegram:room, a chat you had with me alone. I answer there as in a group from now on, without your private memory or our conversation. Once only you and I are in it again, send /private there.";
    await waitFor("the owner told", () => channel.replies.get("send:1")?.length === 1);
    expect(channel.replies.get("send:1")).toEqual([notice]);
    expect(channel.replies.has("send:room")).toBe(false);

    await ask("c", "room", ["1"], "Still shared.");
    expect(channel.replies.get("send:1")).toEqual([notice]);
    const places = chatPlaces(gateway.context.config, gateway.context.pairing, () => gateway.context.sessions.ownerContact());
    expect(places({ channel: "telegram", chatId: "room" }).type).toBe("refused");

    // Even when the daemon died before the contact moved, the next start takes it off the chat.
    gateway.context.sessions.setOwnerContact({ channel: "telegram", chatId: "room" });
    gateway.context.sessions.flush();
    await gw!.stop();
    const again = await start();
    expect(again.gateway.context.sessions.ownerContact()).toBeUndefined();
  });
});
