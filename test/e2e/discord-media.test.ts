// Discord attachments end to end: the real daemon with the Discord channel against the fake
// Discord, which serves each attachment at the URL its message payload names.
import { readdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { setTimeout as sleep } from "node:timers/promises";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { cleanupDaemon, makeHome, startDaemon, waitFor, type Daemon } from "../support/daemon.ts";
import { startFakeDiscord, type FakeDiscord, type FakeUser } from "../support/fake-discord.ts";
import { lastUserContent, startFakeModel, text, toolCall, type FakeModel } from "../support/fake-model.ts";
import { picture } from "../support/media-files.ts";

let model: FakeModel;
let discord: FakeDiscord;
let daemon: Daemon | undefined;
let home: string | undefined;
let owner: FakeUser;

beforeEach(async () => {
  model = await startFakeModel();
  discord = await startFakeDiscord();
  owner = discord.addUser("owner");
  daemon = undefined;
  home = undefined;
});
afterEach(async () => {
  await cleanupDaemon(daemon, home);
  await discord.close();
  await model.close();
});

async function start(): Promise<void> {
  home = makeHome({ channels: { discord: { apiBase: discord.apiBase, ownerIds: [owner.id] } } });
  daemon = await startDaemon(home, { DISCORD_BOT_TOKEN: discord.token, ANTHROPIC_API_KEY: "test-key", ANTHROPIC_BASE_URL: model.url });
  await waitFor("discord connected", () => discord.connected(), 15_000);
}

describe("Discord attachments (daemon e2e)", () => {
  it("a picture in the owner's DM is fetched from its attachment URL and reaches the model as an image block with equal bytes", async () => {
    await start();
    model.enqueue(text("A square."));
    const png = await picture("png");
    discord.sendMessage({ channelId: discord.dmChannel(owner), author: owner, content: "what is this?", attachments: [{ name: "square.png", contentType: "image/png", bytes: png }] });
    await model.waitForRequests(1, 20_000);
    const image = lastUserContent(model.requests[0]!).find((b) => b.type === "image");
    expect(image!.source).toEqual({ type: "base64", media_type: "image/png", data: Buffer.from(png).toString("base64") });
    expect(discord.attachmentDownloads).toHaveLength(1);
    const month = new Date().toISOString().slice(0, 7);
    expect(readdirSync(join(home!, "workspace", "media", month))).toHaveLength(1);
  });

  it("a video gets one clear sentence and no model call", async () => {
    await start();
    discord.sendMessage({ channelId: discord.dmChannel(owner), author: owner, content: "", attachments: [{ name: "clip.mp4", contentType: "video/mp4", bytes: new Uint8Array([1, 2, 3]) }] });
    const reply = await discord.waitFor("the reply", () => discord.botMessages().at(0), 15_000);
    expect(reply.content).toBe("I can't watch videos yet, sorry. Could you describe it in a message?");
    await sleep(300);
    expect(model.requests).toHaveLength(0);
    expect(discord.attachmentDownloads).toHaveLength(0);
  });

  it("send_file uploads the file to the DM as an attachment of one bot message", async () => {
    await start();
    const png = await picture("png");
    writeFileSync(join(home!, "workspace", "chart.png"), png);
    model.enqueue(toolCall("send_file", { path: "chart.png", caption: "The chart" }));
    model.enqueue(text("Sent."));
    const dm = discord.dmChannel(owner);
    discord.sendMessage({ channelId: dm, author: owner, content: "send me the chart" });
    await discord.waitFor("the final answer", () => discord.botMessages(dm).find((m) => m.content === "Sent."), 20_000);
    const withFile = discord.botMessages(dm).filter((m) => m.attachments?.length);
    expect(withFile.map((m) => [m.content, m.attachments!.map((a) => a.name)])).toEqual([["The chart", ["chart.png"]]]);
    expect(Buffer.from(withFile[0]!.attachments![0]!.bytes).equals(Buffer.from(png))).toBe(true);
  });
});
