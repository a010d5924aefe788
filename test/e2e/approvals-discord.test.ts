// Approvals end to end on Discord: with approvals.exec "always", the model's exec puts one
// message with buttons in the owner's DM; another user's press is answered ephemerally "Only the
// owner can approve." and runs nothing; the owner's Allow once runs it and edits the question.
// Allow for 30 min covers the same command until the window has passed; a restart while waiting
// asks once more and runs the command once; no answer within timeoutSeconds is a denial.
import { existsSync, readFileSync, writeFileSync } from "node:fs";
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
let config: Record<string, unknown>;

async function start(): Promise<Daemon> {
  const daemon = await startDaemon(home, { DISCORD_BOT_TOKEN: discord.token, ANTHROPIC_API_KEY: "test-key", ANTHROPIC_BASE_URL: model.url });
  await discord.waitFor("the bot connected", () => discord.connected());
  return daemon;
}
const workspace = () => join(home, "workspace");
const question = (command: string) => `🔐 Approve this?\nexec: ${command}\nin ${workspace()}\nwhy: every command is asked about (approvals.exec: always)\nAllow for 30 min / Always cover: ${command} in ${workspace()}, in this chat`;

beforeAll(async () => {
  model = await startFakeModel();
  discord = await startFakeDiscord();
  owner = discord.addUser("owner");
  alice = discord.addUser("alice");
  dm = discord.dmChannel(owner);
  config = { channels: { discord: { apiBase: discord.apiBase, ownerIds: [owner.id] } }, approvals: { exec: "always" } };
  home = makeHome(config);
  d = await start();
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
    const asked = question("echo ran >> once.txt");
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

  it("Allow for 30 min: the same command runs again without a question; once the window has passed (the grant's times moved back 31 min), it is asked again", async () => {
    const asked = () => discord.botMessages(dm).filter((m) => m.content.startsWith("🔐"));
    const grantFile = join(workspace(), "grant.txt");
    model.enqueue(toolCall("exec", { command: "echo a >> grant.txt" }), text("Made a."));
    discord.sendMessage({ channelId: dm, author: owner, content: "make a" });
    const q = await discord.waitFor("the question", () => asked().find((m) => m.content === question("echo a >> grant.txt")));
    discord.pressButton(q.id, "Allow for 30 min", owner);
    await discord.waitFor("the answer", () => discord.botMessages(dm).find((m) => m.content === "Made a."));
    expect(discord.message(q.id)!.content).toBe(`${question("echo a >> grant.txt")}\n\n✅ Allowed for 30 min by owner: echo a >> grant.txt in ${workspace()}, in this chat`);
    const before = asked().length;

    model.enqueue(toolCall("exec", { command: "echo a >> grant.txt" }), text("Made b."));
    discord.sendMessage({ channelId: dm, author: owner, content: "make b" });
    await discord.waitFor("the answer", () => discord.botMessages(dm).find((m) => m.content === "Made b."));
    expect(asked()).toHaveLength(before);
    expect(readFileSync(grantFile, "utf8")).toBe("a\na\n");

    // The clock moves on: the grant's window is over (grants.json is read afresh for every call).
    const file = join(home, "grants.json");
    const grants = JSON.parse(readFileSync(file, "utf8")) as { version: number; grants: Array<{ at: number; expiresAt: number }> };
    for (const g of grants.grants) (g.at -= 31 * 60_000), (g.expiresAt -= 31 * 60_000);
    writeFileSync(file, JSON.stringify(grants));
    expect((await d.hearth(["grants"])).stdout).toBe("No grants.\n");

    model.enqueue(toolCall("exec", { command: "echo a >> grant.txt" }), text("Made c."));
    discord.sendMessage({ channelId: dm, author: owner, content: "make c" });
    const again = await discord.waitFor("asked again", () => asked().find((m) => m.id !== q.id && m.content === question("echo a >> grant.txt")));
    expect(readFileSync(grantFile, "utf8")).toBe("a\na\n");
    discord.pressButton(again.id, "Allow once", owner);
    await discord.waitFor("the answer", () => discord.botMessages(dm).find((m) => m.content === "Made c."));
    expect(readFileSync(grantFile, "utf8")).toBe("a\na\na\n");
    expect(asked()).toHaveLength(before + 1);
  });

  it("a restart while waiting: the old question loses its buttons, the question is asked once more, and the command runs once", async () => {
    const before = discord.botMessages(dm).filter((m) => m.content.startsWith("🔐")).length;
    const askedLogs = d.log().split("approvals.asked").length;
    model.enqueue(toolCall("exec", { command: "echo ran >> restart.txt" }));
    discord.sendMessage({ channelId: dm, author: owner, content: "run it across a restart" });
    const old = { ...(await discord.waitFor("the question", () => discord.botMessages(dm).find((m) => m.content === question("echo ran >> restart.txt")))) };
    await discord.waitFor("the question on disk", () => d.log().split("approvals.asked").length > askedLogs);
    d.proc.kill("SIGKILL");
    await d.exited;

    model.enqueue(toolCall("exec", { command: "echo ran >> restart.txt" }), text("Ran it after the restart."));
    d = await start();
    await discord.waitFor("the old question retired", () => discord.message(old.id)!.components?.length === 0);
    expect(discord.message(old.id)!.content).toBe(`${old.content}\n\n⏹ Hearth restarted before this was answered. If the task still needs it, you are asked again.`);
    const again = await discord.waitFor("asked once more", () => discord.botMessages(dm).find((m) => m.id !== old.id && m.content === question("echo ran >> restart.txt")));
    expect(discord.message(old.id)!.components).toEqual([]);
    expect(existsSync(join(workspace(), "restart.txt"))).toBe(false);
    discord.pressButton(again.id, "Allow once", owner);
    await discord.waitFor("the answer", () => discord.botMessages(dm).find((m) => m.content === "Ran it after the restart."));
    expect(readFileSync(join(workspace(), "restart.txt"), "utf8")).toBe("ran\n");
    expect(discord.botMessages(dm).filter((m) => m.content.startsWith("🔐"))).toHaveLength(before + 2);
  });

  it("no press: denied after timeoutSeconds, the question says so, and the model is told it was not approved", async () => {
    await d.stop();
    writeFileSync(join(home, "config.json"), JSON.stringify({ ...config, approvals: { exec: "always", timeoutSeconds: 2 } }));
    d = await start();
    model.enqueue(toolCall("exec", { command: "echo never >> never.txt" }), text("It was not approved, so I did nothing."));
    discord.sendMessage({ channelId: dm, author: owner, content: "run the other one" });
    await discord.waitFor("the answer", () => discord.botMessages(dm).find((m) => m.content === "It was not approved, so I did nothing."));
    const q = discord.botMessages(dm).find((m) => m.content.startsWith(question("echo never >> never.txt")))!;
    expect(q.content).toBe(`${question("echo never >> never.txt")}\n\n⌛ Not answered within 2 s: not run.`);
    expect(q.components).toEqual([]);
    expect(existsSync(join(workspace(), "never.txt"))).toBe(false);
    expect(model.requests.at(-1)!.rawBody).toContain("Not run: the owner did not approve this exec call within 2 s (no answer counts as no).");
  });
});
