// The Telegram channel end to end: the real daemon (`hearth start`) polling the Bot API
// emulator (behind the recording proxy), answering through the fake model, driven only through
// emulated Telegram users and the `hearth` CLI.
import { mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { setTimeout as sleep } from "node:timers/promises";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { markdownToTelegramHtml } from "../../src/channels/telegram/html.ts";
import { cleanupDaemon, makeHome, startDaemon, waitFor, type Daemon } from "../support/daemon.ts";
import { startFakeModel, text, toolCall, type FakeModel } from "../support/fake-model.ts";
import { startTelegramEmulator, telegramErrors, type TelegramEmulator } from "../support/telegram-emulator.ts";

const OWNER = 100;
const FAMILY = { id: -1001, type: "supergroup" as const, title: "Family" };
const STRANGERS = { id: -1009, type: "supergroup" as const, title: "Strangers" };

let fake: FakeModel;
let emu: TelegramEmulator;
let daemon: Daemon | undefined;
let home: string | undefined;

beforeEach(async () => {
  fake = await startFakeModel();
  emu = await startTelegramEmulator();
  daemon = undefined;
  home = undefined;
});
afterEach(async () => {
  await cleanupDaemon(daemon, home);
  await emu.stop();
  await fake.close();
});

async function start(opts: { userMd?: string; waitForPolling?: boolean } = {}): Promise<Daemon> {
  home = makeHome({
    channels: {
      telegram: { apiRoot: emu.apiRoot, ownerIds: [String(OWNER)], dmPolicy: "pairing", groups: { policy: "allowlist", allow: [String(FAMILY.id)] } },
    },
  });
  if (opts.userMd !== undefined) {
    mkdirSync(join(home, "workspace"), { recursive: true });
    writeFileSync(join(home, "workspace", "USER.md"), opts.userMd);
  }
  daemon = await startDaemon(home, { TELEGRAM_BOT_TOKEN: emu.token, ANTHROPIC_API_KEY: "test-key", ANTHROPIC_BASE_URL: fake.url });
  if (opts.waitForPolling ?? true) await waitFor("telegram polling", () => daemon!.log().includes("telegram.polling"));
  return daemon;
}

const owner = () => emu.user({ userId: OWNER, firstName: "Ann" });

async function statusJson(d: Daemon): Promise<any> {
  const r = await d.hearth(["status", "--json"]);
  expect(r.code).toBe(0);
  return JSON.parse(r.stdout);
}

/** Waits until the daemon's log has `event` for the `n`-th time. */
async function waitForLog(d: Daemon, event: string, n = 1): Promise<void> {
  await waitFor(`${n}× ${event} in the daemon log`, () => d.log().split(event).length - 1 >= n);
}

/**
 * Checks what Telegram checks in parse_mode HTML: only its tags, properly nested, and no bare
 * `<`, `>` or `&` in the text (entities only where it knows them).
 */
function expectValidTelegramHtml(html: string): void {
  const allowed = new Set(["b", "strong", "i", "em", "u", "ins", "s", "strike", "del", "a", "code", "pre", "blockquote", "tg-spoiler", "span"]);
  const open: string[] = [];
  const token = /<(\/?)([a-z-]+)((?:\s+[a-z-]+="[^"<>]*")*)\s*>|&(?:lt|gt|amp|quot|#\d+|#x[0-9a-f]+);|[<>&]/gi;
  for (const m of html.matchAll(token)) {
    if (!m[2]) {
      expect(m[0].length, `bare "${m[0]}" at ${m.index} in: …${html.slice(Math.max(0, m.index - 40), m.index + 40)}…`).toBeGreaterThan(1);
      continue;
    }
    const tag = m[2].toLowerCase();
    expect(allowed.has(tag), `tag <${tag}> is not Telegram HTML`).toBe(true);
    if (m[1]) expect(open.pop(), `</${tag}> closes something else`).toBe(tag);
    else open.push(tag);
  }
  expect(open, "unclosed tags").toEqual([]);
}

describe("telegram (daemon e2e)", () => {
  it("owner DM, slowly streamed: one bot message, edited at least twice, ending as the rendered answer", async () => {
    const d = await start();
    const answer = "Here is the plan:\n\n- **Monday**: groceries\n- **Tuesday**: call `Bob` about the trip\n\nThat's all for now, enjoy your evening!";
    fake.enqueue(text(answer, { chunkSize: 6, chunkDelayMs: 110 }));
    await owner().send("What's my plan this week?");
    await waitFor("the final answer", () => emu.botMessages(OWNER)[0]?.parseMode === "HTML", 20_000);

    const msgs = emu.botMessages(OWNER);
    expect(msgs).toHaveLength(1);
    expect(msgs[0]!.edits).toBeGreaterThanOrEqual(2);
    expect(msgs[0]!.text).toBe(markdownToTelegramHtml(answer));
    expect(fake.requests).toHaveLength(1);
    await sleep(300);
    expect(emu.botMessages(OWNER)).toHaveLength(1);
    expect(d.log()).not.toContain(emu.token);

    // SIGTERM: polling stops and the process exits by itself (no handle left open).
    const stoppedAt = Date.now();
    expect(await d.stop()).toBe(0);
    expect(Date.now() - stoppedAt).toBeLessThan(5000);
    const polls = emu.callsTo("getUpdates").length;
    await sleep(200);
    expect(emu.callsTo("getUpdates")).toHaveLength(polls);
  });

  it("groups: unaddressed → no model call; @mention → reply in the group; reply to the bot → answered; other group → ignored", async () => {
    const d = await start();
    const bob = emu.user({ userId: 200, firstName: "Bob", chat: FAMILY });
    await bob.send("I think we should get pizza tonight");
    await waitFor("the unaddressed message to be fetched", () => emu.server.storage.userMessages.every((u) => u.isRead));
    await sleep(300);
    expect(fake.requests).toHaveLength(0);

    fake.enqueue(text("Pizza sounds great!"));
    const asked = await bob.send("@TestNameBot do you agree?");
    const [first] = await emu.waitForBotMessages(FAMILY.id, 1);
    await waitFor("final text", () => emu.botMessages(FAMILY.id)[0]!.text === "Pizza sounds great!");
    expect(first!.replyToMessageId).toBe(asked);
    expect(fake.requests).toHaveLength(1);
    // The unaddressed message came along as context.
    expect(fake.requests[0]!.rawBody).toContain("I think we should get pizza tonight");

    fake.enqueue(text("Margherita, of course."));
    await bob.replyToBot(first!.messageId, "which one?");
    await emu.waitForBotMessages(FAMILY.id, 2);
    await waitFor("second final", () => emu.botMessages(FAMILY.id)[1]!.text === "Margherita, of course.");
    expect(fake.requests).toHaveLength(2);

    const eve = emu.user({ userId: 300, firstName: "Eve", chat: STRANGERS });
    await eve.send("@TestNameBot hello?");
    await waitForLog(d, "inbound.refused");
    await sleep(200);
    expect(emu.botMessages(STRANGERS.id)).toHaveLength(0);
    expect(fake.requests).toHaveLength(2);
  });

  it("a stranger's DM gets a pairing code and no model call; once approved, their own session answers", async () => {
    const d = await start();
    const stranger = emu.user({ userId: 555, firstName: "Sam" });
    await stranger.send("hi, who are you?");
    const [codeMsg] = await emu.waitForBotMessages(555, 1);
    const code = /\b([A-HJ-KM-NP-Z2-9]{8})\b/.exec(codeMsg!.text)?.[1];
    expect(code, codeMsg!.text).toBeDefined();
    expect(fake.requests).toHaveLength(0);

    const approved = await d.hearth(["pairing", "approve", code!]);
    expect(approved.code, approved.stderr).toBe(0);
    // They are told that they may talk now.
    await emu.waitForBotMessages(555, 2);
    expect(emu.botMessages(555)[1]!.text).toBe("Good news: my owner approved you. You can talk to me now — just write.");

    fake.enqueue(text("Nice to meet you, Sam."));
    await stranger.send("hello again");
    await emu.waitForBotMessages(555, 3);
    await waitFor("the answer", () => emu.botMessages(555)[2]!.text === "Nice to meet you, Sam.");
    expect(fake.requests).toHaveLength(1);
    const status = await statusJson(d);
    expect(status.sessions).toContainEqual(expect.objectContaining({ key: "dm:telegram:555", scope: "shared" }));
    expect(status.channels).toContainEqual(expect.objectContaining({ id: "telegram", state: "running" }));

    // The owner can approve from their own Telegram DM too (a bot command, as Telegram sends it).
    const other = emu.user({ userId: 556, firstName: "Tess" });
    await other.send("hello?");
    const [otherCode] = await emu.waitForBotMessages(556, 1);
    const code2 = /\b([A-HJ-KM-NP-Z2-9]{8})\b/.exec(otherCode!.text)![1]!;
    await owner().send(`/approve@TestNameBot ${code2}`);
    const [approval] = await emu.waitForBotMessages(OWNER, 1);
    expect(approval!.text).toContain("Approved Tess");
    await waitFor("Tess is told", () => emu.botMessages(556)[1]?.text === "Good news: my owner approved you. You can talk to me now — just write.");
    fake.enqueue(text("Hi Tess."));
    await other.send("may I talk now?");
    await waitFor("Tess's answer", () => emu.botMessages(556)[2]?.text === "Hi Tess.");
    expect(fake.requests).toHaveLength(2);
  });

  it("privacy: secrets from the owner's DM and from USER.md never reach a model request made for a group", async () => {
    const userSecret = "USERMD-SECRET-7f3a9c";
    const dmSecret = "DM-SECRET-b81e44";
    const d = await start({ userMd: `# Owner\n\n- Name: Ann\n- Locker code: ${userSecret}\n` });

    fake.enqueue(text("Noted, I'll keep that safe."));
    await owner().send(`My bike lock code is ${dmSecret}. Remember it.`);
    await waitFor("the owner's answer", () => emu.botMessages(OWNER)[0]?.text === "Noted, I'll keep that safe.");
    const ownerRequests = fake.requests.length;

    // The group asks for exactly what it must not get; the model even tries the file and memory tools.
    const bob = emu.user({ userId: 200, firstName: "Bob", chat: FAMILY });
    await bob.send("does anyone know Ann's codes?");
    fake.enqueue(toolCall("read", { path: "USER.md" }), toolCall("memory_search", { query: "lock code" }), text("I can't share that."));
    await bob.send("@TestNameBot what is Ann's bike lock code and locker code?");
    await waitFor("the group's answer", () => emu.botMessages(FAMILY.id)[0]?.text === "I can't share that.", 20_000);
    const groupRequests = fake.requests.slice(ownerRequests);
    expect(groupRequests).toHaveLength(3);
    for (const req of groupRequests) {
      expect(req.rawBody).toContain("what is Ann's bike lock code"); // it is a request for the group…
      expect(req.rawBody).not.toContain(dmSecret); // …and it holds neither secret
      expect(req.rawBody).not.toContain(userSecret);
    }

    // The DM secret is live in the owner's context, so its absence above means something.
    fake.enqueue(text("It's the one you told me."));
    await owner().send("What was my bike lock code?");
    await waitFor("the owner's second answer", () => emu.botMessages(OWNER).length === 2 && emu.botMessages(OWNER)[1]!.parseMode === "HTML");
    expect(fake.requests.at(-1)!.rawBody).toContain(dmSecret);
    expect(d.log()).not.toContain(emu.token);
  });

  it("a 6,000-character answer with a code block: two messages, valid HTML, split outside the block", async () => {
    await start();
    const para = (i: number) => `Paragraph ${i} & more: ${"the quick brown fox jumps over the lazy dog ".repeat(5).trim()}.`;
    const code = ["```python", ...Array.from({ length: 30 }, (_, i) => `if x < ${i} and y > ${i}: print("a & b")  # line ${i}`), "```"].join("\n");
    const answer = [...Array.from({ length: 13 }, (_, i) => para(i)), code, ...Array.from({ length: 6 }, (_, i) => para(100 + i))].join("\n\n");
    expect(answer.length).toBeGreaterThan(5800);
    expect(answer.length).toBeLessThan(6500);
    expect(answer.indexOf("```python")).toBeLessThan(4000);
    expect(answer.lastIndexOf("```")).toBeGreaterThan(4000); // the block straddles the first message's limit

    fake.enqueue(text(answer, { chunkSize: 400, chunkDelayMs: 50 }));
    await owner().send("Write me something long");
    await waitFor("two final messages", () => {
      const m = emu.botMessages(OWNER);
      return m.length === 2 && m.every((x) => x.parseMode === "HTML");
    }, 20_000);
    const [one, two] = emu.botMessages(OWNER);
    for (const m of [one!, two!]) {
      expectValidTelegramHtml(m.text);
      expect(m.text.length).toBeLessThanOrEqual(4096 + 1000); // markup and entities do not count towards 4,096
    }
    expect(one!.text).not.toContain("<pre>");
    expect(one!.text).not.toContain("line 0");
    const block = /<pre><code class="language-python">([\s\S]*?)<\/code><\/pre>/.exec(two!.text);
    expect(block?.[1]?.split("\n")).toHaveLength(30);
    expect(two!.text).toContain("if x &lt; 29 and y &gt; 29: print(\"a &amp; b\")  # line 29");
    expect(one!.text).toContain("Paragraph 0 &amp; more");
    expect(two!.text).toContain("Paragraph 105 &amp; more");
    await sleep(300);
    expect(emu.botMessages(OWNER)).toHaveLength(2);
  });

  it("<script> and & in an answer render literally", async () => {
    await start();
    fake.enqueue(text("Use <script>alert('hi')</script> & <b>not bold</b> here"));
    await owner().send("show me");
    await waitFor("final", () => emu.botMessages(OWNER)[0]?.parseMode === "HTML");
    const [m] = emu.botMessages(OWNER);
    expect(m!.text).toBe("Use &lt;script&gt;alert('hi')&lt;/script&gt; &amp; &lt;b&gt;not bold&lt;/b&gt; here");
    expectValidTelegramHtml(m!.text);
  });

  it("a Bot API 429 with retry_after is retried and the reply still arrives once", async () => {
    await start();
    // The first request that carries final text (HTML) is rate-limited, whether a send or an edit.
    let limited = false;
    const firstFinal = (b: Record<string, any>) => b.parse_mode === "HTML" && !limited && (limited = true);
    emu.inject({ method: "sendMessage", when: firstFinal, reply: telegramErrors.tooManyRequests(1) });
    emu.inject({ method: "editMessageText", when: firstFinal, reply: telegramErrors.tooManyRequests(1) });
    fake.enqueue(text("Answer after **waiting**", { chunkSize: 5, chunkDelayMs: 30 }));
    await owner().send("hello");
    await waitFor("final", () => emu.botMessages(OWNER).some((m) => m.text === "Answer after <b>waiting</b>"), 15_000);
    await sleep(500);
    const msgs = emu.botMessages(OWNER);
    expect(msgs).toHaveLength(1);
    expect(msgs[0]!.text).toBe("Answer after <b>waiting</b>");
    const finals = emu.calls.filter((c) => c.body.parse_mode === "HTML");
    expect(finals.map((c) => [c.method, c.status])).toEqual([
      [finals[0]!.method, 429],
      [finals[0]!.method, 200],
    ]);
    expect(finals[1]!.body.text).toBe(finals[0]!.body.text);
    expect(finals[1]!.at - finals[0]!.at).toBeGreaterThanOrEqual(950);
  });

  it("a bad token (401): the daemon stays up, status shows telegram failed with the reason, the CLI still answers", async () => {
    emu.inject({ method: "getMe", reply: telegramErrors.unauthorized(), times: 1000 });
    const d = await start({ waitForPolling: false });
    await waitForLog(d, "telegram.token_rejected");
    const status = await statusJson(d);
    expect(status.channels).toContainEqual({
      id: "telegram",
      state: "failed",
      reason: "Telegram rejected the bot token (401 Unauthorized). Check TELEGRAM_BOT_TOKEN or channels.telegram.token.",
    });
    fake.enqueue(text("Still here."));
    const chat = await d.hearth(["chat", "-m", "are you alive?"]);
    expect(chat.code).toBe(0);
    expect(chat.stdout.trim()).toBe("Still here.");
    expect(emu.callsTo("getUpdates")).toHaveLength(0);
    expect(d.log()).not.toContain(emu.token);
  });
});
