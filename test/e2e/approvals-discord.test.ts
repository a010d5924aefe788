// Approvals end to end on Discord: with approvals.exec "always", the model's exec puts one
// message with buttons in the owner's DM; another user's press is answered ephemerally "Only the
// owner can approve." and runs nothing; the owner's Allow once runs it and edits the question.
import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { cleanupDaemon, makeHome, startDaemon, type Daemon } from "../support/daemon.ts";
import { startFakeDiscord, type FakeDiscord, type FakeUser } from "../support/fake-discord.ts";
import { startFakeModel, text, toolCall, type FakeModel } from "../support/fake-model.ts";

let model: FakeModel;
let discord: FakeDiscord;
let d: Daemon;
let home: string;
let owner: FakeUser;
let alice: FakeUser;
let dm: string;

beforeAll(async () => {
  model = await startFakeModel();
  discord = await startFakeDiscord();
  owner = discord.addUser("owner");
  alice = discord.addUser("alice");
  dm = discord.dmChannel(owner);
  home = makeHome({ channels: { discord: { apiBase: discord.apiBase, ownerIds: [owner.id] } }, approvals: { exec: "always" } });
  d = await startDaemon(home, { DISCORD_BOT_TOKEN: discord.token, ANTHROPIC_API_KEY: "test-key", ANTHROPIC_BASE_URL: model.url });
  await discord.waitFor("the bot connected", () => discord.connected());
});
afterAll(async () => {
  await cleanupDaemon(d, home);
  await discord.close();
  await model.close();
});

describe("approvals on Discord (exec: always)", () => {
  it("one message with buttons; another user's press runs nothing; the owner's Allow once runs it and the question shows who allowed it", async () => {
    model.enqueue(toolCall("exec", { command: "echo ran >> once.txt" }), text("Done: it ran once."));
    discord.sendMessage({ channelId: dm, author: owner, content: "please run it" });
    const q = await discord.waitFor("the question", () => discord.botMessages(dm).find((m) => m.components?.length));
    const asked = `🔐 Approve this?\nexec: echo ran >> once.txt\nin ${join(home, "workspace")}\nwhy: every command is asked about (approvals.exec: always)`;
    expect(q.content).toBe(asked);
    expect(q.components).toEqual([
      {
        type: 1,
        components: [
          { type: 2, style: 3, label: "Allow once", custom_id: expect.stringMatching(/^q:[\w-]+:once$/) },
          { type: 2, style: 2, label: "Allow for 30 min", custom_id: expect.stringMatching(/^q:[\w-]+:for$/) },
          { type: 2, style: 2, label: "Always", custom_id: expect.stringMatching(/^q:[\w-]+:always$/) },
          { type: 2, style: 4, label: "Deny", custom_id: expect.stringMatching(/^q:[\w-]+:deny$/) },
        ],
      },
    ]);

    discord.pressButton(q.id, "Allow once", alice);
    await discord.waitFor("the answer to alice", () => discord.interactionReplies.length === 1);
    expect(discord.interactionReplies[0]).toMatchObject({ type: 4, content: "Only the owner can approve.", flags: 64 });
    expect(existsSync(join(home, "workspace", "once.txt"))).toBe(false);

    discord.pressButton(q.id, "Allow once", owner);
    await discord.waitFor("the final answer", () => discord.botMessages(dm).find((m) => m.content === "Done: it ran once."));
    expect(discord.interactionReplies[1]).toMatchObject({ type: 4, content: "Allowed.", flags: 64 });
    expect(discord.message(q.id)!.content).toBe(`${asked}\n\n✅ Allowed once by owner.`);
    expect(discord.message(q.id)!.components).toEqual([]);
    expect(readFileSync(join(home, "workspace", "once.txt"), "utf8")).toBe("ran\n");
  });
});
