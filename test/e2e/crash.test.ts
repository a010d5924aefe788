// Crashes at the edges of a reply, against the real daemon, the Bot API emulator and the fake
// model: kill -9 while the preview streams, while a tool's progress line shows, after Telegram
// applied the final text but before the daemon heard back, and twice while a message waits
// behind a long run. After the restart every chat holds exactly what a person should see.
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { markdownToTelegramHtml } from "../../src/channels/telegram/html.ts";
import { GIVEN_UP_TEXT } from "../../src/gateway/recovery.ts";
import { cleanupDaemon, inboxSettled, makeHome, startDaemon, waitFor, type Daemon } from "../support/daemon.ts";
import { lastUserContent, startFakeModel, text, toolCall, type FakeModel } from "../support/fake-model.ts";
import { startTelegramEmulator, type TelegramEmulator } from "../support/telegram-emulator.ts";

const OWNER = 100;

let fake: FakeModel;
let emu: TelegramEmulator;
let daemons: Daemon[];
let home: string;

beforeEach(async () => {
  fake = await startFakeModel();
  emu = await startTelegramEmulator();
  daemons = [];
});
afterEach(async () => {
  // Every daemon shares the home: all must be dead before it is removed.
  for (const d of daemons) if (d.proc.exitCode === null && d.proc.signalCode === null) await kill9(d);
  await cleanupDaemon(undefined, home);
  await emu.stop();
  await fake.close();
});

function makeTelegramHome(telegram: Record<string, unknown> = {}): void {
  home = makeHome({ channels: { telegram: { apiRoot: emu.apiRoot, ownerIds: [String(OWNER)], ...telegram } } });
}

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

const owner = () => emu.user({ userId: OWNER, firstName: "Ann" });
/** Every message has its outcome recorded: nothing more will be sent for it. */
const settled = () => waitFor("every message's outcome to be recorded", () => inboxSettled(home));
/**
 * How many runs have started on the accepted message whose text starts with `prefix`: a start
 * rewrites the inbox with each open entry's attempts so far, later starts are `started` records.
 */
const startsOf = (prefix: string): number => {
  let id: string | undefined;
  let starts = 0;
  for (const line of inboxText().trim().split("\n")) {
    const r = JSON.parse(line) as { type: string; id?: string; entry?: { id: string; attempts?: number; message: { text: string } } };
    if (r.type === "accepted" && r.entry!.message.text.startsWith(prefix)) [id, starts] = [r.entry!.id, r.entry!.attempts ?? 0];
    else if (r.type === "started" && r.id !== undefined && r.id === id) starts++;
  }
  return starts;
};
const inboxText = () => readFileSync(join(home, "inbox.jsonl"), "utf8");
const outboxText = () => {
  try {
    return readFileSync(join(home, "outbox.jsonl"), "utf8");
  } catch {
    return "";
  }
};
const lastUserText = (i: number) =>
  lastUserContent(fake.requests[i]!)
    .map((b) => (typeof b.text === "string" ? b.text : ""))
    .join("\n");

describe("crash recovery (daemon e2e, Telegram)", () => {
  it("(a) kill -9 mid-stream: after the restart the chat holds exactly one bot message, the final answer", async () => {
    makeTelegramHome();
    const first = await start();
    fake.enqueue(text("Half of an answer that will never be finished because the daemon dies first. ".repeat(3), { chunkSize: 4, chunkDelayMs: 60 }));
    await owner().send("Tell me about the weather");
    await waitFor("a streamed preview", () => (emu.botMessages(OWNER)[0]?.history.length ?? 0) >= 2, 15_000);
    await kill9(first);
    const stale = emu.botMessages(OWNER)[0]!;
    expect(stale.text).not.toBe("");

    const answer = "It will be **sunny** all day.";
    fake.enqueue(text(answer, { chunkSize: 5, chunkDelayMs: 20 }));
    await start();
    await waitFor("the final answer", () => emu.botMessages(OWNER)[0]?.parseMode === "HTML", 20_000);
    await settled();
    const msgs = emu.botMessages(OWNER);
    expect(msgs).toHaveLength(1);
    expect(msgs[0]!.messageId).toBe(stale.messageId); // the answer replaced the old preview in place
    expect(msgs[0]!.text).toBe(markdownToTelegramHtml(answer));
    expect(emu.deletedBotMessages()).toEqual([]);
    expect(fake.requests).toHaveLength(2);
    expect(lastUserText(1)).toContain("Tell me about the weather");
  });

  it("(a) kill -9 while a tool's progress line shows: the '⏳ exec' preview becomes the new answer", async () => {
    makeTelegramHome();
    const first = await start();
    fake.enqueue(toolCall("exec", { command: "sleep 4" }));
    await owner().send("Run the long job");
    await waitFor("the tool line", () => emu.botMessages(OWNER)[0]?.text.startsWith("⏳ exec: sleep 4") === true, 15_000);
    // Telegram has no idempotent send: a kill between Telegram creating the message and the
    // daemon hearing its id (one local round trip) cannot be recovered. Kill once it is recorded.
    await waitFor("the preview's id in the outbox", () => outboxText().includes('"type":"message"'), 10_000);
    await kill9(first);

    fake.enqueue(text("The job is done."));
    const second = await start();
    await waitFor("the final answer", () => emu.botMessages(OWNER)[0]?.text === "The job is done.", 20_000).catch((err: unknown) => {
      throw new Error(`${String(err)}\nbot: ${JSON.stringify(emu.botMessages(OWNER))}\nrequests: ${fake.requests.length}\nlog:\n${second.log().slice(-6000)}`);
    });
    await settled();
    expect(emu.botMessages(OWNER).map((m) => m.text)).toEqual(["The job is done."]);
    expect(fake.requests).toHaveLength(2);
  });

  it("(b) kill -9 after Telegram applied the final text but before the daemon heard back: one answer, no second model call", async () => {
    makeTelegramHome();
    const first = await start();
    const answer = "Your meeting is at **10:30** in room B. Bring the printed agenda.";
    fake.enqueue(text(answer, { chunkSize: 8, chunkDelayMs: 80 }));
    emu.inject({ method: "editMessageText", when: (b) => b.parse_mode === "HTML", reply: "apply-then-hang" });
    await owner().send("When is my meeting?");
    await waitFor("the final edit to be applied", () => emu.callsTo("editMessageText").some((c) => c.injected), 20_000);
    expect(emu.botMessages(OWNER)[0]!.text).toBe(markdownToTelegramHtml(answer));
    await kill9(first);

    const second = await start();
    await waitFor("the re-delivery", () => second.log().includes("outbox.redelivering"), 10_000);
    await waitFor("the re-delivery's edit", () => emu.callsTo("editMessageText").filter((c) => c.body.parse_mode === "HTML").length >= 2, 10_000);
    await settled();
    const msgs = emu.botMessages(OWNER);
    expect(msgs).toHaveLength(1);
    expect(msgs[0]!.text).toBe(markdownToTelegramHtml(answer));
    // Telegram said "message is not modified": that counts as delivered.
    expect(emu.callsTo("editMessageText").at(-1)!.response).toMatchObject({ ok: false, description: expect.stringMatching(/not modified/) });
    expect(fake.requests).toHaveLength(1);
    expect(second.log()).not.toContain("outbox.redeliver_failed");

    // Nothing is left for a third start.
    await second.stop();
    // Recovery is planned before the daemon is ready: a start with nothing to recover says nothing.
    const third = await start();
    expect(third.log()).not.toContain("inbox.recovering");
    expect(emu.botMessages(OWNER)).toHaveLength(1);
    expect(fake.requests).toHaveLength(1);
  });

  it("steering: two messages answered by one run, killed after the final text landed → one reply, both closed, no model call", async () => {
    makeTelegramHome();
    const first = await start();
    const answer = "Both are **done**: the backup ran and the report is sent.";
    fake.enqueue(toolCall("exec", { command: "sleep 1" }), text(answer, { chunkSize: 10, chunkDelayMs: 50 }));
    emu.inject({ method: "editMessageText", when: (b) => b.parse_mode === "HTML", reply: "apply-then-hang" });
    const user = owner();
    await user.send("A: run the backup");
    await waitFor("the tool line", () => emu.botMessages(OWNER)[0]?.text.startsWith("⏳ exec") === true, 15_000);
    await user.send("B: and send the report");
    await waitFor("the final edit to be applied", () => emu.callsTo("editMessageText").some((c) => c.injected), 20_000);
    expect(JSON.stringify(fake.requests[1]!.body.messages)).toContain("B: and send the report");
    expect(outboxText()).toContain('"type":"joined"');
    await kill9(first);

    const second = await start();
    await waitFor("the re-delivery", () => second.log().includes("outbox.redelivering"), 10_000);
    await settled();
    expect(emu.botMessages(OWNER).map((m) => m.text)).toEqual([markdownToTelegramHtml(answer)]);
    expect(fake.requests).toHaveLength(2);
    await second.stop();
    // Recovery is planned before the daemon is ready: a start with nothing to recover says nothing.
    const third = await start();
    expect(third.log()).not.toContain("inbox.recovering");
    expect(fake.requests).toHaveLength(2);
  });

  it("(c) followup mode: a message waiting behind a long run survives two kill -9s and is answered; the long run's message is retried, not given up", async () => {
    makeTelegramHome({ queueMode: "followup" });
    const first = await start();
    fake.enqueue({ type: "hang" });
    const user = owner();
    await user.send("A: start the endless task");
    await fake.waitForRequests(1);
    await user.send("B: what time is it?");
    await waitFor("B to be accepted", () => inboxText().includes("B: what time is it?"), 10_000);
    await kill9(first);

    fake.enqueue({ type: "hang" });
    const second = await start();
    await fake.waitForRequests(2);
    expect(lastUserText(1)).toContain("A: start the endless task");
    await waitFor("A's second start to be recorded", () => startsOf("A: start") === 2);
    await kill9(second);

    // A started twice and never finished, but never alone on a stable daemon: bad luck, not
    // poison. B never reached the model: answered at once. A is retried after its backoff, in a
    // run of its own, and answered too; nothing is given up.
    fake.enqueue(text("It is noon."), text("The endless task is done."));
    const third = await start();
    await waitFor("both answers", () => emu.botMessages(OWNER).filter((m) => m.text === "It is noon." || m.text === "The endless task is done.").length === 2);
    await settled();
    expect(emu.botMessages(OWNER).map((m) => m.text)).toEqual(["It is noon.", "The endless task is done."]);
    expect(fake.requests).toHaveLength(4);
    expect(lastUserText(2)).toMatch(/B: what time is it\?$/);
    // B's run did not see A as an open question: A's cut-off turns left the view until its retry.
    expect(JSON.stringify(fake.requests[2]!.body.messages)).not.toContain("A: start the endless task");
    expect(lastUserText(3)).toMatch(/A: start the endless task$/);
    expect(third.log()).toContain('"event":"inbox.retrying_suspect"');
    expect(third.log()).not.toContain('"inbox.abandoned"');
    expect(GIVEN_UP_TEXT).not.toBe("");
  });
});
