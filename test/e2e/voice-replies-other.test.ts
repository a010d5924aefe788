// Spoken replies on Discord and the terminal (one daemon, `reply: "always"`): Discord gets the
// answer's text, then the audio as an attachment of a bot message; `hearth chat -m` prints the
// answer on stdout, exactly, and the saved file's path on stderr.
import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { isolatedEnv, runHearth } from "../support/cli-process.ts";
import { cleanupDaemon, makeHome, startDaemon, waitFor, type Daemon } from "../support/daemon.ts";
import { startFakeDiscord, type FakeDiscord, type FakeUser } from "../support/fake-discord.ts";
import { startFakeModel, text, type FakeModel } from "../support/fake-model.ts";
import { fakeAudio, startFakeSpeech, type FakeSpeech } from "../support/fake-speech.ts";

let model: FakeModel;
let discord: FakeDiscord;
let tts: FakeSpeech;
let daemon: Daemon | undefined;
let home: string;
let owner: FakeUser;

beforeAll(async () => {
  model = await startFakeModel();
  discord = await startFakeDiscord();
  tts = await startFakeSpeech();
  owner = discord.addUser("owner");
  home = makeHome({
    channels: { discord: { apiBase: discord.apiBase, ownerIds: [owner.id] } },
    voice: { tts: { baseUrl: tts.baseUrl, model: "kokoro", voice: "af_bella", format: "mp3" }, reply: "always" },
  });
  daemon = await startDaemon(home, { DISCORD_BOT_TOKEN: discord.token, ANTHROPIC_API_KEY: "test-key", ANTHROPIC_BASE_URL: model.url });
  await waitFor("discord connected", () => discord.connected(), 15_000);
});

afterAll(async () => {
  await cleanupDaemon(daemon, home);
  await discord.close();
  await model.close();
  await tts.close();
});

describe("spoken replies on Discord and the terminal (daemon e2e)", () => {
  it("Discord: the text, then one bot message with the audio attachment; a local server costs nothing", async () => {
    model.enqueue(text("Sure — *two* things."));
    const dm = discord.dmChannel(owner);
    discord.sendMessage({ channelId: dm, author: owner, content: "what's up?" });
    await discord.waitFor("the audio", () => discord.botMessages(dm).find((m) => m.attachments?.length), 30_000);
    const messages = discord.botMessages(dm);
    expect(messages.map((m) => [m.content, (m.attachments ?? []).map((a) => a.name)])).toEqual([
      ["Sure — *two* things.", []],
      ["", ["answer.mp3"]],
    ]);
    expect(Buffer.from(messages[1]!.attachments![0]!.bytes).equals(Buffer.from(fakeAudio("Sure — two things.")))).toBe(true);
    expect(tts.requests.map((r) => [r.model, r.voice, r.format, r.input])).toEqual([["kokoro", "af_bella", "mp3", "Sure — two things."]]);
    await waitFor("the usage record", () => readFileSync(join(home, "usage.jsonl"), "utf8").includes('"kind":"speech"'), 30_000);
    const speech = readFileSync(join(home, "usage.jsonl"), "utf8").trim().split("\n").map((l) => JSON.parse(l)).filter((r) => r.kind === "speech");
    expect(speech).toEqual([expect.objectContaining({ model: "kokoro", characters: 18, costUsd: 0 })]);
  });

  it("the terminal: stdout is exactly the answer; the audio is saved in the workspace and its path is on stderr", async () => {
    model.enqueue(text("Hello from **Hearth**."));
    const r = await runHearth(["chat", "-m", "say hello"], isolatedEnv({ HEARTH_HOME: home, ANTHROPIC_API_KEY: "test-key", ANTHROPIC_BASE_URL: model.url }));
    expect(r.code).toBe(0);
    expect(r.stdout).toBe("Hello from **Hearth**.\n");
    const path = /🔊 spoken answer: (media\/\d{4}-\d{2}\/\d{4}-\d{2}-\d{2}-[0-9a-f]{12}\.mp3)/.exec(r.stderr)?.[1];
    expect(path).toBeDefined();
    expect(existsSync(join(home, "workspace", path!))).toBe(true);
    expect(readFileSync(join(home, "workspace", path!)).equals(Buffer.from(fakeAudio("Hello from Hearth.")))).toBe(true);
  });
});
