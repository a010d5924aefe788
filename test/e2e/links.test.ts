// Links through the privacy wall, attacked through a real gateway: a program the owner runs
// (exec, a sync tool) plants links in shared chats' folders and at SOUL.md. No owner byte and no
// secret may reach any shared chat's request, and no owner file may be written.
import { linkSync, mkdirSync, mkdtempSync, readFileSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { setTimeout as sleep } from "node:timers/promises";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { localDate } from "../../src/process/time.ts";
import { isolatedEnv, runHearth } from "../support/cli-process.ts";
import { cleanupDaemon, makeHome, startDaemon, waitFor, type Daemon } from "../support/daemon.ts";
import { startFakeModel, text, toolCall, type FakeModel, type RecordedRequest, type Scripted } from "../support/fake-model.ts";
import { startTelegramEmulator, type TelegramEmulator } from "../support/telegram-emulator.ts";
import { startTestGateway, type TestGateway } from "../support/test-gateway.ts";
import { CONFIG_VERSION } from "../../src/config/migrations.ts";

const MARKS = { user: "UMARK-4417-passport", memory: "MMARK-9023-safecode", log: "LMARK-3300-alarm", token: "CMARK-7781-bottoken" };
const USER = `# User\nThe owner's passport number is ${MARKS.user}.\n`;
const MEMORY = `# Memory\n- The safe code is ${MARKS.memory}.\n`;
const CONFIG = `${JSON.stringify({ channels: { telegram: { token: `123456:${MARKS.token}` } } }, null, 2)}\n`;

let fake: FakeModel;
let home: string;
let gw: TestGateway | undefined;
beforeEach(async () => {
  fake = await startFakeModel();
  home = mkdtempSync(join(tmpdir(), "hearth-links-"));
  gw = undefined;
});
afterEach(async () => {
  await gw?.stop();
  await fake.close();
  rmSync(home, { recursive: true, force: true });
});

const until = (what: string, check: () => boolean) => waitFor(what, check, 15_000);
const leaked = (req: RecordedRequest) => Object.values(MARKS).filter((m) => req.rawBody.includes(m));

describe("links in shared chats' folders and at SOUL.md", () => {
  it("carry no owner byte and no secret into any group's request, and no group writes an owner file", async () => {
    const groups = ["-2001", "-2002", "-2003"];
    gw = await startTestGateway(fake.url, {
      home,
      config: { timezone: "UTC" },
      telegram: { groups: { policy: "allowlist", allow: groups, requireMention: false } },
    });
    const { channel } = gw;
    const ws = gw.config.workspace;
    const at = (rel: string) => join(ws, rel);
    const today = localDate(Date.now(), "UTC");
    const ownerLog = `# ${today}\n\n### 09:00 · cli · owner\n> the alarm code is ${MARKS.log}\n\nNoted.\n`;
    writeFileSync(join(home, "config.json"), CONFIG, { mode: 0o600 });
    writeFileSync(at("USER.md"), USER);
    writeFileSync(at("MEMORY.md"), MEMORY);
    mkdirSync(at("memory/chats"), { recursive: true });
    writeFileSync(at(`memory/${today}.md`), ownerLog);

    // The owner talks first, so SOUL.md (still the template) sits in the context cache.
    fake.enqueue(text("Hello."));
    const first = channel.say({ chat: "1", type: "dm", sender: "1", text: "hi" });
    await until("the owner's first answer", () => channel.replies.has(first));
    expect(JSON.stringify(fake.requests[0]!.body.system)).toContain("## SOUL.md");

    // The attack, planted while running.
    mkdirSync(at("memory/chats/telegram_-2001"));
    symlinkSync("../../../USER.md", at(`memory/chats/telegram_-2001/${today}.md`)); // a file link
    symlinkSync("..", at("memory/chats/telegram_-2002")); // a folder link: its log is the owner's log
    mkdirSync(at("memory/chats/telegram_-2003"));
    linkSync(at("MEMORY.md"), at(`memory/chats/telegram_-2003/${today}.md`)); // a hard link
    rmSync(at("SOUL.md"));
    symlinkSync("../config.json", at("SOUL.md"));

    // The owner's next runs show when the watcher has dropped the cached SOUL.md (its section
    // leaves the system prompt; other changes, such as MEMORY.md's new link count, may come
    // first); from then on it is refused for every scope (a shared-visible file must be a plain
    // file), which the assertions at the end check.
    const deadline = Date.now() + 15_000;
    for (;;) {
      fake.enqueue(text("ok"));
      const id = channel.say({ chat: "1", type: "dm", sender: "1", text: "ping" });
      await until("the owner's answer", () => channel.replies.has(id));
      if (!JSON.stringify(fake.requests.at(-1)!.body.system).includes("## SOUL.md")) break;
      if (Date.now() > deadline) throw new Error("the owner's context did not change in 15 s after SOUL.md became a link");
      await sleep(100);
    }
    const ownerRequests = fake.requests.length;

    const attempts = (chat: string): Scripted[] => [
      toolCall("memory_get", { path: `memory/chats/telegram_${chat}/${today}.md` }),
      toolCall("memory_get", { path: "SOUL.md" }),
      toolCall("memory_search", { query: "passport number safe code alarm" }),
      toolCall("memory_write", { text: `note from ${chat}` }),
      text(`Nothing to share in ${chat}.`),
    ];
    for (const chat of groups) {
      fake.enqueue(...attempts(chat));
      const id = channel.say({ chat, sender: "5", text: "what does the owner keep in memory?" });
      await until(`the answer in ${chat}`, () => channel.replies.has(id));
      expect(channel.replies.get(id)).toEqual([`Nothing to share in ${chat}.`]);
    }
    // A second exchange in each group: its context is assembled again after the first
    // exchange's log append (which must have been refused, not written through the link).
    for (const chat of groups) {
      fake.enqueue(text(`Still nothing in ${chat}.`));
      const id = channel.say({ chat, sender: "5", text: "and now?" });
      await until(`the second answer in ${chat}`, () => channel.replies.has(id));
    }

    const groupRequests = fake.requests.slice(ownerRequests);
    expect(groupRequests).toHaveLength(groups.length * 6);
    expect(groupRequests.map(leaked)).toEqual(groupRequests.map(() => []));
    for (const req of groupRequests) expect(JSON.stringify(req.body.system)).not.toContain("## SOUL.md");
    // The tools really ran and were refused (not, say, never called).
    const toolResults = groupRequests.map((r) => JSON.stringify(r.body.messages)).join("\n");
    expect(toolResults).toContain("Could not save the note");
    expect(toolResults).toContain("Not available in this conversation");

    // No owner file written, byte for byte; nothing appended through any link.
    expect(readFileSync(at("USER.md"), "utf8")).toBe(USER);
    expect(readFileSync(at("MEMORY.md"), "utf8")).toBe(MEMORY);
    expect(readFileSync(join(home, "config.json"), "utf8")).toBe(CONFIG);
    const mainLog = readFileSync(at(`memory/${today}.md`), "utf8");
    expect(mainLog.startsWith(ownerLog)).toBe(true);
    expect(mainLog).not.toContain("-200");
    expect(mainLog).not.toContain("what does the owner keep");

    // SOUL.md is refused for the owner too: config.json is in no request at all.
    for (const req of fake.requests) expect(req.rawBody).not.toContain(MARKS.token);
    expect(JSON.stringify(fake.requests[ownerRequests - 1]!.body.system)).not.toContain("## SOUL.md");
  });
});

describe("links through the real daemon and Telegram", () => {
  let emu: TelegramEmulator;
  let daemon: Daemon | undefined;
  let dhome: string | undefined;
  beforeEach(async () => {
    emu = await startTelegramEmulator();
    daemon = undefined;
    dhome = undefined;
  });
  afterEach(async () => {
    await cleanupDaemon(daemon, dhome);
    await emu.stop();
  });

  it("keeps the bot token in config.json and the owner's files out of three linked groups, and writes none of them", async () => {
    const groups = [-2001, -2002, -2003];
    // The bot token lives in config.json (a current-version file keeps it there); SOUL.md will point at it.
    dhome = makeHome({
      version: CONFIG_VERSION,
      channels: {
        telegram: {
          token: emu.token,
          apiRoot: emu.apiRoot,
          ownerIds: ["100"],
          groups: { policy: "allowlist", allow: groups.map(String), requireMention: false },
        },
      },
      timezone: "UTC",
    });
    const configBytes = readFileSync(join(dhome, "config.json"), "utf8");
    const ws = join(dhome, "workspace");
    const at = (rel: string) => join(ws, rel);
    const today = localDate(Date.now(), "UTC");
    const ownerLog = `# ${today}\n\n### 09:00 · cli · owner\n> the alarm code is ${MARKS.log}\n\nNoted.\n`;
    mkdirSync(at("memory/chats/telegram_-2001"), { recursive: true });
    mkdirSync(at("memory/chats/telegram_-2003"));
    writeFileSync(at("USER.md"), USER);
    writeFileSync(at("MEMORY.md"), MEMORY);
    writeFileSync(at(`memory/${today}.md`), ownerLog);
    symlinkSync("../../../USER.md", at(`memory/chats/telegram_-2001/${today}.md`));
    symlinkSync("..", at("memory/chats/telegram_-2002"));
    linkSync(at("MEMORY.md"), at(`memory/chats/telegram_-2003/${today}.md`));
    symlinkSync("../config.json", at("SOUL.md"));

    daemon = await startDaemon(dhome, { ANTHROPIC_API_KEY: "test-key", ANTHROPIC_BASE_URL: fake.url });
    await waitFor("telegram polling", () => daemon!.log().includes("telegram.polling"));

    for (const id of groups) {
      fake.enqueue(
        toolCall("memory_get", { path: `memory/chats/telegram_${id}/${today}.md` }),
        toolCall("memory_search", { query: "passport safe code alarm token" }),
        toolCall("memory_write", { text: "the group was here" }),
        text(`Nothing for group ${id}.`),
      );
      const member = emu.user({ userId: 200, firstName: "Bob", chat: { id, type: "supergroup", title: `G${id}` } });
      await member.send("what does the owner keep in memory?");
      await waitFor(`the answer in ${id}`, () => emu.botMessages(id).some((m) => m.text === `Nothing for group ${id}.`), 20_000);
      expect(emu.botMessages(id).map((m) => m.text)).toEqual([`Nothing for group ${id}.`]);
    }

    expect(fake.requests).toHaveLength(groups.length * 4);
    for (const req of fake.requests) {
      expect(leaked(req)).toEqual([]);
      expect(req.rawBody).not.toContain(emu.token);
      expect(JSON.stringify(req.body.system)).not.toContain("## SOUL.md");
    }
    expect(readFileSync(at("USER.md"), "utf8")).toBe(USER);
    expect(readFileSync(at("MEMORY.md"), "utf8")).toBe(MEMORY);
    expect(readFileSync(at(`memory/${today}.md`), "utf8")).toBe(ownerLog);
    expect(readFileSync(join(dhome, "config.json"), "utf8")).toBe(configBytes);
    // Each refused file is logged once, however many reads and appends met it.
    const problems = daemon.log().split("\n").filter((l) => l.includes("memory.file_problem") && l.includes("telegram_-2001"));
    expect(problems).toHaveLength(1);
  });
});

describe("hearth doctor", () => {
  it("names the workspace files left out because they are links", async () => {
    const dhome = makeHome();
    try {
      const env = isolatedEnv({ HEARTH_HOME: dhome, ANTHROPIC_API_KEY: "sk-ant-test" });
      await runHearth(["init"], env);
      const ws = join(dhome, "workspace");
      rmSync(join(ws, "SOUL.md"));
      symlinkSync("../config.json", join(ws, "SOUL.md"));
      rmSync(join(ws, "USER.md"));
      symlinkSync("../config.json", join(ws, "USER.md"));
      const r = await runHearth(["doctor"], env);
      expect(r.code).toBe(1);
      expect(r.stdout).toContain(
        "✗ workspace: left out of every prompt: SOUL.md (a symlink), USER.md (a link to a place outside the workspace)\n    fix: replace each with a plain file: Hearth does not follow links that could carry private files or config.json into a chat\n",
      );
    } finally {
      rmSync(dhome, { recursive: true, force: true });
    }
  });
});
