// The dashboard against the real daemon, one daemon for the file, in a real browser (Debian's
// chromium driven by playwright-core): a hostile page's made-up login links lock nothing; log in
// through the printed link, chat, edit memory and read its history, add a job, read the usage
// chart, approve a pairing, see names, answer an approval, revoke a grant, cancel a task, see a
// task's result in the chat. Over plain HTTP: dashboard-security.test.ts. The login rate limit,
// another user's replayed cookie and a server bound to every address:
// test/dashboard/server.test.ts, each with a server of its own.
import { appendFileSync, existsSync, mkdirSync, readdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { createServer, type Server } from "node:http";
import type { Browser, Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { connectDaemon } from "../../src/cli/client.ts";
import { cleanupDaemon, makeHome, startDaemon, waitFor, type Daemon } from "../support/daemon.ts";
import { requestText, startFakeModel, text, toolCall, type FakeModel } from "../support/fake-model.ts";
import { e2eLimit } from "../support/limits.ts";
import { firstUserText } from "../support/task-script.ts";
import { startTelegramEmulator, type TelegramEmulator } from "../support/telegram-emulator.ts";

/**
 * Waits for the toast to show `expected`, then checks it: it may come after the page's content
 * (after a reload) and hides itself a few seconds later, so it is read as it shows.
 */
async function expectToast(page: Page, expected: string | RegExp): Promise<void> {
  const toast = page.locator(".toast");
  let shown = "";
  const matches = () => (typeof expected === "string" ? shown === expected : expected.test(shown));
  await waitFor("the toast", async () => {
    try {
      shown = (await toast.isVisible()) ? ((await toast.textContent()) ?? "") : "";
    } catch {
      return false; // the page is being reloaded
    }
    return matches();
  }).catch(() => {});
  if (typeof expected === "string") expect(shown).toBe(expected);
  else expect(shown).toMatch(expected);
}

const CHROMIUM = ["/usr/bin/chromium", "/usr/bin/chromium-browser"].find((p) => existsSync(p));
const NO_BROWSER = CHROMIUM ? "" : " (skipped: chromium is not installed; .ci/run installs it with apt)";
/** Set to a folder to keep a screenshot of every page, desktop and phone, light and dark (not part of the checks). */
const SHOTS = process.env.HEARTH_DASHBOARD_SHOTS;
const OWNER = 100;
const STRANGER = 555;
const FAMILY = { id: -2001, type: "supergroup" as const, title: "Family" };

let fake: FakeModel;
let emu: TelegramEmulator;
let daemon: Daemon;
let base: string;

beforeAll(async () => {
  fake = await startFakeModel();
  emu = await startTelegramEmulator();
  const home = makeHome({
    dashboard: { enabled: true, port: 0 },
    channels: { telegram: { apiRoot: emu.apiRoot, ownerIds: [String(OWNER)], dmPolicy: "pairing", groups: { policy: "allowlist", allow: [String(FAMILY.id)] } } },
    tools: { exec: { sandbox: "off" } },
  });
  // The memory history records a batch every 200 ms instead of every minute.
  daemon = await startDaemon(home, { TELEGRAM_BOT_TOKEN: emu.token, ANTHROPIC_API_KEY: "test-key", ANTHROPIC_BASE_URL: fake.url, HEARTH_HISTORY_BATCH_MS: "200" });
  const client = (await connectDaemon(join(home, "gateway.sock")))!;
  base = (await client.status()).dashboard!;
  await client.close();
});
afterAll(async () => {
  await cleanupDaemon(daemon);
  await emu.stop();
  await fake.close();
});

const workspaceFile = (rel: string) => join(daemon.home, "workspace", rel);
const limit = () => e2eLimit();

describe.skipIf(!CHROMIUM)(`dashboard in a real browser${NO_BROWSER}`, () => {
  let browser: Browser;
  let page: Page;

  beforeAll(async () => {
    if (SHOTS) mkdirSync(SHOTS, { recursive: true });
    const { chromium } = await import("playwright-core");
    browser = await chromium.launch({ executablePath: CHROMIUM!, headless: true, args: ["--no-sandbox"] });
    page = await browser.newPage({ viewport: { width: 1280, height: 860 } });
    page.setDefaultTimeout(limit());
  });
  afterAll(async () => {
    if (SHOTS) await screenshots(browser, page);
    await browser?.close();
  });

  it("a page of another site firing made-up login links as images locks nothing", async () => {
    // Another site (localhost is not 127.0.0.1's site) whose page holds twelve such images.
    const images = Array.from({ length: 12 }, (_, i) => `<img src="${base}login?token=guess${i}" alt="">`).join("");
    const hostile: Server = createServer((_, res) => res.end(`<!doctype html><title>cats</title>${images}`));
    await new Promise<void>((r) => hostile.listen(0, "127.0.0.1", r));
    const requests: string[] = [];
    const seen = (r: { url(): string }) => void (r.url().includes("/login?token=guess") && requests.push(r.url()));
    try {
      page.on("requestfinished", seen);
      page.on("requestfailed", seen);
      await page.goto(`http://localhost:${(hostile.address() as { port: number }).port}/`);
      await waitFor("every image's request answered", () => requests.length === 12);
      expect(daemon.log()).not.toContain("dashboard.login_refused");
    } finally {
      page.off("requestfinished", seen);
      page.off("requestfailed", seen);
      hostile.close();
    }
  });

  it("logs in through the URL `hearth dashboard --url` prints; the overview lists the channels", async () => {
    const printed = await daemon.hearth(["dashboard", "--url"]);
    expect(printed.stdout).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/login\?token=[A-Za-z0-9_-]{43}\n$/);
    const failed: string[] = [];
    const note = (r: { status(): number; url(): string }) => void (r.status() >= 400 && failed.push(`${r.status()} ${r.url()}`));
    page.on("response", note);
    await page.goto(printed.stdout.trim());
    await page.waitForURL(base);
    expect(await page.textContent("h1")).toBe("Overview");
    // The icon is the page's own: no request for /favicon.ico, no 404 at login.
    await page.waitForLoadState("networkidle");
    page.off("response", note);
    expect(failed).toEqual([]);
    expect(await page.getAttribute('link[rel="icon"]', "href")).toBe("/static/favicon.svg");
    // The model's name is kept whole on one line, at a phone's width too.
    await page.setViewportSize({ width: 390, height: 844 });
    const model = page.locator(".card .model");
    expect(await model.textContent()).toBe("claude-sonnet-5-5");
    expect(await model.evaluate((el) => el.ownerDocument.defaultView!.getComputedStyle(el).whiteSpace)).toBe("nowrap");
    await page.setViewportSize({ width: 1280, height: 860 });
    const channels = await page.locator('section[aria-labelledby="ch"] tbody tr').allInnerTexts();
    expect(channels.map((r) => r.split("\t").slice(0, 2).join(" "))).toEqual(["cli running", "telegram running"]);
  });

  it("Chat: a typed message is answered, streamed, exactly once, in the main session", async () => {
    fake.enqueue(text("Hello from the hearth, word by word.", { chunkSize: 6, chunkDelayMs: 120 }));
    await page.goto(`${base}chat`);
    // Every text the answer's bubble shows, in order: a streamed answer shows parts first.
    await page.evaluate(`(() => {
      const seen = (window.seen = []);
      new MutationObserver(() => {
        const last = [...document.querySelectorAll(".msg.assistant .text")].at(-1);
        if (last && seen.at(-1) !== last.textContent) seen.push(last.textContent);
      }).observe(document.getElementById("chat-log"), { subtree: true, childList: true, characterData: true });
    })()`);
    await page.fill("#chat-text", "Say hello");
    await page.keyboard.press("Control+Enter");
    await page.waitForSelector('.msg.assistant[data-done="final"]');
    const seen = (await page.evaluate("window.seen")) as string[];
    const partial = seen.filter((t) => t !== "…" && t !== "Hello from the hearth, word by word.");
    expect(partial.length).toBeGreaterThan(1);
    for (const p of partial) expect("Hello from the hearth, word by word.".startsWith(p)).toBe(true);
    expect(await page.locator(".msg.assistant .text").allTextContents()).toEqual(["Hello from the hearth, word by word."]);
    expect(await page.locator(".msg.user .text").allTextContents()).toEqual(["Say hello"]);
    // Exactly once in the main session's transcript too, and the same after a reload.
    const transcript = readFileSync(join(daemon.home, "sessions", "main.jsonl"), "utf8");
    expect(transcript.split("Hello from the hearth, word by word.").length - 1).toBe(1);
    expect(transcript.split('\\nSay hello"').length - 1).toBe(1);
    await page.reload();
    expect(await page.locator(".msg.assistant .text").allTextContents()).toEqual(["Hello from the hearth, word by word."]);
    expect(await page.locator(".msg.user .text").allTextContents()).toEqual(["Say hello"]);
  });

  it("Chat: an attached file reaches the model, and the upload is gone once answered", async () => {
    fake.enqueue(text("It lists three fruits."));
    await page.fill("#chat-text", "What is in this file?");
    await page.setInputFiles("#chat-files", { name: "fruits.txt", mimeType: "text/plain", buffer: Buffer.from("apple\nbanana\ncherry\n") });
    await page.click("#chat-send");
    await page.locator('.msg.assistant[data-done="final"]').waitFor();
    expect(await page.locator(".msg.assistant .text").allTextContents()).toEqual(["Hello from the hearth, word by word.", "It lists three fruits."]);
    expect(JSON.stringify(fake.requests.at(-1)!.body.messages)).toContain("apple\\nbanana\\ncherry");
    expect(readdirSync(join(daemon.home, "dashboard-uploads"))).toEqual([]);
  });

  it("the overview lists the main session, in light or dark as the system prefers", async () => {
    await page.goto(base);
    const sessions = await page.locator('section[aria-labelledby="se"] tbody tr').allInnerTexts();
    expect(sessions.map((r) => r.split("\t")[0])).toEqual(["main"]);
    const background = () => page.evaluate("getComputedStyle(document.body).backgroundColor");
    await page.emulateMedia({ colorScheme: "light" });
    expect(await background()).toBe("rgb(250, 248, 245)");
    await page.emulateMedia({ colorScheme: "dark" });
    expect(await background()).toBe("rgb(23, 21, 19)");
    await page.emulateMedia({ colorScheme: "light" });
  });

  it("Memory: editing USER.md writes exactly those bytes, and the next answer's request holds them", async () => {
    const content = "# About the owner\n\nName: Ada Lovelace.\nLikes: strong tea, 🫖 and tidy notes.\n";
    await page.goto(`${base}memory?file=USER.md`);
    expect(await page.locator(".tree li", { hasText: "USER.md" }).innerText()).toContain("main only");
    await page.fill("#note-text", content);
    await page.click('form[data-editor] button[type="submit"]');
    await page.waitForSelector('[data-saved]:text-matches("^Saved at ")');
    expect(readFileSync(workspaceFile("USER.md"), "utf8")).toBe(content);

    // The file's history shows the owner's edit (recorded within the batch), with its change.
    await waitFor("the edit in the history", async () => {
      await page.goto(`${base}memory?file=USER.md`);
      return (await page.locator(".history .versions li").count()) > 1;
    });
    const newest = page.locator(".history .versions li").first();
    expect(await newest.locator("summary span").first().textContent()).toBe("owner: USER.md");
    await newest.locator("summary").click();
    expect(await newest.locator(".diff ins").allTextContents()).toEqual(expect.arrayContaining(["+Name: Ada Lovelace.", "+Likes: strong tea, 🫖 and tidy notes."]));
    const log = await daemon.hearth(["memory", "log", "USER.md"]);
    expect(log.stdout.split("\n")[0]).toContain(`${(await newest.locator("summary code").textContent())!}  `);

    fake.enqueue(text("Noted, Ada."));
    await page.goto(`${base}chat`);
    await page.fill("#chat-text", "Who am I?");
    await page.click("#chat-send");
    await page.waitForSelector('.msg.assistant[data-done="final"]');
    const last = fake.requests.at(-1)!;
    expect(JSON.stringify(last.body.system)).toContain(JSON.stringify(content).slice(1, -1));
    expect(requestText(last)).toContain("Who am I?");
  });

  it("Memory: a save is refused when the file changed on disk since it was opened, and both versions are shown", async () => {
    await page.goto(`${base}memory?file=MEMORY.md`);
    const onDisk = "# Memory\n\nWritten by another program meanwhile.\n";
    writeFileSync(workspaceFile("MEMORY.md"), onDisk);
    await page.fill("#note-text", "# Memory\n\nMine.\n");
    await page.click('form[data-editor] button[type="submit"]');
    await page.waitForSelector(".conflict:not([hidden])");
    expect(await page.textContent("[data-theirs]")).toBe(onDisk);
    expect(await page.textContent("[data-mine]")).toBe("# Memory\n\nMine.\n");
    // What differs is marked, line by line.
    expect(await page.locator("[data-theirs] .differs").allTextContents()).toEqual(["Written by another program meanwhile."]);
    expect(await page.locator("[data-mine] .differs").allTextContents()).toEqual(["Mine."]);
    // The notice is beside Save, and nothing covers Save.
    expect(await page.textContent("[data-saved]")).toBe("The file changed on disk since you opened it; nothing was saved. Both versions are shown below.");
    expect(await page.isVisible(".toast")).toBe(false);
    const save = page.locator('form[data-editor] button[type="submit"]');
    await save.scrollIntoViewIfNeeded();
    expect(await save.evaluate((b) => { const r = b.getBoundingClientRect(); return b.ownerDocument.elementFromPoint(r.x + r.width / 2, r.y + r.height / 2) === b; })).toBe(true);
    expect(readFileSync(workspaceFile("MEMORY.md"), "utf8")).toBe(onDisk);
  });

  it("Schedule: a job added on the page appears in `hearth cron list`", async () => {
    await page.goto(`${base}schedule`);
    // The CLI's default session; the example shows one format, the chosen kind's.
    expect(await page.inputValue('select[name="session"]')).toBe("main");
    expect(await page.getAttribute('input[name="when"]', "placeholder")).toBe("0 9 * * *");
    await page.fill('input[name="name"]', "Water the plants");
    await page.selectOption('select[name="kind"]', "every");
    expect(await page.getAttribute('input[name="when"]', "placeholder")).toBe("30m");
    await page.fill('input[name="when"]', "6h");
    await page.fill('textarea[name="message"]', "Remind me to water the plants.");
    await page.click('#job-form button[type="submit"]');
    await page.waitForSelector('section[aria-labelledby="jobs"] td:has-text("Water the plants")');
    const list = await daemon.hearth(["cron", "list"]);
    expect(list.code).toBe(0);
    expect(list.stdout).toContain("Water the plants");
    expect(list.stdout).toContain("every 6h");
  });

  it("Schedule: a job is edited and paused on the page, through the cron service", async () => {
    const row = page.locator('section[aria-labelledby="jobs"] tbody tr', { hasText: "Water the plants" });
    await row.locator("button", { hasText: "Edit" }).click();
    expect(await page.textContent("#add")).toBe('Edit "Water the plants"');
    await page.fill('input[name="when"]', "8h");
    await page.click('#job-form button[type="submit"]');
    await page.waitForSelector('section[aria-labelledby="jobs"] td:has-text("every 8h")');
    await page.locator('section[aria-labelledby="jobs"] tbody tr', { hasText: "Water the plants" }).locator("button", { hasText: "Pause" }).click();
    await page.waitForSelector('section[aria-labelledby="jobs"] tbody tr:has-text("Water the plants") .badge:has-text("paused")');
    const [job] = (JSON.parse(readFileSync(join(daemon.home, "cron", "jobs.json"), "utf8")) as { jobs: Array<{ name: string; schedule: unknown; enabled: boolean; delivery: unknown }> }).jobs;
    expect(job).toMatchObject({ name: "Water the plants", schedule: { kind: "every", every: "8h" }, enabled: false, delivery: { to: "owner" } });
    // One word for it: the CLI says paused too.
    expect((await daemon.hearth(["cron", "list"])).stdout).toContain("  Water the plants  [paused]\n");
  });

  it("Usage: the chart's day totals are usage.jsonl's", async () => {
    // Two earlier days, written as the ledger writes them.
    const file = join(daemon.home, "usage.jsonl");
    const records = readFileSync(file, "utf8").trim().split("\n").map((l) => JSON.parse(l) as { day: string; at: string; costUsd: number });
    const today = records[0]!.day;
    const dayBefore = (n: number) => new Date(Date.parse(`${today}T12:00:00Z`) - n * 86_400_000).toISOString().slice(0, 10);
    const old = [
      { at: `${dayBefore(3)}T12:00:00.000Z`, day: dayBefore(3), session: "main", scope: "main", purpose: "chat", model: "claude-sonnet-5-5", costUsd: 0.42, inputTokens: 1000, outputTokens: 100, cacheReadTokens: 0, cacheWrite5mTokens: 0, cacheWrite1hTokens: 0 },
      { at: `${dayBefore(3)}T13:00:00.000Z`, day: dayBefore(3), session: "cron:abc", scope: "main", purpose: "cron", model: "claude-sonnet-5-5", costUsd: 0.08, inputTokens: 100, outputTokens: 10, cacheReadTokens: 0, cacheWrite5mTokens: 0, cacheWrite1hTokens: 0 },
      { at: `${dayBefore(7)}T08:00:00.000Z`, day: dayBefore(7), session: "main", scope: "main", purpose: "heartbeat", model: "claude-haiku-4-5", costUsd: 0.015, inputTokens: 100, outputTokens: 10, cacheReadTokens: 0, cacheWrite5mTokens: 0, cacheWrite1hTokens: 0 },
    ];
    appendFileSync(file, old.map((r) => `${JSON.stringify(r)}\n`).join(""));
    const expected = new Map<string, number>();
    for (const r of [...records, ...old]) expected.set(r.day, (expected.get(r.day) ?? 0) + r.costUsd);

    await page.goto(`${base}usage`);
    const bars = await page.locator("svg .bar").evaluateAll((gs) => gs.map((g) => [g.getAttribute("data-day"), Number(g.getAttribute("data-total"))] as const));
    expect(bars).toHaveLength(30);
    expect(bars.at(-1)![0]).toBe(today);
    for (const [day, total] of bars) expect(total, day!).toBeCloseTo(expected.get(day!) ?? 0, 6);
    expect(bars.filter(([, t]) => t > 0).map(([d]) => d)).toEqual([dayBefore(7), dayBefore(3), today]);
    // The bars are drawn: the costliest day is the tallest.
    const heights = await page.locator(`svg .bar[data-day="${dayBefore(3)}"] rect`).evaluateAll((rs) => rs.map((r) => r.getBoundingClientRect().height));
    expect(heights).toHaveLength(2);
    expect(heights.every((h) => h > 10)).toBe(true);
  });

  it("Usage: on a phone the chart opens at the newest day with its dollar scale in view; on a desktop it shows whole", async () => {
    // How many pixels of each dollar label and of the newest day's bar the owner sees, of how
    // many it has: each box cut by the window and by every box around it that clips (a scroller).
    const inView = `(() => {
      const seen = (el) => {
        const box = el.getBoundingClientRect();
        let left = Math.max(box.left, 0), right = Math.min(box.right, document.documentElement.clientWidth);
        for (let a = el.parentElement; a; a = a.parentElement) {
          if (getComputedStyle(a).overflowX === "visible") continue;
          const clip = a.getBoundingClientRect();
          left = Math.max(left, clip.left);
          right = Math.min(right, clip.right);
        }
        return { text: el.textContent, width: Math.round(box.width), seen: Math.round(Math.max(0, right - left)) };
      };
      return {
        labels: [...document.querySelectorAll(".chart text")].filter((t) => t.textContent.startsWith("$")).map(seen),
        newest: seen([...document.querySelectorAll(".chart .bar")].at(-1)),
        scrolls: [document.documentElement, ...document.querySelectorAll(".chart, .chart *")].filter((e) => e instanceof HTMLElement && e.scrollWidth > e.clientWidth).map((e) => e.localName + "." + e.getAttribute("class")),
      };
    })()`;
    type Seen = { labels: Array<{ text: string; width: number; seen: number }>; newest: { width: number; seen: number }; scrolls: string[] };
    const phone = await browser.newPage({ viewport: { width: 390, height: 844 } });
    try {
      await phone.context().addCookies(await page.context().cookies());
      await phone.goto(`${base}usage`);
      // The page scrolls the chart to its newest days once loaded.
      await waitFor("the newest day's bar in view", async () => {
        const { newest } = (await phone.evaluate(inView)) as Seen;
        return newest.width > 0 && newest.seen === newest.width;
      });
      const onPhone = (await phone.evaluate(inView)) as Seen;
      expect(onPhone.labels).toHaveLength(3);
      for (const l of onPhone.labels) expect(l.seen, `${l.text} seen`).toBe(l.width);
      expect(onPhone.scrolls).toEqual(["div.plot"]);
    } finally {
      await phone.close();
    }
    await page.goto(`${base}usage`);
    const onDesktop = (await page.evaluate(inView)) as Seen;
    expect(onDesktop.scrolls).toEqual([]);
    for (const l of onDesktop.labels) expect(l.seen, `${l.text} seen`).toBe(l.width);
    expect(onDesktop.newest.seen).toBe(onDesktop.newest.width);
  });

  it("People: a pairing approved on the page lets that stranger talk", async () => {
    const stranger = emu.user({ userId: STRANGER, firstName: "Sam" });
    await stranger.send("hello?");
    const [codeMessage] = await emu.waitForBotMessages(STRANGER, 1);
    const code = /Your pairing code: ([A-Z0-9]{8})/.exec(codeMessage!.text)![1]!;
    await page.goto(`${base}people`);
    const row = page.locator('section[aria-labelledby="pe"] tbody tr', { hasText: code });
    expect(await row.innerText()).toContain("Sam");
    await row.locator("button", { hasText: "Approve" }).click();
    await page.waitForSelector('section[aria-labelledby="pa"] td:has-text("Sam")');
    await expectToast(page, "Sam may talk to Hearth now.");

    fake.enqueue(text("Hi Sam, nice to meet you."));
    await stranger.send("hi, I'm Sam");
    await waitFor("the answer to Sam", () => emu.botMessages(STRANGER).some((m) => m.text === "Hi Sam, nice to meet you."));
  });

  it("names: the overview and People show Sam and Family where they know them, with the id beside the name", async () => {
    fake.enqueue(text("Hello, Family."));
    await emu.user({ userId: 3003, firstName: "Tom", chat: FAMILY }).send("@TestNameBot hello");
    await waitFor("the answer in Family", () => emu.botMessages(FAMILY.id).some((m) => m.text === "Hello, Family."));
    await page.goto(base);
    const sessions = (await page.locator('section[aria-labelledby="se"] tbody tr td:first-child').allInnerTexts()).sort();
    expect(sessions).toEqual(expect.arrayContaining([`Family group:telegram:${FAMILY.id}`, `Sam dm:telegram:${STRANGER}`]));
    await page.goto(`${base}people`);
    const rules = await page.locator('section[aria-labelledby="ru"] tbody tr').allInnerTexts();
    expect(rules.map((r) => r.split("\t")[3])).toEqual([`allowlist Family ${FAMILY.id}`]);
  });

  it("Approvals: a question from the chat waits on the overview and is allowed once on the page, as the chat's button would; the decisions are listed", async () => {
    mkdirSync(workspaceFile("build/out"), { recursive: true });
    fake.enqueue(toolCall("exec", { command: "rm -r build" }), text("Removed the build folder."));
    await page.goto(`${base}chat`);
    await page.fill("#chat-text", "Clean up the build folder");
    await page.click("#chat-send");
    // Asked in the owner's Telegram chat (the web chat shows no buttons): a second tab answers.
    await waitFor("the question in Telegram", () => emu.botMessages(OWNER).some((m) => m.text.includes("exec: rm -r build")));
    // The web chat says what its answer waits for.
    expect(await page.locator(".msg.assistant .waiting").last().textContent({ timeout: limit() })).toBe("Waiting for your approval: exec: rm -r build — answer it in your chat or on Approvals.");
    const tab = await browser.newPage();
    await tab.context().addCookies(await page.context().cookies());
    try {
      await tab.goto(base);
      const waiting = await tab.locator('section[aria-labelledby="ap"] tbody tr').allInnerTexts();
      expect(waiting.map((r) => r.split("\t")[0])).toEqual(["exec: rm -r build"]);
      // The main session waits for the owner: not "answering N s".
      const main = tab.locator('section[aria-labelledby="se"] tbody tr', { hasText: "main" }).first();
      expect((await main.innerText()).split("\t")[2]).toBe("waiting for your approval exec: rm -r build");
      await tab.click('a[href="/approvals"]:has-text("Answer on the Approvals page")');
      const row = tab.locator('section[aria-labelledby="wa"] tbody tr', { hasText: "exec: rm -r build" });
      expect(await row.innerText()).toContain("it deletes recursively");
      if (SHOTS) {
        await tab.screenshot({ path: join(SHOTS, "approvals-waiting-desktop-light.png"), fullPage: true });
        await tab.setViewportSize({ width: 390, height: 844 });
        await tab.screenshot({ path: join(SHOTS, "approvals-waiting-phone-light.png"), fullPage: true });
        await tab.setViewportSize({ width: 1280, height: 860 });
      }
      await row.locator("button", { hasText: "Allow once" }).click();
      await tab.waitForSelector('section[aria-labelledby="wa"] .empty');
      await expectToast(tab, "Allowed.");
      await page.waitForSelector('.msg.assistant[data-done="final"]:has-text("Removed the build folder.")');
      expect(existsSync(workspaceFile("build"))).toBe(false);
      // The chat's question says who answered, as after a press there.
      await waitFor("the question settled in Telegram", () => emu.botMessages(OWNER).some((m) => m.text.includes("exec: rm -r build") && m.text.includes("Allowed once by you (dashboard).")));
      await tab.reload();
      const decisions = (await tab.locator('section[aria-labelledby="au"] tbody tr').allInnerTexts()).map((r) => r.split("\t"));
      expect(decisions.slice(0, 2).map((r) => r.slice(1))).toEqual([
        ["allowed once", "exec: rm -r build", "you (dashboard)"],
        ["asked", "exec: rm -r build", "it deletes recursively (rm -r)"],
      ]);
      const log = await daemon.hearth(["grants", "--log"]);
      expect(log.stdout.trim().split("\n").at(-1)).toBe(`${decisions[0]![0]}  allowed once  exec: rm -r build  (by you (dashboard))`);
    } finally {
      await tab.close();
    }
  });

  it("Approvals: grants are listed as `hearth grants` lists them, and one is revoked on the page", async () => {
    const folder = workspaceFile("").replace(/\/$/, "");
    const grants = [
      { tool: "exec", kind: "command", pattern: "npm test", folder, chat: `telegram:${OWNER}`, host: null, expiresAt: null, by: "Ann", at: Date.now() - 60_000 },
      { tool: "exec", kind: "command", pattern: "git push", folder, chat: `telegram:${OWNER}`, host: null, expiresAt: Date.now() + 30 * 60_000, by: "Ann", at: Date.now() },
    ];
    writeFileSync(join(daemon.home, "grants.json"), `${JSON.stringify({ version: 2, grants }, null, 2)}\n`);
    expect((await daemon.hearth(["grants"])).stdout).toMatch(/^1\. npm test in .+ \(chat telegram:\d+\) — always \(by Ann, .+\)\n2\. git push in .+ \(chat telegram:\d+\) — 30 more min \(by Ann, .+\)\n$/);
    await page.goto(`${base}approvals`);
    const row = page.locator('section[aria-labelledby="gr"] tbody tr', { hasText: "npm test" });
    expect(await row.innerText()).toContain("always");
    page.once("dialog", (d) => void d.accept());
    await row.locator("button", { hasText: "Revoke" }).click();
    await page.waitForSelector('section[aria-labelledby="gr"] tbody tr:only-child:has-text("git push")');
    await expectToast(page, /^Revoked: npm test in /);
    expect((await daemon.hearth(["grants"])).stdout).toMatch(/^1\. git push in .+ \(chat telegram:\d+\) — 30 more min \(by Ann, .+\)\n$/);
  });

  it("Tasks: a running task started from the chat is listed and cancelled on the page, through the task service", async () => {
    // The task's own model call waits until it is cancelled; its parent answers at once.
    const byWho = { type: "respond" as const, fn: (req: Parameters<typeof firstUserText>[0]) => (/Background task [0-9a-f]{6} \("tea"\)/.test(firstUserText(req)) ? { type: "hang" as const } : text("Started the tea task.")) };
    fake.enqueue(toolCall("spawn_task", { task: "Research tea.", label: "tea" }), byWho, byWho);
    await page.goto(`${base}chat`);
    await page.fill("#chat-text", "Research tea in the background");
    await page.click("#chat-send");
    await page.waitForSelector('.msg.assistant[data-done="final"]:has-text("Started the tea task.")');
    await waitFor("the task's model call", () => fake.requests.some((r) => /Background task [0-9a-f]{6} \("tea"\)/.test(firstUserText(r))));
    await page.goto(`${base}tasks`);
    const row = page.locator('section[aria-labelledby="ru"] tbody tr', { hasText: "tea" });
    expect(await row.locator(".badge").textContent()).toBe("running");
    page.once("dialog", (d) => void d.accept());
    await row.locator("button", { hasText: "Cancel" }).click();
    await page.waitForSelector('section[aria-labelledby="ru"] .empty');
    await expectToast(page, /^Cancelling task [0-9a-f]{6} \("tea"\); its chat will be told once it has stopped\.$/);
    expect(await page.locator('section[aria-labelledby="re"] tbody tr', { hasText: "tea" }).locator(".badge").textContent()).toBe("cancelled");
    const list = await daemon.hearth(["tasks"]);
    expect(list.stdout).toMatch(/\n[0-9a-f]{6} {2}cancelled .+ {2}tea\n$/);
  });

  it("Chat: a background task's result arrives in the open Chat page, as it does in Telegram", async () => {
    const byWho = { type: "respond" as const, fn: (req: Parameters<typeof firstUserText>[0]) => (/Background task [0-9a-f]{6} \("leaves"\)/.test(firstUserText(req)) ? text("Green, black and oolong come from one plant.") : text("Started the leaves task.")) };
    fake.enqueue(toolCall("spawn_task", { task: "Research tea leaves.", label: "leaves" }), byWho, byWho);
    await page.goto(`${base}chat`);
    await page.fill("#chat-text", "Research tea leaves in the background");
    await page.click("#chat-send");
    await page.waitForSelector('.msg.assistant[data-done="final"]:has-text("Started the leaves task.")');
    const result = page.locator(".msg.assistant.notice .text", { hasText: "leaves" });
    expect(await result.textContent({ timeout: limit() })).toMatch(/^✅ Task [0-9a-f]{6} "leaves" is done \(\d+s, \$\d+\.\d{4}\):\n\nGreen, black and oolong come from one plant\.$/);
  });
});

/** Every page at desktop width and at 390 px (a phone), into SHOTS. */
async function screenshots(browser: Browser, desktop: Page): Promise<void> {
  mkdirSync(SHOTS!, { recursive: true });
  const phone = await browser.newPage({ viewport: { width: 390, height: 844 }, deviceScaleFactor: 2 });
  await phone.context().addCookies(await desktop.context().cookies());
  const pages = [["overview", ""], ["chat", "chat"], ["memory", "memory?file=USER.md"], ["schedule", "schedule"], ["tasks", "tasks"], ["usage", "usage"], ["approvals", "approvals"], ["people", "people"], ["logs", "logs"]];
  for (const scheme of ["light", "dark"] as const) {
    for (const [name, path] of pages) {
      for (const [kind, p] of [["desktop", desktop], ["phone", phone]] as const) {
        await p.emulateMedia({ colorScheme: scheme });
        await p.goto(`${base}${path}`);
        await p.screenshot({ path: join(SHOTS!, `${name}-${kind}-${scheme}.png`), fullPage: true });
      }
    }
  }
  await phone.close();
}
