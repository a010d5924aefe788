// Background tasks in a group the owner opened to them (`groups.tasks`), end to end through the
// real daemon, the Bot API emulator and the fake model: a member's message leads to spawn_task,
// the task runs in the group's shared scope (its tools, its memory folder), its result arrives
// once in the group, and the group's task_status and /tasks list only the group's tasks. A group
// not opened to tasks is refused as before.
import { existsSync, readdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { markdownToTelegramHtml } from "../../src/channels/telegram/html.ts";
import { localDate } from "../../src/process/time.ts";
import { cleanupDaemon, inboxSettled, makeHome, startDaemon, waitFor, type Daemon } from "../support/daemon.ts";
import { startFakeModel, type FakeModel, type RecordedRequest } from "../support/fake-model.ts";
import { childScript, elapsed, firstUserText, lastUserText, parentScript, records, resultOf, spawnedId } from "../support/task-script.ts";
import { startTelegramEmulator, type TelegramEmulator } from "../support/telegram-emulator.ts";

const OWNER = 100;
const MEMBER = 200;
const CLUB = { id: -100200, type: "supergroup" as const, title: "Book club" };
const OTHER = { id: -100300, type: "supergroup" as const, title: "Neighbours" };

const toolNames = (req: RecordedRequest): string[] => ((req.body as { tools?: Array<{ name: string }> }).tools ?? []).map((t) => t.name);

describe("background tasks in a group opened to them (daemon e2e, Telegram)", () => {
  let fake: FakeModel;
  let emu: TelegramEmulator;
  let daemon: Daemon;
  let home: string;
  const owner = () => emu.user({ userId: OWNER, firstName: "Ann" });
  const member = (chat: typeof CLUB) => emu.user({ userId: MEMBER, firstName: "Bob", chat });
  const texts = (chat: number) => emu.botMessages(chat).map((m) => m.text);
  const said = async (chat: number, text: string) => waitFor(`"${text}" in chat ${chat}`, () => texts(chat).includes(markdownToTelegramHtml(text)));

  beforeAll(async () => {
    fake = await startFakeModel();
    emu = await startTelegramEmulator();
    home = makeHome({
      timezone: "UTC",
      channels: {
        telegram: {
          apiRoot: emu.apiRoot,
          ownerIds: [String(OWNER)],
          groups: { policy: "allowlist", allow: [String(CLUB.id), String(OTHER.id)], requireMention: false, tasks: [String(CLUB.id)] },
        },
      },
      tools: { exec: { sandbox: "off" } },
    });
    fake.setDefault({ type: "respond", fn: (req) => childScript(req, () => home) ?? parentScript(req) });
    daemon = await startDaemon(home, { TELEGRAM_BOT_TOKEN: emu.token, ANTHROPIC_API_KEY: "test-key", ANTHROPIC_BASE_URL: fake.url });
    await waitFor("telegram polling", () => daemon.log().includes("telegram.polling"));
  });
  afterAll(async () => {
    await cleanupDaemon(daemon, home);
    await emu.stop();
    await fake.close();
  });

  it("a member starts a task: it runs in the group's scope, its result arrives once in the group, and the group sees only its own tasks", async () => {
    // The owner's own task first: the group must never see it.
    await owner().send("please research: diary");
    await waitFor("the owner's task", () => spawnedId(home, "diary") !== undefined);
    const diary = spawnedId(home, "diary")!;
    await said(OWNER, `Started task ${diary} (diary).`);

    const asked = fake.requests.length;
    await member(CLUB).send("please research: picnic");
    await waitFor("the group's task", () => spawnedId(home, "picnic") !== undefined);
    const id = spawnedId(home, "picnic")!;
    await said(CLUB.id, `Started task ${id} (picnic).`);
    const parentReq = fake.requests.slice(asked).find((r) => lastUserText(r).includes("please research: picnic"))!;
    expect(toolNames(parentReq)).toEqual(expect.arrayContaining(["spawn_task", "task_status", "cancel_task"]));
    expect(toolNames(parentReq)).not.toContain("cron_add");
    expect(records(home).find((r) => r.type === "spawned" && r.id === id)).toMatchObject({ parent: `group:telegram:${CLUB.id}`, scope: "shared", target: { channel: "telegram", chatId: String(CLUB.id) } });

    // The child runs in the shared scope: no exec (refused when it tries), no task tools of its own.
    await waitFor("the group task's result", () => resultOf(home, id) !== undefined);
    const childReqs = fake.requests.filter((r) => firstUserText(r).includes(`Background task ${id}`));
    expect(firstUserText(childReqs[0]!)).toContain("That answer is sent to the group chat that started the task.");
    expect(toolNames(childReqs[0]!)).not.toContain("exec");
    expect(toolNames(childReqs[0]!)).not.toContain("spawn_task");
    expect(lastUserText(childReqs.at(-1)!)).toMatch(/^Refused: exec is only available in the owner's private chat\./);
    const result = resultOf(home, id)!.text!;
    expect(result).toMatch(new RegExp(`^✅ Task ${id} "picnic" is done \\((?:\\d+m )?\\d+s, \\$0\\.\\d{4}\\):\\n\\nFindings about picnic\\.$`));
    await said(CLUB.id, result);
    expect(texts(CLUB.id).filter((t) => t === markdownToTelegramHtml(result))).toHaveLength(1);
    expect(texts(OWNER)).not.toContain(markdownToTelegramHtml(result));
    // Its exchange is logged in the group's own folder, never in a folder of its own.
    const chats = join(home, "workspace", "memory", "chats");
    expect(readdirSync(chats).filter((d) => d.startsWith("task"))).toEqual([]);
    const log = join(chats, `telegram_${CLUB.id}`, `${localDate(Date.now(), "UTC")}.md`);
    await waitFor("the group's daily log", () => existsSync(log) && readFileSync(log, "utf8").includes("Findings about picnic."));

    // task_status in the group: only the group's task, never the owner's.
    const before = fake.requests.length;
    await member(CLUB).send("list the tasks");
    await waitFor("task_status read", () => fake.requests.slice(before).some((r) => lastUserText(r).startsWith("ID ")));
    const listed = fake.requests.slice(before).map(lastUserText).find((t) => t.startsWith("ID "))!;
    const end = resultOf(home, id)!;
    const spawned = records(home).find((r) => r.type === "spawned" && r.id === id)!;
    expect(listed).toBe(`ID      STATE  ELAPSED  COST     LABEL\n${id}  done   ${elapsed(end.at - spawned.at).padEnd(7)}  $${end.costUsd!.toFixed(4)}  picnic`);
    await said(CLUB.id, "Answer to: " + listed.split("\n").at(-1));
    // …and the owner's task by its id is unknown there.
    const probe = fake.requests.length;
    await member(CLUB).send(`status of task ${diary}`);
    await waitFor("task_status read", () => fake.requests.slice(probe).some((r) => lastUserText(r).startsWith("No background task")));
    expect(fake.requests.slice(probe).map(lastUserText)).toContain(`No background task has the id "${diary}". task_status (or /tasks) lists them.`);
    // /tasks in the group: the same list as task_status.
    await member(CLUB).send("/tasks");
    await waitFor("the list in <pre>", () => texts(CLUB.id).includes(`<pre>${listed}</pre>`));

    // The owner's task ends in the owner's chat; once every entry is settled, the group's result is still there once.
    writeFileSync(join(home, "workspace", "release-diary"), "");
    await waitFor("every entry settled", () => resultOf(home, diary) !== undefined && inboxSettled(home));
    expect(texts(CLUB.id).filter((t) => t === markdownToTelegramHtml(result))).toHaveLength(1);
    expect(texts(CLUB.id).some((t) => t.includes("diary"))).toBe(false);
  }, 180_000);

  it("a group not opened to tasks is refused as before: no task tools offered, spawn_task refused with the same message", async () => {
    const asked = fake.requests.length;
    await member(OTHER).send("please research: fence");
    await said(OTHER.id, "Answer to: Refused: spawn_task is only available in the owner's private chat. This conversation can use: memory_search, memory_get, memory_write, send_file.");
    const first = fake.requests.slice(asked).find((r) => lastUserText(r).includes("please research: fence"))!;
    expect(toolNames(first)).not.toContain("spawn_task");
    expect(spawnedId(home, "fence")).toBeUndefined();
    await member(OTHER).send("/tasks");
    await said(OTHER.id, "Background tasks are only available in the owner's private chat.");
  }, 120_000);
});
