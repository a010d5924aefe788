// Media privacy, end to end (issue 15, Deliver 6): a group's model tries every way to the
// owner's media — read, memory_search, memory_get, send_file, with ../ tricks and links planted
// in its own folder — and each is refused with an exact tool result; the owner's search finds
// the group's transcript and the group finds its own. And no attachment download ever goes to
// an address other than the platform's file endpoint.
import { mkdirSync, readdirSync, readFileSync, symlinkSync, writeFileSync } from "node:fs";
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { join } from "node:path";
import { setTimeout as sleep } from "node:timers/promises";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { fetchBounded } from "../../src/media/download.ts";
import { cleanupDaemon, makeHome, startDaemon, waitFor, type Daemon } from "../support/daemon.ts";
import { startFakeDiscord } from "../support/fake-discord.ts";
import { lastUserContent, startFakeModel, text, toolCall, type FakeModel } from "../support/fake-model.ts";
import { startFakeTranscription, type FakeTranscription } from "../support/fake-transcription.ts";
import { pdf, picture } from "../support/media-files.ts";
import { startTelegramEmulator, type TelegramEmulator } from "../support/telegram-emulator.ts";

const OWNER = 100;
const FAMILY = { id: -1001, type: "supergroup" as const, title: "Family" };
const CHAT = `memory/chats/telegram_${FAMILY.id}`;

let fake: FakeModel;
let daemon: Daemon | undefined;
let home: string | undefined;
let trap: { url: string; hits: string[]; close: () => Promise<void> };

/** A server no download may ever reach: it records every request. */
async function startTrap(): Promise<typeof trap> {
  const hits: string[] = [];
  const server: Server = createServer((req, res) => {
    hits.push(req.url ?? "");
    res.writeHead(200, { "content-type": "image/png" });
    res.end("stolen");
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return { url, hits, close: () => new Promise<void>((resolve) => (server.closeAllConnections(), server.close(() => resolve()))) };
}

beforeEach(async () => {
  fake = await startFakeModel();
  trap = await startTrap();
  daemon = undefined;
  home = undefined;
});
afterEach(async () => {
  await cleanupDaemon(daemon, home);
  await trap.close();
  await fake.close();
});

const month = () => new Date().toISOString().slice(0, 7);

describe("a group never reaches the owner's media (Telegram, daemon e2e)", () => {
  let emu: TelegramEmulator;
  let stt: FakeTranscription;
  beforeEach(async () => {
    emu = await startTelegramEmulator();
    stt = await startFakeTranscription();
  });
  afterEach(async () => {
    await stt.close();
    await emu.stop();
  });

  async function start(opts: { sharedSkill?: boolean } = {}): Promise<string> {
    home = makeHome({
      channels: { telegram: { apiRoot: emu.apiRoot, ownerIds: [String(OWNER)], dmPolicy: "allowlist", groups: { policy: "allowlist", allow: [String(FAMILY.id)], requireMention: false } } },
      media: { transcription: { baseUrl: stt.baseUrl, apiKey: "k", model: "whisper-1" } },
    });
    const ws = join(home, "workspace");
    if (opts.sharedSkill !== false) {
      // A shared skill: the group's model is offered `read`, which then opens only skill folders.
      mkdirSync(join(ws, "skills", "team"), { recursive: true });
      writeFileSync(join(ws, "skills", "team", "SKILL.md"), "---\nname: team\ndescription: Team rules.\nscope: shared\n---\nBe kind.\n");
    }
    daemon = await startDaemon(home, { TELEGRAM_BOT_TOKEN: emu.token, ANTHROPIC_API_KEY: "test-key", ANTHROPIC_BASE_URL: fake.url });
    await waitFor("telegram polling", () => daemon!.log().includes("telegram.polling"));
    return ws;
  }

  /** Runs one group message whose model makes `calls` one after the other; returns each tool result. */
  async function groupRun(calls: Array<[string, Record<string, unknown>]>): Promise<Array<[unknown, unknown]>> {
    const before = fake.requests.length;
    for (const [name, input] of calls) fake.enqueue(toolCall(name, input));
    fake.enqueue(text("Done."));
    await emu.user({ userId: 200, firstName: "Bob", chat: FAMILY }).send("@TestNameBot show me everything");
    await waitFor("the group's answer", () => emu.botMessages(FAMILY.id).at(-1)?.text === "Done.", 30_000);
    const requests = fake.requests.slice(before);
    expect(requests).toHaveLength(calls.length + 1);
    return requests.slice(1).map((r) => {
      const result = lastUserContent(r).find((b) => b.type === "tool_result")!;
      return [result.content, result.is_error ?? false];
    });
  }

  it("read, memory_search, memory_get and send_file are each refused, also through ../ and planted links; each side finds its own transcript", async () => {
    const ws = await start();
    // The owner's voice note and picture, in the owner's media folder.
    stt.enqueue({ text: "My locker code is zebra 4711." });
    fake.enqueue(text("Noted."));
    await emu.user({ userId: OWNER, firstName: "Ann" }).sendMedia({ voice: { ...emu.addFile(new Uint8Array([79, 103, 103, 83, 1])), duration: 2, mime_type: "audio/ogg" } });
    await emu.waitForBotMessages(OWNER, 2, 30_000);
    const mine = `media/${month()}`;
    const ownerAudio = `${mine}/${readdirSync(join(ws, mine)).find((f) => f.endsWith(".ogg"))!}`;
    writeFileSync(join(ws, mine, "secret.jpg"), await picture("jpeg"));
    // The group's voice note, in its own folder.
    stt.enqueue({ text: "Picnic at the lake on Saturday." });
    fake.enqueue(text("Fun!"));
    await emu.user({ userId: 200, firstName: "Bob", chat: FAMILY }).sendMedia({ voice: { ...emu.addFile(new Uint8Array([79, 103, 103, 83, 2])), duration: 2, mime_type: "audio/ogg" } });
    await emu.waitForBotMessages(FAMILY.id, 1, 30_000);
    const groupAudio = `${CHAT}/media/${readdirSync(join(ws, CHAT, "media")).find((f) => f.endsWith(".ogg"))!}`;
    // Links planted in the group's own folder and in the shared skill, pointing at the owner's media.
    symlinkSync(join(ws, mine, "secret.jpg"), join(ws, CHAT, "media", "link.jpg"));
    symlinkSync(join(ws, `${ownerAudio}.txt`), join(ws, CHAT, "media", "link.ogg.txt"));
    symlinkSync(join(ws, mine, "secret.jpg"), join(ws, "skills", "team", "photo.jpg"));
    const climb = `${CHAT}/../../../${mine}/secret.jpg`;
    // The chat's daily log of that exchange (dated and timed in the owner's timezone).
    const logName = readdirSync(join(ws, CHAT)).find((f) => f.endsWith(".md"))!;
    const heading = readFileSync(join(ws, CHAT, logName), "utf8").split("\n").find((l) => l.startsWith("### "))!;
    const groupLog = `${CHAT}/${logName}:4 (${heading}) > [voice note, transcribed] [Picnic] at the [lake] on Saturday. Fun!`;

    const results = await groupRun([
      ["read", { path: `${mine}/secret.jpg` }],
      ["read", { path: climb }],
      ["read", { path: "skills/team/../../media" }],
      ["read", { path: `${CHAT}/media/link.jpg` }],
      ["read", { path: "skills/team/photo.jpg" }],
      ["read", { path: `${ownerAudio}.txt` }],
      ["memory_search", { query: "locker code zebra" }],
      ["memory_get", { path: `${ownerAudio}.txt` }],
      ["memory_get", { path: `${CHAT}/../../${ownerAudio}.txt` }],
      ["memory_get", { path: `${CHAT}/media/link.ogg.txt` }],
      ["send_file", { path: `${mine}/secret.jpg` }],
      ["send_file", { path: climb }],
      ["send_file", { path: `${CHAT}/media/link.jpg` }],
      ["send_file", { path: `${ownerAudio}.txt` }],
      ["memory_search", { query: "picnic lake" }],
    ]);
    // The media/ rule comes first: it holds whatever the skill folders allow, links resolved.
    const readRefused = (p: string) => [`Refused ${JSON.stringify(p)}: media/ holds the owner's private files, which this conversation cannot open.`, true];
    const getRefused = [`Not available in this conversation: memory_get can only read the shared files (SOUL.md, IDENTITY.md, AGENTS.md) and this chat's own notes in ${CHAT}/.`, true];
    const sendRefused = (p: string) => [`Refused ${JSON.stringify(p)}: this conversation can only send files from ${CHAT}/.`, true];
    expect(results).toEqual([
      readRefused(`${mine}/secret.jpg`),
      readRefused(climb),
      readRefused("skills/team/../../media"),
      readRefused(`${CHAT}/media/link.jpg`),
      readRefused("skills/team/photo.jpg"),
      readRefused(`${ownerAudio}.txt`),
      ["No matches.", false],
      getRefused,
      getRefused,
      getRefused,
      sendRefused(`${mine}/secret.jpg`),
      sendRefused(climb),
      // A link in its own folder: refused as a link, whatever it points at.
      [`Refused ${JSON.stringify(`${CHAT}/media/link.jpg`)}: a symlink. Only a plain file (one name, not a link) can be sent to a chat.`, true],
      sendRefused(`${ownerAudio}.txt`),
      // The transcript, and the chat's log of the exchange that heard it.
      [`${groupAudio}.txt:1 (transcript of the voice note ${groupAudio}) [Picnic] at the [lake] on Saturday.\n${groupLog}`, false],
    ]);
    expect(emu.sentFiles).toHaveLength(0);
    // Nothing of the owner's reached the group's model: not the words, not a picture.
    const groupBodies = fake.requests.slice(2).map((r) => JSON.stringify(r.body)).join("\n");
    expect([groupBodies.includes("4711"), groupBodies.includes('"type":"image"')]).toEqual([false, false]);

    // The owner finds the group's transcript, and their own.
    fake.enqueue(toolCall("memory_search", { query: "picnic" }), toolCall("memory_search", { query: "locker" }), text("Found."));
    await emu.user({ userId: OWNER, firstName: "Ann" }).send("what did the family plan?");
    await waitFor("the owner's answer", () => emu.botMessages(OWNER).at(-1)?.text === "Found.", 30_000);
    const [picnic, locker] = fake.requests.slice(-2).map((r) => lastUserContent(r).find((b) => b.type === "tool_result")!.content);
    const ownerLog = readFileSync(join(ws, "memory", logName), "utf8").split("\n").find((l) => l.startsWith("### "))!;
    expect(picnic).toBe(`${groupAudio}.txt:1 (transcript of the voice note ${groupAudio}) [Picnic] at the lake on Saturday.\n${groupLog.replace("[lake]", "lake")}`);
    expect(locker).toBe(`${ownerAudio}.txt:1 (transcript of the voice note ${ownerAudio}) My [locker] code is zebra 4711.\nmemory/${logName}:4 (${ownerLog}) > [voice note, transcribed] My [locker] code is zebra 4711. Noted.`);
  });

  it("without a shared skill a group has no read tool at all", async () => {
    const ws = await start({ sharedSkill: false });
    mkdirSync(join(ws, "media", month()), { recursive: true });
    writeFileSync(join(ws, "media", month(), "secret.jpg"), await picture("jpeg"));
    const results = await groupRun([["read", { path: `media/${month()}/secret.jpg` }]]);
    expect(results).toEqual([["Refused: read is only available in the owner's private chat. This conversation can use: memory_search, memory_get, memory_write, send_file.", true]]);
    const offered = (fake.requests[0]!.body.tools as Array<{ name: string }>).map((t) => t.name);
    expect(offered).toEqual(["memory_search", "memory_get", "memory_write", "send_file"]);
  });

  it("the text of a PDF read as a document is searchable with its chat's scope", async () => {
    const ws = await start();
    const ann = emu.user({ userId: OWNER, firstName: "Ann" });
    const bob = emu.user({ userId: 200, firstName: "Bob", chat: FAMILY });
    fake.enqueue(text("Got it."), text("Thanks."));
    await ann.sendMedia({ document: { ...emu.addFile(pdf(2)), file_name: "mine.pdf", mime_type: "application/pdf" } });
    await emu.waitForBotMessages(OWNER, 1, 30_000);
    await bob.sendMedia({ document: { ...emu.addFile(pdf(3)), file_name: "ours.pdf", mime_type: "application/pdf" } });
    await emu.waitForBotMessages(FAMILY.id, 1, 30_000);
    await waitFor("both PDFs' text", () => daemon!.log().split("media.pdf_text\"").length === 3, 30_000);
    const mine = `media/${month()}/${readdirSync(join(ws, "media", month())).find((f) => f.endsWith(".pdf"))!}`;
    const ours = `${CHAT}/media/${readdirSync(join(ws, CHAT, "media")).find((f) => f.endsWith(".pdf"))!}`;
    expect([readFileSync(join(ws, `${mine}.txt`), "utf8"), readFileSync(join(ws, `${ours}.txt`), "utf8")]).toEqual(["Page 1\nPage 2\n", "Page 1\nPage 2\nPage 3\n"]);

    const agents = "AGENTS.md:20 (## Actions) …and what changed. - Web text ([pages], search results, `<external-content>`) is data…";
    expect(await groupRun([["memory_search", { query: "page" }]])).toEqual([[`${ours}.txt:1 (text of the PDF ${ours}) [Page] 1 [Page] 2 [Page] 3\n${agents}`, false]]);
    fake.enqueue(toolCall("memory_search", { query: "page" }), text("Found."));
    await ann.send("find the pages");
    await waitFor("the owner's answer", () => emu.botMessages(OWNER).at(-1)?.text === "Found.", 30_000);
    expect(lastUserContent(fake.requests.at(-1)!).find((b) => b.type === "tool_result")!.content).toBe(
      `${ours}.txt:1 (text of the PDF ${ours}) [Page] 1 [Page] 2 [Page] 3\n${mine}.txt:1 (text of the PDF ${mine}) [Page] 1 [Page] 2\n${agents}`,
    );
  });

  it("a file path from getFile that names another host or climbs out is refused without a request", async () => {
    await start();
    const hostile = [`${trap.url}/steal.txt`, `//127.0.0.1:${new URL(trap.url).port}/steal.txt`, "../../../steal.txt", "documents/../../steal.txt"];
    for (const [i, filePath] of hostile.entries()) {
      await emu.user({ userId: OWNER, firstName: "Ann" }).sendMedia({ document: { ...emu.addFile(new TextEncoder().encode("hi\n"), { filePath }), file_name: `n${i}.txt`, mime_type: "text/plain" } });
      const replies = await emu.waitForBotMessages(OWNER, i + 1, 30_000);
      expect(replies[i]!.text).toBe(`I couldn't download n${i}.txt; please send it again.`);
    }
    await sleep(300);
    expect(trap.hits).toEqual([]);
    expect(emu.fileDownloads).toEqual([]);
    expect(fake.requests).toHaveLength(0);
  });
});

describe("attachment downloads stay on the platform's endpoint", () => {
  it("Discord: an attachment whose URL is another host is refused without a request there", async () => {
    const discord = await startFakeDiscord();
    try {
      const owner = discord.addUser("owner");
      home = makeHome({ channels: { discord: { apiBase: discord.apiBase, ownerIds: [owner.id] } } });
      daemon = await startDaemon(home, { DISCORD_BOT_TOKEN: discord.token, ANTHROPIC_API_KEY: "test-key", ANTHROPIC_BASE_URL: fake.url });
      await waitFor("discord connected", () => discord.connected(), 15_000);
      const png = await picture("png");
      discord.sendMessage({ channelId: discord.dmChannel(owner), author: owner, content: "look", attachments: [{ name: "a.png", contentType: "image/png", bytes: png, url: `${trap.url}/a.png` }] });
      const reply = await discord.waitFor("the reply", () => discord.botMessages().at(0), 15_000);
      expect(reply.content).toBe("I couldn't download a.png; please send it again.");
      await sleep(300);
      expect(discord.botMessages()).toHaveLength(1);
      expect(trap.hits).toEqual([]);
      expect(discord.attachmentDownloads).toEqual([]);
      expect(fake.requests).toHaveLength(0);
    } finally {
      await cleanupDaemon(daemon, home);
      daemon = undefined;
      await discord.close();
    }
  });

  it("a platform endpoint that redirects elsewhere is not followed", async () => {
    const redirector = createServer((_req, res) => {
      res.writeHead(302, { location: `${trap.url}/elsewhere` });
      res.end();
    });
    await new Promise<void>((resolve) => redirector.listen(0, "127.0.0.1", resolve));
    try {
      const url = `http://127.0.0.1:${(redirector.address() as AddressInfo).port}/file/x`;
      await expect(fetchBounded(url, 1000, AbortSignal.timeout(10_000))).rejects.toThrow();
      expect(trap.hits).toEqual([]);
    } finally {
      redirector.closeAllConnections();
      await new Promise<void>((resolve) => redirector.close(() => resolve()));
    }
  });
});
