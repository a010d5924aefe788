// The Telegram channel in-process against the Bot API emulator (behind the recording proxy):
// polling and its failures, what reaches the gateway, and how replies are rendered.
import { setTimeout as sleep } from "node:timers/promises";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import type { Channel, InboundMessage } from "../../../src/channels/channel.ts";
import { markdownToTelegramHtml, stripMarkdown } from "../../../src/channels/telegram/html.ts";
import { createTelegramChannel, type TelegramChannelOptions } from "../../../src/channels/telegram/channel.ts";
import { unsupportedReply } from "../../../src/channels/telegram/inbound.ts";
import { createLogger } from "../../../src/process/log.ts";
import { waitFor } from "../../support/daemon.ts";
import { startTelegramEmulator, telegramErrors, type TelegramEmulator } from "../../support/telegram-emulator.ts";

const OWNER = 100;
const GROUP = { id: -1001, type: "supergroup" as const, title: "Family" };

let emu: TelegramEmulator;
let channel: Channel | undefined;
let received: InboundMessage[];
let logs: string[];

beforeEach(async () => {
  emu = await startTelegramEmulator();
  channel = undefined;
  received = [];
  logs = [];
});
afterEach(async () => {
  await channel?.stop();
  await emu.stop();
});

function makeChannel(extra: Partial<TelegramChannelOptions> = {}): Channel {
  const log = createLogger({ level: "debug", sink: { write: (l) => void logs.push(l) } });
  channel = createTelegramChannel(
    {
      token: emu.token,
      apiRoot: emu.apiRoot,
      ownerIds: [String(OWNER)],
      namePattern: null,
      polling: { idlePollMs: 10, idlePollMaxMs: 20, backoff: { initialMs: 200, maxMs: 1000 } },
      ...extra,
    },
    { log },
  );
  return channel;
}

async function startChannel(extra: Partial<TelegramChannelOptions> = {}): Promise<Channel> {
  const ch = makeChannel(extra);
  await ch.start((m) => void received.push(m));
  return ch;
}

async function nextMessage(count = received.length + 1): Promise<InboundMessage> {
  await waitFor(`inbound message #${count}`, () => received.length >= count, 5000);
  return received[count - 1]!;
}

const owner = () => emu.user({ userId: OWNER, firstName: "Ann" });

describe("telegram channel: polling", () => {
  it("start resolves after getMe, learns the bot's name, and delivers DMs and group messages", async () => {
    const ch = await startChannel();
    expect(ch.status()).toEqual({ state: "running", detail: "@TestNameBot" });
    expect(emu.callsTo("getMe")).toHaveLength(1);

    await owner().send("hello");
    const dm = await nextMessage();
    expect(dm).toMatchObject({ channel: "telegram", chat: { id: String(OWNER), type: "dm" }, sender: { id: String(OWNER), name: "Ann", isOwner: true }, text: "hello", addressed: true });

    const bob = emu.user({ userId: 200, firstName: "Bob", chat: GROUP });
    await bob.send("lunch?");
    await bob.send("@TestNameBot what do you think?");
    expect(await nextMessage(2)).toMatchObject({ chat: { id: String(GROUP.id), type: "group", title: "Family" }, text: "lunch?", addressed: false });
    expect(await nextMessage(3)).toMatchObject({ text: "@TestNameBot what do you think?", addressed: true, sender: { isOwner: false } });
  });

  it("a rejected token (401 on getMe) rejects start with what to fix, and never polls", async () => {
    emu.inject({ method: "getMe", reply: telegramErrors.unauthorized() });
    const ch = makeChannel();
    await expect(ch.start(() => {})).rejects.toThrow("Telegram rejected the bot token (401 Unauthorized). Check TELEGRAM_BOT_TOKEN or channels.telegram.token.");
    expect(ch.status()).toMatchObject({ state: "failed", reason: expect.stringContaining("401") });
    await sleep(200);
    expect(emu.callsTo("getUpdates")).toHaveLength(0);
    expect(logs.join("")).toContain("telegram.token_rejected");
    expect(logs.join("")).not.toContain(emu.token);
  });

  it("a token revoked while running (401 on getUpdates) stops polling and shows failed", async () => {
    const ch = await startChannel();
    emu.inject({ method: "getUpdates", reply: telegramErrors.unauthorized(), times: 100 });
    await waitFor("failed status", () => ch.status().state === "failed", 5000);
    const polls = emu.callsTo("getUpdates").filter((c) => c.injected).length;
    await sleep(300);
    expect(emu.callsTo("getUpdates").filter((c) => c.injected)).toHaveLength(polls);
    expect(polls).toBe(1);
  });

  it("a 409 (another poller) is reported as reconnecting and retried with backoff, then recovers", async () => {
    const ch = await startChannel();
    emu.inject({ method: "getUpdates", reply: telegramErrors.conflict(), times: 3 });
    await waitFor("reconnecting", () => ch.status().state === "reconnecting", 3000);
    expect(ch.status()).toMatchObject({ detail: expect.stringMatching(/another process is polling.*409 Conflict.*retrying in \d+ s/) });
    const firstConflict = emu.callsTo("getUpdates").find((c) => c.injected)!.at;
    await waitFor("running again", () => ch.status().state === "running", 5000);
    // Backoff 200, 400, 800 ms (±20 %): three failures take well over half a second, not a hot loop.
    const conflicts = emu.callsTo("getUpdates").filter((c) => c.injected);
    expect(conflicts).toHaveLength(3);
    expect(conflicts.at(-1)!.at - firstConflict).toBeGreaterThanOrEqual(450);
    expect(logs.join("")).toContain("telegram.poll_conflict");
    expect(logs.join("")).toContain("telegram.polling_resumed");

    await owner().send("still there?");
    expect((await nextMessage()).text).toBe("still there?");
  });

  it("network errors back off and never log the token", async () => {
    const ch = await startChannel();
    emu.inject({ method: "getUpdates", reply: "reset", times: 4 });
    await waitFor("reconnecting", () => ch.status().state === "reconnecting", 3000);
    expect(ch.status()).toMatchObject({ detail: expect.stringContaining("cannot fetch updates from Telegram") });
    await waitFor("running again", () => ch.status().state === "running", 8000);
    const resets = emu.callsTo("getUpdates").filter((c) => c.injected);
    expect(resets).toHaveLength(4);
    // 200 + 400 + 800 ms at least 80 % each.
    expect(resets.at(-1)!.at - resets[0]!.at).toBeGreaterThanOrEqual(1100);
    expect(logs.join("")).not.toContain(emu.token);
  });

  it("Telegram unreachable at start: start resolves, the channel reconnects in the background", async () => {
    emu.inject({ method: "getMe", reply: "reset", times: 2 });
    const ch = await startChannel();
    expect(ch.status()).toMatchObject({ state: "reconnecting", detail: expect.stringContaining("cannot reach Telegram") });
    await waitFor("running", () => ch.status().state === "running", 5000);
    await owner().send("back online");
    expect((await nextMessage()).text).toBe("back online");
  });

  it("stop ends polling for good and is safe to call twice", async () => {
    const ch = await startChannel();
    await ch.stop();
    expect(ch.status()).toEqual({ state: "stopped" });
    const polls = emu.callsTo("getUpdates").length;
    await owner().send("anyone?");
    await sleep(200);
    expect(emu.callsTo("getUpdates")).toHaveLength(polls);
    expect(received).toHaveLength(0);
    await ch.stop();
  });
});

describe("telegram channel: replies", () => {
  it("streams into one message: a plain preview, then the final text as HTML in the same message", async () => {
    const ch = await startChannel();
    await owner().send("hi");
    const reply = ch.openReply(await nextMessage());
    reply.textDelta("Hello **wor");
    await emu.waitForBotMessages(OWNER, 1);
    reply.textDelta("ld**, and `code` & <tags>");
    await reply.finish("Hello **world**, and `code` & <tags>");
    const [msg, ...rest] = emu.botMessages(OWNER);
    expect(rest).toHaveLength(0);
    expect(msg!.history[0]).toBe("Hello **wor");
    expect(msg!.text).toBe("Hello <b>world</b>, and <code>code</code> &amp; &lt;tags&gt;");
    expect(msg!.parseMode).toBe("HTML");
    expect(msg!.replyToMessageId).toBeUndefined();
  });

  it("preview edits are throttled to about one a second and merged; the final text is not held back", async () => {
    const ch = await startChannel();
    await owner().send("count");
    const reply = ch.openReply(await nextMessage());
    const started = Date.now();
    for (let i = 1; i <= 25; i++) {
      reply.textDelta(`${i} `);
      await sleep(100);
    }
    const finishAt = Date.now();
    await reply.finish("done");
    const finishedAt = Date.now();
    const [msg] = emu.botMessages(OWNER);
    // 2.5 s of deltas: the first send plus at most 3 throttled edits, then the final edit.
    expect(msg!.edits).toBeGreaterThanOrEqual(2);
    expect(msg!.edits).toBeLessThanOrEqual(4);
    expect(msg!.history.slice(1, -1).every((t) => t.startsWith("1 2 3"))).toBe(true);
    expect(msg!.text).toBe("done");
    expect(finishedAt - finishAt).toBeLessThan(500);
    expect(finishAt - started).toBeGreaterThan(2000);
  });

  it("the typing indicator degrades quietly where the server lacks sendChatAction (asked once per channel)", async () => {
    const ch = await startChannel();
    await owner().send("one");
    await ch.openReply(await nextMessage()).finish("first");
    await owner().send("two");
    await ch.openReply(await nextMessage()).finish("second");
    expect(emu.callsTo("sendChatAction")).toHaveLength(1);
    expect(emu.botMessages(OWNER).map((m) => m.text)).toEqual(["first", "second"]);
  });

  it("a group reply quotes the message that asked; a forum topic reply goes into the topic", async () => {
    const ch = await startChannel();
    const bob = emu.user({ userId: 200, firstName: "Bob", chat: GROUP });
    const asked = await bob.send("@TestNameBot hi");
    await ch.openReply(await nextMessage()).finish("Hi Bob");
    expect(emu.botMessages(GROUP.id)).toMatchObject([{ text: "Hi Bob", replyToMessageId: asked }]);

    const forum = { id: -1003, type: "supergroup" as const, title: "Club", isForum: true };
    const carl = emu.user({ userId: 300, firstName: "Carl", chat: forum });
    await carl.send("@TestNameBot in a topic", { message_thread_id: 77, is_topic_message: true });
    const m = await nextMessage(2);
    expect(m.chat.threadId).toBe("77");
    await ch.openReply(m).finish("Topic answer");
    expect(emu.botMessages(forum.id)).toMatchObject([{ text: "Topic answer", threadId: 77 }]);
  });

  it("final HTML that Telegram rejects is sent again as plain text", async () => {
    const ch = await startChannel();
    emu.inject({ method: "sendMessage", when: (b) => b.parse_mode === "HTML", reply: telegramErrors.cantParseEntities() });
    await owner().send("hi");
    const text = "Some **bold** and [a link](https://example.com)";
    await ch.openReply(await nextMessage()).finish(text);
    const msgs = emu.botMessages(OWNER);
    expect(msgs).toHaveLength(1);
    expect(msgs[0]!.text).toBe(stripMarkdown(text));
    expect(msgs[0]!.parseMode).toBeUndefined();
    expect(emu.callsTo("sendMessage").map((c) => c.status)).toEqual([400, 200]);
  });

  it("a rejected final edit falls back to plain text in the same message", async () => {
    const ch = await startChannel();
    emu.inject({ method: "editMessageText", when: (b) => b.parse_mode === "HTML", reply: telegramErrors.cantParseEntities() });
    await owner().send("hi");
    const reply = ch.openReply(await nextMessage());
    reply.textDelta("Some");
    await emu.waitForBotMessages(OWNER, 1);
    await reply.finish("Some **bold**");
    expect(emu.botMessages(OWNER)).toMatchObject([{ text: "Some bold", parseMode: undefined, edits: 1 }]);
  });

  it("'message is not modified' is ignored: no error, no second message", async () => {
    const ch = await startChannel();
    emu.inject({ method: "editMessageText", reply: telegramErrors.notModified() });
    await owner().send("hi");
    const reply = ch.openReply(await nextMessage());
    reply.textDelta("Same text");
    await emu.waitForBotMessages(OWNER, 1);
    await expect(reply.finish("Same text")).resolves.toBeUndefined();
    expect(emu.callsTo("editMessageText")).toMatchObject([{ status: 400, injected: true }]);
    expect(emu.botMessages(OWNER)).toHaveLength(1);
    expect(emu.callsTo("sendMessage")).toHaveLength(1);
  });

  it("a 429 on the final text is retried after retry_after and the reply arrives once", async () => {
    const ch = await startChannel();
    emu.inject({ method: "sendMessage", when: (b) => b.parse_mode === "HTML", reply: telegramErrors.tooManyRequests(1) });
    await owner().send("hi");
    const started = Date.now();
    await ch.openReply(await nextMessage()).finish("Answer **once**");
    expect(Date.now() - started).toBeGreaterThanOrEqual(950);
    expect(emu.botMessages(OWNER)).toMatchObject([{ text: "Answer <b>once</b>", edits: 0 }]);
    expect(emu.callsTo("sendMessage").map((c) => c.status)).toEqual([429, 200]);
  });

  it("a 429 on a preview skips previews for the window instead of waiting, and the final arrives once", async () => {
    const ch = await startChannel();
    emu.inject({ method: "sendMessage", when: (b) => b.parse_mode === undefined, reply: telegramErrors.tooManyRequests(3) });
    await owner().send("hi");
    const reply = ch.openReply(await nextMessage());
    reply.textDelta("partial");
    await waitFor("the preview attempt", () => emu.callsTo("sendMessage").length === 1, 3000);
    const finishing = Date.now();
    await reply.finish("Full answer");
    // The final waited for the rate-limit window (auto-retry), not for a preview stuck in it.
    expect(emu.botMessages(OWNER)).toMatchObject([{ text: "Full answer", edits: 0 }]);
    expect(Date.now() - finishing).toBeLessThan(1500);
    expect(emu.callsTo("sendMessage").map((c) => c.status)).toEqual([429, 200]);
  });

  it("an answer past 4,000 characters continues in a second message, split outside the code block", async () => {
    const ch = await startChannel();
    await owner().send("long");
    const para = (i: number) => `Paragraph ${i}: ${"lorem ipsum dolor sit amet ".repeat(8).trim()}.`;
    const code = "```ts\n" + Array.from({ length: 40 }, (_, i) => `const line${i} = "${"x".repeat(20)}";`).join("\n") + "\n```";
    const answer = [...Array.from({ length: 15 }, (_, i) => para(i)), code, ...Array.from({ length: 8 }, (_, i) => para(100 + i))].join("\n\n");
    expect(answer.length).toBeGreaterThan(5000);
    await ch.openReply(await nextMessage()).finish(answer);
    const msgs = emu.botMessages(OWNER);
    expect(msgs).toHaveLength(2);
    expect(msgs[0]!.text).not.toContain("<pre>");
    expect(msgs[1]!.text).toContain(`<pre><code class="language-ts">const line0`);
    expect(msgs[1]!.text).toContain("const line39 = ");
    expect(msgs.every((m) => m.parseMode === "HTML")).toBe(true);
  });

  it("a reply opened from a message replayed after a restart (raw from JSON) reaches the same chat", async () => {
    const ch = await startChannel();
    const bob = emu.user({ userId: 200, firstName: "Bob", chat: GROUP });
    const asked = await bob.send("@TestNameBot remember me");
    const replayed = JSON.parse(JSON.stringify(await nextMessage())) as InboundMessage;
    await ch.openReply(replayed).finish("Back again");
    await ch.openReply({ ...replayed, raw: undefined }).finish("Without raw");
    expect(emu.botMessages(GROUP.id)).toMatchObject([
      { text: "Back again", replyToMessageId: asked },
      { text: "Without raw", replyToMessageId: undefined },
    ]);
  });

  it("send() delivers a proactive message, split and rendered like a final reply", async () => {
    const ch = await startChannel();
    const paragraphs = Array.from({ length: 12 }, (_, i) => `**Item ${i}** ${"word ".repeat(100).trim()}`);
    await ch.send({ channel: "telegram", chatId: String(OWNER) }, paragraphs.join("\n\n"));
    const msgs = emu.botMessages(OWNER);
    expect(msgs).toHaveLength(2);
    expect(msgs[0]!.text.startsWith("<b>Item 0</b>")).toBe(true);
    expect(msgs[1]!.text).toContain("<b>Item 11</b>");
    expect(msgs.every((m) => m.text.length <= 4096)).toBe(true);
  });
});

describe("telegram channel: messages it cannot read", () => {
  const photo = { photo: [{ file_id: "p", file_unique_id: "u", width: 10, height: 10 }] };

  it("a photo in a DM goes to the gateway as an attachment, not yet downloaded, with no text; the channel answers nothing itself", async () => {
    await startChannel();
    await emu.user({ userId: 555, firstName: "Stranger" }).sendMedia(photo);
    const m = await nextMessage();
    expect(m).toMatchObject({ chat: { id: "555", type: "dm" }, sender: { id: "555" }, text: "", addressed: true, attachments: [{ kind: "image", name: "photo.jpg", mime: "image/jpeg" }] });
    expect(m.unreadableNote).toBeUndefined();
    expect(emu.callsTo("getFile")).toHaveLength(0);
    await sleep(200);
    expect(emu.botMessages(555)).toHaveLength(0);
  });

  it("a captioned photo counts as text", async () => {
    await startChannel();
    await owner().sendMedia({ ...photo, caption: "what is this?" });
    const m = await nextMessage();
    expect(m.text).toBe("what is this?");
    expect(m.unreadableNote).toBeUndefined();
    expect(emu.botMessages(OWNER)).toHaveLength(0);
  });

  it("an album (media_group_id) reaches the gateway as one message with every picture and the caption", async () => {
    await startChannel();
    const part = (id: string, extra: Record<string, unknown> = {}) => ({ photo: [{ file_id: id, file_unique_id: id, width: 10, height: 10 }], media_group_id: "album-1", ...extra });
    await owner().sendMedia(part("a", { caption: "our trip" }));
    await owner().sendMedia(part("b"));
    await owner().sendMedia(part("c"));
    const m = await nextMessage();
    expect(m.text).toBe("our trip");
    expect(m.attachments).toHaveLength(3);
    await sleep(1200);
    expect(received).toHaveLength(1);
  });

  it("in groups media is addressed only as a reply to the bot", async () => {
    await startChannel();
    const bob = emu.user({ userId: 200, firstName: "Bob", chat: GROUP });
    await bob.sendMedia({ sticker: { file_id: "s", file_unique_id: "u", type: "regular", width: 1, height: 1, is_animated: false, is_video: false } });
    await bob.sendMedia({ voice: { file_id: "v", file_unique_id: "u", duration: 1 }, reply_to_message: { message_id: 1, date: 1, chat: GROUP, from: { id: 666, is_bot: true, first_name: "T" } } });
    expect(await nextMessage(1)).toMatchObject({ addressed: false, unreadableNote: unsupportedReply("sticker") });
    expect(await nextMessage(2)).toMatchObject({ addressed: true, attachments: [{ kind: "audio", name: "voice.ogg" }] });
    await sleep(200);
    expect(emu.botMessages(GROUP.id)).toHaveLength(0);
  });
});

// Keeps the HTML renderer honest about what the tests above expect.
it("markdownToTelegramHtml renders the sample used above", () => {
  expect(markdownToTelegramHtml("Answer **once**")).toBe("Answer <b>once</b>");
});
