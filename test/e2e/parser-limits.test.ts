// Untrusted parsing, end to end against the real daemon: a web page of deeply nested tags
// fetched by the model, and a PDF bomb sent by a group member, must neither hold the other chats
// nor take the daemon's memory. The page ends within its limits with a plain-text tool result
// that says why; the PDF gets one sentence; the next message is answered.
import { readFileSync } from "node:fs";
import { afterEach, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { cleanupDaemon, makeHome, startDaemon, waitFor, type Daemon } from "../support/daemon.ts";
import { lastUserContent, requestText, startFakeModel, text, toolCall, type FakeModel, type RecordedRequest } from "../support/fake-model.ts";
import { startTelegramEmulator, type TelegramEmulator } from "../support/telegram-emulator.ts";
import { bombPdf, startLocalWeb, type LocalWeb } from "../support/web-fixtures.ts";

const OWNER = 100;
const GROUP = { id: -1001, type: "supergroup" as const, title: "Family" };

let emu: TelegramEmulator;
let fake: FakeModel;
let web: LocalWeb;
let daemon: Daemon | undefined;
let home: string | undefined;

beforeEach(async () => {
  emu = await startTelegramEmulator();
  fake = await startFakeModel();
  web = await startLocalWeb();
  daemon = undefined;
  home = undefined;
});
afterEach(async () => {
  await cleanupDaemon(daemon, home);
  await web.close();
  await fake.close();
  await emu.stop();
});

async function start(): Promise<void> {
  home = makeHome({
    channels: { telegram: { apiRoot: emu.apiRoot, ownerIds: [String(OWNER)], dmPolicy: "allowlist", groups: { policy: "allowlist", allow: [String(GROUP.id)], requireMention: false } } },
    tools: { web: { fetch: { mode: "local", allowPrivate: ["127.0.0.1"] } } },
  });
  daemon = await startDaemon(home, { TELEGRAM_BOT_TOKEN: emu.token, ANTHROPIC_API_KEY: "test-key", ANTHROPIC_BASE_URL: fake.url });
  await waitFor("telegram polling", () => daemon!.log().includes("telegram.polling"));
}

const toolResultOf = (req: RecordedRequest) => lastUserContent(req).find((b) => b.type === "tool_result");
const nested = (depth: number) => `${"<div>".repeat(depth)}<p>The bottom of the page.</p>${"</div>".repeat(depth)}`;

describe("a hostile web page is extracted off the main thread, within limits (daemon e2e)", () => {
  /**
   * The owner asks for `path`; once the page has been served in full, a group member writes.
   * Returns the order in which the group's answer and the fetch's tool result happened, and the
   * tool result.
   */
  async function fetchWhileGroupTalks(path: string, page: string) {
    const events: string[] = [];
    web.route(path, (_req, res) => {
      res.on("finish", () => {
        events.push("page served");
        void emu.user({ userId: 200, firstName: "Bob", chat: GROUP }).send("@TestNameBot what time is dinner?");
      });
      res.writeHead(200, { "content-type": "text/html; charset=utf-8" }).end(page);
    });
    fake.setDefault({
      type: "respond",
      fn: (req) => {
        if (toolResultOf(req)) {
          events.push("fetch tool result");
          return text("I read the page.");
        }
        if (requestText(req).includes("what time is dinner")) return text("Dinner is at seven.");
        return toolCall("web_fetch", { url: `${web.url}${path}` });
      },
    });
    const off = emu.onBotActivity((a) => {
      if (a.message.chatId === String(GROUP.id) && a.kind === "sent") events.push("group answered");
    });
    await emu.user({ userId: OWNER, firstName: "Ann" }).send(`Please read ${web.url}${path}`);
    await waitFor("the group's answer", () => emu.botMessages(GROUP.id)[0]?.text === "Dinner is at seven.", 60_000);
    await waitFor("the owner's answer", () => emu.botMessages(OWNER).some((m) => m.text === "I read the page."), 60_000);
    off();
    expect(emu.botMessages(GROUP.id).map((m) => m.text)).toEqual(["Dinner is at seven."]);
    const fetchRun = fake.requests.find((r) => toolResultOf(r))!;
    return { events, result: toolResultOf(fetchRun)! };
  }

  const tooDeep = (url: string) =>
    `<external-content source="${url}">\n[The page is too complex to extract (its tags nest deeper than 256 levels); here is its text, without markup.]\n\nThe bottom of the page.\n</external-content>`;

  it("3,000 nested <div>s: the group is answered while the page is processed, and the fetch returns its text with the reason", async () => {
    await start();
    const { events, result } = await fetchWhileGroupTalks("/deep", `<!doctype html><html><head><title>Deep</title></head><body>${nested(3000)}</body></html>`);
    expect(result.content).toBe(tooDeep(`${web.url}/deep`));
    expect(result.is_error ?? false).toBe(false);
    expect(events.indexOf("page served")).toBe(0);
    expect(events).toContain("group answered");
  }, 180_000);

  it("200,000 nested <div>s (2.2 MB): the same, within the limits", async () => {
    await start();
    const { events, result } = await fetchWhileGroupTalks("/deeper", `<!doctype html><html><body>${nested(200_000)}</body></html>`);
    expect(result.content).toBe(tooDeep(`${web.url}/deeper`));
    expect(events).toContain("group answered");
  }, 180_000);

  it("a page that is slow to extract: the group's answer comes before the fetch's tool result, which ends at a limit", async () => {
    await start();
    // Within the depth limit, but a thousand chains of 250 levels take readability far past 10 s;
    // on a fast machine the worker's heap may run out first: either way the job is ended.
    const { events, result } = await fetchWhileGroupTalks("/slow", `<!doctype html><html><body>${nested(250).repeat(1000)}</body></html>`);
    expect(events).toEqual(["page served", "group answered", "fetch tool result"]);
    const page = (reason: string) =>
      `<external-content source="${web.url}/slow">\n[The page is too complex to extract (${reason}); here is its text, without markup.]\n\n${Array(1000).fill("The bottom of the page.").join("\n")}\n</external-content>`;
    expect([page("extracting it took longer than 10 s"), page("extracting it needed more than 128 MB of memory")]).toContain(result.content);
  }, 180_000);
});

describe("a PDF bomb from a group member (daemon e2e)", () => {
  let bomb: Buffer;
  beforeAll(async () => {
    bomb = await bombPdf(1024 * 1024 * 1024);
  }, 120_000);

  /** The daemon's resident memory in MB (its threads, the parse workers, included). */
  const rssMb = (pid: number) => Number(/VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, "utf8"))![1]) / 1024;

  it("a 1 GB-inflating PDF keeps the daemon under 400 MB, gets one sentence, and the next message is answered", async () => {
    expect(bomb.length).toBeLessThan(1_100_000);
    await start();
    const pid = daemon!.proc.pid!;
    let peak = rssMb(pid);
    const sampler = setInterval(() => {
      try {
        peak = Math.max(peak, rssMb(pid));
      } catch {
        // the daemon is gone: the test fails on its answers
      }
    }, 10);
    try {
      fake.setDefault({ type: "respond", fn: (req) => text(requestText(req).includes("dinner") ? "Dinner is at seven." : "I see a PDF.") });
      const bob = emu.user({ userId: 200, firstName: "Bob", chat: GROUP });
      await bob.sendMedia({ document: { ...emu.addFile(new Uint8Array(bomb)), file_name: "bomb.pdf", mime_type: "application/pdf" } });
      await waitFor("the answer to the PDF", () => emu.botMessages(GROUP.id).length > 0, 60_000);
      await bob.send("@TestNameBot what time is dinner?");
      await waitFor("the next answer", () => emu.botMessages(GROUP.id)[1]?.text === "Dinner is at seven.", 60_000);
      // Until the PDF is done with: refused at once, or its text extracted in the background for search.
      await waitFor("the PDF's processing", () => emu.botMessages(GROUP.id)[0]!.text.startsWith("I couldn't read the PDF") || /media\.pdf_text/.test(daemon!.log()), 120_000);
    } finally {
      clearInterval(sampler);
    }
    expect(peak).toBeLessThan(400);
    expect(emu.botMessages(GROUP.id).map((m) => m.text)).toEqual([
      "I couldn't read the PDF bomb.pdf: it is too complex to open safely (a compressed part of it unpacks to more than 64 MB).",
      "Dinner is at seven.",
    ]);
  }, 180_000);
});
