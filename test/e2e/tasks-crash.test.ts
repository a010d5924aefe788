// A background task across kill -9, at the two moments that matter: while the child runs (it
// continues from its transcript after the restart), and right after its result was recorded
// but before the chat got it (the delivery hangs on its way to Telegram). After the restarts the
// chat holds exactly one result message, and the parent's transcript has it.
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { markdownToTelegramHtml } from "../../src/channels/telegram/html.ts";
import { cleanupDaemon, inboxSettled, makeHome, startDaemon, waitFor, type Daemon } from "../support/daemon.ts";
import { startFakeModel, type FakeModel } from "../support/fake-model.ts";
import { childScript, lastUserText, parentScript, records, resultOf, spawnedId } from "../support/task-script.ts";
import { startTelegramEmulator, type TelegramEmulator } from "../support/telegram-emulator.ts";

const OWNER = 100;

let fake: FakeModel;
let emu: TelegramEmulator;
let home: string;
const daemons: Daemon[] = [];

beforeEach(async () => {
  fake = await startFakeModel();
  emu = await startTelegramEmulator();
  home = makeHome({ channels: { telegram: { apiRoot: emu.apiRoot, ownerIds: [String(OWNER)] } }, tools: { exec: { sandbox: "off" } } });
  fake.setDefault({ type: "respond", fn: (req) => childScript(req, () => home) ?? parentScript(req) });
});
afterEach(async () => {
  for (const d of daemons.splice(0)) if (d.proc.exitCode === null && d.proc.signalCode === null) await kill9(d);
  await cleanupDaemon(undefined, home);
  await emu.stop();
  await fake.close();
});

async function start(): Promise<Daemon> {
  const d = await startDaemon(home, { TELEGRAM_BOT_TOKEN: emu.token, ANTHROPIC_API_KEY: "test-key", ANTHROPIC_BASE_URL: fake.url });
  daemons.push(d);
  await waitFor("telegram polling", () => d.log().includes("telegram.polling"));
  return d;
}

async function kill9(d: Daemon): Promise<void> {
  d.proc.kill("SIGKILL");
  await d.exited;
}

const chat = () => emu.botMessages(OWNER).map((m) => m.text);
const outbox = () => {
  try {
    return readFileSync(join(home, "outbox.jsonl"), "utf8");
  } catch {
    return "";
  }
};
/** The parent's own entries (not the task's) are all done. */
const parentSettled = () =>
  readFileSync(join(home, "inbox.jsonl"), "utf8")
    .split("\n")
    .filter(Boolean)
    .map((l) => JSON.parse(l) as { type: string; id?: string; entry?: { id: string } })
    .filter((r) => (r.entry?.id ?? r.id ?? "").startsWith("telegram:") && !(r.entry?.id ?? r.id ?? "").includes("task-"))
    .reduce((open, r) => (r.type === "accepted" ? open + 1 : r.type === "done" ? open - 1 : open), 0) === 0;

describe("background tasks across kill -9 (daemon e2e, Telegram)", () => {
  it("killed while the child runs, then after its result was recorded but before delivery: exactly one result message", async () => {
    const first = await start();
    await emu.user({ userId: OWNER, firstName: "Ann" }).send("please research: crashy");
    await waitFor("the task", () => spawnedId(home, "crashy") !== undefined);
    const id = spawnedId(home, "crashy")!;
    await waitFor("the parent's answer", () => chat().includes(`Started task ${id} (crashy).`) && parentSettled());
    await waitFor("the child at work", () => records(home).some((r) => r.type === "progress" && r.id === id));
    await kill9(first);

    // Restart 1: the child continues from its transcript; its result's first message hangs on its way.
    emu.inject({ method: "sendMessage", when: (b) => String(b.chat_id) === String(OWNER), reply: "hang" });
    const second = await start();
    await waitFor("the result recorded and handed to the outbox", () => resultOf(home, id) !== undefined && outbox().includes(`"type":"final","reply":"telegram:task-${id}"`));
    await waitFor("its first message on its way (it never arrives)", () => emu.calls.some((c) => c.method === "sendMessage" && c.injected));
    const resumed = fake.requests.filter((r) => lastUserText(r).includes(`Hearth restarted while background task ${id}`));
    expect(resumed).toHaveLength(1);
    await kill9(second);
    expect(chat()).toEqual([`Started task ${id} (crashy).`]);

    // Restart 2: delivered from the record, once, without asking the model again.
    const asked = fake.requests.length;
    await start();
    const result = resultOf(home, id)!.text!;
    expect(result).toMatch(new RegExp(`^✅ Task ${id} "crashy" is done \\((?:\\d+m )?\\d+s, \\$0\\.\\d{4}\\):\\n\\nFindings about crashy\\.$`));
    await waitFor("every entry settled", () => inboxSettled(home) && chat().length === 2);
    await waitFor("the result noted in the parent", () => records(home).some((r) => r.type === "noted" && r.id === id));
    expect(chat()).toEqual([`Started task ${id} (crashy).`, markdownToTelegramHtml(result)]);
    expect(fake.requests.length).toBe(asked);
    expect(readFileSync(join(home, "sessions", "main.jsonl"), "utf8")).toContain("Findings about crashy.");
    // Its cost is the whole task's, before the first kill too: every usage record of its session.
    const usage = readFileSync(join(home, "usage.jsonl"), "utf8").trim().split("\n").map((l) => JSON.parse(l) as { session: string; costUsd: number });
    const before = usage.filter((u) => u.session === `task:${id}`);
    expect(before.length).toBeGreaterThan(1);
    expect(resultOf(home, id)!.costUsd).toBeCloseTo(before.reduce((n, u) => n + u.costUsd, 0), 9);
  }, 240_000);
  it("cancelled, then killed while the result is on its way after the child's run ended: exactly one result message", async () => {
    const first = await start();
    await emu.user({ userId: OWNER, firstName: "Ann" }).send("please research: dropme");
    await waitFor("the task", () => spawnedId(home, "dropme") !== undefined);
    const id = spawnedId(home, "dropme")!;
    await waitFor("the parent's answer", () => chat().includes(`Started task ${id} (dropme).`) && parentSettled());
    await waitFor("the child at work", () => records(home).some((r) => r.type === "progress" && r.id === id));

    // The result's message hangs on its way to Telegram while the child's run winds down.
    emu.inject({ method: "sendMessage", when: (b) => String(b.chat_id) === String(OWNER), reply: "hang" });
    const cancel = await first.hearth(["tasks", "cancel", id]);
    expect(cancel).toEqual({ code: 0, stdout: `Cancelling task ${id} ("dropme"); its chat will be told once it has stopped.\n`, stderr: "" });
    await waitFor("the result handed to the outbox and on its way", () => outbox().includes(`"type":"final","reply":"telegram:task-${id}"`) && emu.calls.some((c) => c.method === "sendMessage" && c.injected));
    await waitFor("the child's run over", () => first.log().includes(`"session":"task:${id}","channel":"task","messages":1,"status":"aborted"`));
    await kill9(first);
    expect(chat()).toEqual([`Started task ${id} (dropme).`]);

    await start();
    const result = resultOf(home, id)!.text!;
    expect(result).toMatch(new RegExp(`^⏹ Task ${id} "dropme" was cancelled \\((?:\\d+m )?\\d+s, \\$0\\.\\d{4}\\)\\.$`));
    await waitFor("every entry settled", () => inboxSettled(home) && chat().length === 2);
    expect(chat()).toEqual([`Started task ${id} (dropme).`, markdownToTelegramHtml(result)]);
  }, 240_000);
});
