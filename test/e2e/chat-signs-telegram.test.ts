// What a Telegram chat shows of Hearth besides its answers, end to end (one daemon for the
// file): the command menus set at start, and the 👀 reaction on a message while it is answered.
// Both are asserted at the Bot API (the emulator's recording proxy), call by call.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { cleanupDaemon, inboxSettled, makeHome, startDaemon, waitFor, type Daemon } from "../support/daemon.ts";
import { startFakeModel, text, type FakeModel } from "../support/fake-model.ts";
import { startTelegramEmulator, type BotApiCall, type TelegramEmulator } from "../support/telegram-emulator.ts";

const OWNER = 100;
const FAMILY = { id: -1001, type: "supergroup" as const, title: "Family" };
const EYES = [{ type: "emoji", emoji: "👀" }];

let fake: FakeModel;
let emu: TelegramEmulator;
let daemon: Daemon;
let home: string;
const env = () => ({ TELEGRAM_BOT_TOKEN: emu.token, ANTHROPIC_API_KEY: "test-key", ANTHROPIC_BASE_URL: fake.url });

beforeAll(async () => {
  fake = await startFakeModel();
  emu = await startTelegramEmulator();
  home = makeHome({
    channels: { telegram: { apiRoot: emu.apiRoot, ownerIds: [String(OWNER)], groups: { policy: "allowlist", allow: [String(FAMILY.id)] } } },
  });
  daemon = await startDaemon(home, env());
});
afterAll(async () => {
  await cleanupDaemon(daemon);
  await emu.stop();
  await fake.close();
});

const reactionCalls = (chatId: number) => emu.callsTo("setMessageReaction").filter((c) => Number(c.body.chat_id) === chatId);
const indexOf = (call: BotApiCall) => emu.calls.indexOf(call);

describe("telegram chat signs (daemon e2e)", () => {
  it("the command menus: everyone's commands by default, the owner's in the owner's private chat, from the gateway's command table", async () => {
    await waitFor("both menus", () => emu.callsTo("setMyCommands").length >= 2);
    const everyone = [
      { command: "stop", description: "stop the current answer and drop queued messages" },
      { command: "new", description: "start a fresh conversation (the old one stays on disk)" },
      { command: "status", description: "model, context use, queue and today's usage" },
      { command: "compact", description: "summarise older turns to free context" },
      { command: "queue", description: "what a message does while I'm answering" },
      { command: "model", description: "show or switch this conversation's model (owner only)" },
      { command: "help", description: "this list" },
    ];
    const owner = [
      ...everyone.slice(0, 6),
      { command: "voice", description: "whether my answers in this chat are spoken (owner)" },
      { command: "budget", description: "spending against the limits; raise today's limit by N dollars (owner)" },
      { command: "grants", description: "what you allowed for a while or always (owner); /revoke N takes grant N back" },
      { command: "tasks", description: "background tasks, running and recent; stop one (owner)" },
      { command: "private", description: "make this chat private again once only you and I are in it (owner)" },
      { command: "undo", description: "take back my last change to your memory files (owner)" },
      { command: "help", description: "this list" },
    ];
    expect(emu.callsTo("setMyCommands").map((c) => [c.status, c.body])).toEqual([
      [200, { commands: everyone, scope: { type: "default" } }],
      [200, { commands: owner, scope: { type: "chat", chat_id: OWNER } }],
    ]);
  });

  it("👀 goes on the owner's message while it is answered and comes off after the answer is delivered; a command gets none", async () => {
    fake.enqueue(text("The kettle is on.", { chunkSize: 4, chunkDelayMs: 60 }));
    const asked = await emu.user({ userId: OWNER, firstName: "Ann" }).send("Is the kettle on?");
    await waitFor("the answer and the sign taken off", () => emu.botMessages(OWNER).some((m) => m.text === "The kettle is on.") && reactionCalls(OWNER).length >= 2 && inboxSettled(daemon.home));

    const [on, off] = reactionCalls(OWNER);
    expect(reactionCalls(OWNER).map((c) => [c.status, c.body])).toEqual([
      [200, { chat_id: OWNER, message_id: asked, reaction: EYES }],
      [200, { chat_id: OWNER, message_id: asked, reaction: [] }],
    ]);
    // On before the answer's first message, off after the edit that showed the final text.
    const firstSend = emu.callsTo("sendMessage").find((c) => Number(c.body.chat_id) === OWNER)!;
    const finalEdit = emu.callsTo("editMessageText").findLast((c) => Number(c.body.chat_id) === OWNER && c.body.text === "The kettle is on.")!;
    expect(indexOf(on!)).toBeLessThan(indexOf(firstSend));
    expect(indexOf(off!)).toBeGreaterThan(indexOf(finalEdit));

    // A command is answered at once, without a run: no sign.
    await emu.user({ userId: OWNER, firstName: "Ann" }).send("/queue");
    await waitFor("the /queue answer", () => emu.botMessages(OWNER).some((m) => m.text.startsWith("Queue mode:")));
    expect(reactionCalls(OWNER)).toHaveLength(2);
  });

  it("in a group (reactions: \"private\", the default) an answered message gets no sign", async () => {
    fake.enqueue(text("Dinner is at seven."));
    await emu.user({ userId: 200, firstName: "Bob", chat: FAMILY }).send("@TestNameBot when is dinner?");
    await waitFor("the group answer", () => emu.botMessages(FAMILY.id).some((m) => m.text === "Dinner is at seven.") && inboxSettled(daemon.home));
    expect(reactionCalls(FAMILY.id)).toEqual([]);
  });

  it("a run cut by kill -9 leaves 👀 on; after the restart the retried answer takes it off once it is delivered", async () => {
    fake.enqueue({ type: "hang" });
    const before = fake.requests.length;
    const asked = await emu.user({ userId: OWNER, firstName: "Ann" }).send("Tell me a story.");
    const signs = () => reactionCalls(OWNER).filter((c) => c.body.message_id === asked);
    await waitFor("the sign on the question", () => signs().length === 1 && fake.requests.length === before + 1);
    daemon.proc.kill("SIGKILL");
    await daemon.exited;

    fake.enqueue(text("Once upon a time, the end."));
    daemon = await startDaemon(home, env());
    await waitFor("the retried answer and the sign off", () => emu.botMessages(OWNER).some((m) => m.text === "Once upon a time, the end.") && signs().length >= 3 && inboxSettled(home));
    expect(signs().map((c) => c.body.reaction)).toEqual([EYES, EYES, []]);
    const finalText = emu.calls.findLastIndex((c) => Number(c.body.chat_id) === OWNER && c.body.text === "Once upon a time, the end.");
    expect(indexOf(signs()[2]!)).toBeGreaterThan(finalText);
  });
});
