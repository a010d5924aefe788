// Background tasks end to end: the real daemon, the Bot API emulator, the terminal and the fake
// model. The parent starts a task and answers at once; the owner keeps talking while the child
// works; the result arrives once, labelled, and the parent's next request holds it. Caps,
// concurrency, cancelling and `hearth tasks` (kill -9: tasks-crash.test.ts).
import { readdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { markdownToTelegramHtml } from "../../src/channels/telegram/html.ts";
import { localDate, localTime } from "../../src/process/time.ts";
import { cleanupDaemon, inboxSettled, makeHome, startDaemon, waitFor, type Daemon } from "../support/daemon.ts";
import { requestText, startFakeModel, type FakeModel } from "../support/fake-model.ts";
import { childScript, elapsed, firstUserText, lastUserText, parentScript, records, resultOf, spawnedId } from "../support/task-script.ts";
import { startTelegramEmulator, type TelegramEmulator } from "../support/telegram-emulator.ts";

const OWNER = 100;

/** Pids of the processes whose command line waits for `release-<label>` (a child's exec). */
function commandsWaitingFor(label: string): string[] {
  return readdirSync("/proc")
    .filter((p) => /^\d+$/.test(p))
    .filter((p) => {
      try {
        return readFileSync(`/proc/${p}/cmdline`, "utf8").includes(`release-${label}'`);
      } catch {
        return false;
      }
    });
}

describe("background tasks (daemon e2e, Telegram and the terminal)", () => {
  let fake: FakeModel;
  let emu: TelegramEmulator;
  let daemon: Daemon;
  let home: string;
  const owner = () => emu.user({ userId: OWNER, firstName: "Ann" });
  const chat = () => emu.botMessages(OWNER).map((m) => m.text);
  const release = (label: string) => writeFileSync(join(home, "workspace", `release-${label}`), "");
  const said = async (text: string) => waitFor(`"${text}" in the chat`, () => chat().includes(markdownToTelegramHtml(text)));
  const resultIn = async (label: string): Promise<string> => {
    await waitFor(`the task ${label}`, () => spawnedId(home, label) !== undefined);
    const id = spawnedId(home, label)!;
    await waitFor(`the result of ${label}`, () => resultOf(home, id) !== undefined);
    const result = resultOf(home, id)!.text!;
    await said(result);
    return result;
  };

  beforeAll(async () => {
    fake = await startFakeModel();
    emu = await startTelegramEmulator();
    home = makeHome({
      timezone: "UTC",
      channels: { telegram: { apiRoot: emu.apiRoot, ownerIds: [String(OWNER)] } },
      tools: { exec: { sandbox: "off" } },
      tasks: { maxConcurrent: 2 },
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

  it("the parent answers at once, the owner keeps talking, the result arrives once and the next request holds it; hearth tasks shows it exactly", async () => {
    await owner().send("please research: tea");
    await waitFor("the task", () => spawnedId(home, "tea") !== undefined);
    const id = spawnedId(home, "tea")!;
    await said(`Started task ${id} (tea).`);

    // The child is still at work (its exec waits): a second message is answered meanwhile.
    await waitFor("the child's progress line", () => records(home).some((r) => r.type === "progress" && r.id === id));
    await owner().send("what time is it?");
    await said("Answer to: what time is it?");
    expect(resultOf(home, id)).toBeUndefined();
    const running = await daemon.hearth(["tasks"]);
    expect(running.code, running.stderr).toBe(0);
    expect(running.stdout).toMatch(new RegExp(`^ID {6}STATE {4}ELAPSED {2}COST {5}LABEL\\n${id} {2}running  (?:\\d+m )?\\d+s +\\$0\\.\\d{4}  tea\\n$`));

    release("tea");
    const result = await resultIn("tea");
    expect(result).toMatch(new RegExp(`^✅ Task ${id} "tea" is done \\((?:\\d+m )?\\d+s, \\$0\\.\\d{4}\\):\\n\\nFindings about tea\\.$`));
    await waitFor("every entry settled", () => inboxSettled(home));
    expect(chat().filter((t) => t === markdownToTelegramHtml(result))).toHaveLength(1);

    // The parent knows: its next request carries the result.
    const before = fake.requests.length;
    await owner().send("now email it to me");
    await said("Answer to: now email it to me");
    const parentReq = fake.requests.slice(before).find((r) => lastUserText(r).includes("now email it to me"))!;
    expect(requestText(parentReq)).toContain("Findings about tea.");

    // hearth tasks: the list and the one task, exactly.
    const rs = records(home);
    const spawned = rs.find((r) => r.type === "spawned" && r.id === id)!;
    const end = resultOf(home, id)!;
    const took = elapsed(end.at - spawned.at);
    const cost = `$${end.costUsd!.toFixed(4)}`;
    // task_status, with an id and without: what the parent agent reads.
    const toolResult = async (ask: string, starts: string): Promise<string> => {
      const asked = fake.requests.length;
      await owner().send(ask);
      await waitFor(`task_status read after "${ask}"`, () => fake.requests.slice(asked).some((r) => lastUserText(r).startsWith(starts)));
      await said(`Answer to: ${fake.requests.slice(asked).map(lastUserText).find((t) => t.startsWith(starts))!.split("\n").at(-1)}`);
      return fake.requests.slice(asked).map(lastUserText).find((t) => t.startsWith(starts))!;
    };
    expect(await toolResult(`status of task ${id}`, "Task ")).toBe(`Task ${id} "tea": done, ${took}, ${cost}\nLast progress: exec\nResult:\n${result}`);
    expect(await toolResult("list the tasks", "ID ")).toBe(`ID      STATE  ELAPSED  COST     LABEL\n${id}  done   ${took.padEnd(7)}  ${cost}  tea`);
    const list = await daemon.hearth(["tasks"]);
    expect(list).toEqual({ code: 0, stdout: `ID      STATE  ELAPSED  COST     LABEL\n${id}  done   ${took.padEnd(7)}  ${cost}  tea\n`, stderr: "" });
    // /tasks in the chat shows the same list, in <pre>: its columns line up in a fixed-width font.
    await owner().send("/tasks");
    const pre = `<pre>ID      STATE  ELAPSED  COST     LABEL\n${id}  done   ${took.padEnd(7)}  ${cost}  tea</pre>`;
    await waitFor("the list in <pre>", () => chat().includes(pre));
    const at = (t: number) => `${localDate(t, "UTC")} ${localTime(t, "UTC")}`;
    const progress = rs.filter((r) => r.type === "progress" && r.id === id);
    const one = await daemon.hearth(["tasks", id]);
    expect(one).toEqual({
      code: 0,
      stdout: `Task ${id} "tea": done, ${took}, ${cost}\nStarted ${at(spawned.at)} by main; reports to telegram:${OWNER}\n\nTask:\nResearch tea.\n\nProgress:\n${progress.map((p) => `  ${at(p.at)}  exec\n`).join("")}\nResult:\n${result}\n`,
      stderr: "",
    });
  }, 180_000);

  it("three tasks with maxConcurrent 2: the third waits, all three deliver once", async () => {
    await owner().send("please research: a1, a2, a3");
    await waitFor("three tasks", () => ["a1", "a2", "a3"].every((l) => spawnedId(home, l) !== undefined));
    const ids = ["a1", "a2", "a3"].map((l) => spawnedId(home, l)!);
    await said(`Started task ${ids[0]} (a1). Started task ${ids[1]} (a2). Started task ${ids[2]} (a3).`);
    await waitFor("two children at work", () => ids.slice(0, 2).every((id) => records(home).some((r) => r.type === "progress" && r.id === id)));
    const list = await daemon.hearth(["tasks", "--json"]);
    const states = (JSON.parse(list.stdout) as Array<{ id: string; state: string }>).filter((v) => ids.includes(v.id)).map((v) => v.state);
    expect(states.sort()).toEqual(["queued", "running", "running"]);
    expect(fake.requests.filter((r) => firstUserText(r).includes(`Background task ${ids[2]}`))).toHaveLength(0);

    release("a1");
    release("a2");
    release("a3");
    const results = [await resultIn("a1"), await resultIn("a2"), await resultIn("a3")];
    await waitFor("every entry settled", () => inboxSettled(home));
    for (const r of results) expect(chat().filter((t) => t === markdownToTelegramHtml(r))).toHaveLength(1);
  }, 180_000);

  it("a task over its cost cap stops and says so", async () => {
    await owner().send("please research: pricey");
    const result = await resultIn("pricey");
    const id = spawnedId(home, "pricey")!;
    expect(result).toMatch(new RegExp(`^⏹ Task ${id} "pricey" was stopped: it went over its cost cap of \\$1\\.00 \\(tasks\\.maxCostUsd\\) \\((?:\\d+m )?\\d+s, \\$3\\.\\d{4}\\)\\.$`));
    expect(readFileSync(join(home, "usage.jsonl"), "utf8")).toContain(`"session":"task:${id}"`);
  }, 120_000);

  it("a task given a narrower tool set is refused the others", async () => {
    await owner().send("please research: narrow");
    await resultIn("narrow");
    const id = spawnedId(home, "narrow")!;
    const second = fake.requests.find((r) => firstUserText(r).includes(`Background task ${id}`) && lastUserText(r).includes("exec"))!;
    expect(lastUserText(second)).toBe("Refused: exec is not among the tools this background task was given (memory_get).");
  }, 120_000);

  it("cancel_task stops a running task at once: its run ends and its command's process is gone", async () => {
    await owner().send("please research: forever");
    await waitFor("the task at work", () => {
      const id = spawnedId(home, "forever");
      return id !== undefined && records(home).some((r) => r.type === "progress" && r.id === id);
    });
    const id = spawnedId(home, "forever")!;
    await waitFor("the child's command running", () => commandsWaitingFor("forever").length === 1);
    const asked = fake.requests.length;
    await owner().send(`cancel task ${id}`);
    const result = await resultIn("forever");
    expect(result).toMatch(new RegExp(`^⏹ Task ${id} "forever" was cancelled \\((?:\\d+m )?\\d+s, \\$0\\.\\d{4}\\)\\.$`));
    // The result can reach the chat before the run that cancelled sends its tool result on to the model.
    await waitFor("the cancel's tool result sent to the model", () => fake.requests.slice(asked).map(lastUserText).some((t) => t.startsWith("Cancelling task")));
    const toolResult = fake.requests.slice(asked).map(lastUserText).find((t) => t.startsWith("Cancelling task"));
    expect(toolResult).toBe(`Cancelling task ${id} ("forever"); its chat will be told once it has stopped.`);
    // The daemon's own clock: from the cancel request to the end of the child's run.
    const runEnd = `"session":"task:${id}","channel":"task","messages":1,"status":"aborted"`;
    await waitFor("the child's run to end", () => daemon.log().includes(runEnd));
    const at = (...match: string[]) => Date.parse((JSON.parse(daemon.log().split("\n").find((l) => match.every((m) => l.includes(m)))!) as { t: string }).t);
    // Well under a second on an idle machine (the abort kills the command's process group at
    // once); the bound leaves room for a machine loaded by other test processes, and still fails
    // for a child that runs on (its command never ends by itself).
    expect(at(runEnd) - at(`"event":"task.cancelled"`, `"task":"${id}"`)).toBeLessThan(10_000);
    // The child itself stopped: its command's process is gone, and it asked the model nothing more.
    expect(commandsWaitingFor("forever")).toEqual([]);
    expect(fake.requests.filter((r) => firstUserText(r).includes(`Background task ${id}`))).toHaveLength(1);
  }, 120_000);

  it("/tasks cancel ID and hearth tasks cancel ID say exactly what they did, and refuse an ended task", async () => {
    await owner().send("please research: halt, stall");
    await waitFor("both at work", () => ["halt", "stall"].every((l) => records(home).some((r) => r.type === "progress" && r.id === spawnedId(home, l))));
    const [halt, stall] = ["halt", "stall"].map((l) => spawnedId(home, l)!);
    await owner().send(`/tasks cancel ${halt}`);
    await said(`Cancelling task ${halt} ("halt"); its result message will say when it has stopped.`);
    const cancelled = await daemon.hearth(["tasks", "cancel", stall!]);
    expect(cancelled).toEqual({ code: 0, stdout: `Cancelling task ${stall} ("stall"); its chat will be told once it has stopped.\n`, stderr: "" });
    await resultIn("halt");
    await resultIn("stall");
    await owner().send(`/tasks cancel ${halt}`);
    await said(`Task ${halt} has already ended (cancelled).`);
    const again = await daemon.hearth(["tasks", "cancel", stall!]);
    expect(again).toEqual({ code: 1, stdout: "", stderr: `hearth: Task ${stall} has already ended (cancelled).\n` });
    await waitFor("every entry settled", () => inboxSettled(home));
  }, 120_000);

  it("a job added with cron add --task runs as a background task and delivers its result the same way", async () => {
    const add = await daemon.hearth(["cron", "add", "--name", "digest", "--every", "1h", "--message", "Research the digest.", "--task"]);
    expect(add.code, add.stderr).toBe(0);
    const jobId = /Added job (\S+) /.exec(add.stdout)![1]!;
    expect((await daemon.hearth(["cron", "run", jobId])).code).toBe(0);
    await waitFor("the job's task", () => spawnedId(home, "digest") !== undefined);
    const id = spawnedId(home, "digest")!;
    expect(records(home).find((r) => r.type === "spawned" && r.id === id)).toMatchObject({ task: "Research the digest.", parent: "main", by: `cron job "digest" (${jobId})` });
    release("digest");
    const result = await resultIn("digest");
    expect(result).toMatch(new RegExp(`^✅ Task ${id} "digest" is done \\((?:\\d+m )?\\d+s, \\$0\\.\\d{4}\\):\\n\\nFindings about digest\\.$`));
    await waitFor("every entry settled", () => inboxSettled(home));
    expect(chat().filter((t) => t === markdownToTelegramHtml(result))).toHaveLength(1);
  }, 120_000);

  it("from the terminal: the parent answers, the result waits in the terminal's mailbox once", async () => {
    const said = await daemon.hearth(["chat", "-m", "please research: tty"]);
    const id = spawnedId(home, "tty")!;
    expect(said).toEqual({ code: 0, stdout: `Started task ${id} (tty).\n`, stderr: expect.any(String) });
    release("tty");
    await waitFor("the result", () => resultOf(home, id) !== undefined);
    await waitFor("every entry settled", () => inboxSettled(home));
    const letters = (JSON.parse(readFileSync(join(home, "terminal-mailbox.json"), "utf8")) as { letters: Array<{ text: string; from: string }> }).letters;
    expect(letters.filter((l) => l.text === resultOf(home, id)!.text)).toEqual([expect.objectContaining({ from: `task ${id}` })]);
  }, 120_000);
});
