// An MCP server's question (elicitation) through the real daemon and the Telegram emulator: the
// owner sees the question in the chat of the call, answers field by field (a text field in
// words, the yes/no with a button only they can press), and the tool gets the validated values;
// "decline" declines; no answer declines after the timeout.
import { fileURLToPath } from "node:url";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { runHearth } from "../support/cli-process.ts";
import { cleanupDaemon, makeHome, startDaemon, waitFor, type Daemon } from "../support/daemon.ts";
import { lastUserContent, startFakeModel, text, toolCall, type FakeModel } from "../support/fake-model.ts";
import { startTelegramEmulator, type TelegramEmulator } from "../support/telegram-emulator.ts";

const FAULT = fileURLToPath(new URL("../support/fault-mcp-server.ts", import.meta.url));
const OWNER = 4242;
let emu: TelegramEmulator;
let fake: FakeModel;
let home: string;
let daemon: Daemon | undefined;

beforeAll(async () => {
  emu = await startTelegramEmulator();
  fake = await startFakeModel();
  home = makeHome({
    channels: { telegram: { apiRoot: emu.apiRoot, ownerIds: [String(OWNER)] } },
    // Trusted: a server's result is outside content, so after the first call every later call of
    // an untrusted tool in the conversation would wait for the owner's approval first.
    mcp: { servers: { asker: { command: process.execPath, args: [FAULT, "--ask"], trust: "*" }, hasty: { command: process.execPath, args: [FAULT, "--ask"], answerTimeoutMs: 1000, trust: "*" } } },
  });
  daemon = await startDaemon(home, { TELEGRAM_BOT_TOKEN: emu.token, ANTHROPIC_API_KEY: "test-key", ANTHROPIC_BASE_URL: fake.url });
  await waitFor("the MCP servers", () => daemon!.log().split('"event":"mcp.ready"').length === 3);
});
afterAll(async () => {
  await cleanupDaemon(daemon, home);
  await fake.close();
  await emu.stop();
});

const owner = () => emu.user({ userId: OWNER, firstName: "Ann" });
const bob = () => emu.user({ userId: 200, firstName: "Bob" });
const texts = () => emu.botMessages(OWNER).map((m) => m.text);
/** What the presser alone was told about each press, in order. */
const pressAnswers = () => emu.callsTo("answerCallbackQuery").map((c) => String(c.body.text ?? ""));
const GO_AHEAD = "Go ahead?\n(yes or no, required)";
const YES_NO = [
  [
    { text: "Yes", callback_data: expect.stringMatching(/^q:[\w-]+:0$/) },
    { text: "No", callback_data: expect.stringMatching(/^q:[\w-]+:1$/) },
  ],
  [{ text: "Decline", callback_data: expect.stringMatching(/^q:[\w-]+:2$/) }],
];
const QUESTION = 'The MCP server "asker" asks: Who are you?\n(Answer "decline" to refuse, "cancel" to stop.)\nName\n(text, required)';

/** The tool result the model got for the call of the request before `index`. */
const resultAt = (index: number) => lastUserContent(fake.requests[index]!).find((b) => b.type === "tool_result")!.content;

describe("elicitation through the chat", () => {
  it("asks field by field (the yes/no with buttons only the person asked can press), checks the answers and hands the tool the values; decline declines; silence declines after the timeout", async () => {
    const me = owner();
    fake.enqueue(toolCall("mcp__asker__ask", {}), text("Thanks, Bo."));
    await me.send("who am I?");
    await waitFor("the first question", () => texts().includes(QUESTION));
    await me.send("B");
    await waitFor("the question again", () => texts().some((t) => t.startsWith("That does not fit: at least 2 characters.\nName")), 20_000).catch((e) => {
      throw new Error(`${(e as Error).message}\n${JSON.stringify(texts())}\n${daemon!.log().slice(-3000)}`);
    });
    await me.send("Bo");
    await waitFor("the second question", () => texts().includes(GO_AHEAD));
    const q = emu.botMessages(OWNER).find((m) => m.text === GO_AHEAD)!;
    expect(q.keyboard).toEqual(YES_NO);
    // Someone else's press changes nothing: the buttons stay, the tool still waits.
    await bob().press(q.messageId, "Yes");
    await waitFor("Bob's press answered", () => pressAnswers().length === 1);
    expect(pressAnswers()).toEqual(["Only the person who was asked can answer this."]);
    expect(emu.botMessages(OWNER).find((m) => m.messageId === q.messageId)).toMatchObject({ text: GO_AHEAD, keyboard: YES_NO });
    expect(fake.requests).toHaveLength(1);
    await me.press(q.messageId, "Yes");
    await waitFor("the answer", () => texts().includes("Thanks, Bo."));
    expect(resultAt(1)).toBe('accept {"name":"Bo","ok":true}');
    expect(pressAnswers()).toEqual(["Only the person who was asked can answer this.", "Yes."]);
    await waitFor("the buttons taken off", () => emu.botMessages(OWNER).find((m) => m.messageId === q.messageId)!.keyboard!.length === 0);
    expect(texts()).toEqual(["Thanks, Bo.", QUESTION, "That does not fit: at least 2 characters.\nName\n(text, required)", `${GO_AHEAD}\n\nAnn: Yes`].sort(byOrder(texts())));
    // The answers went to the tool, not to the agent: two model calls, no third.
    expect(fake.requests).toHaveLength(2);

    fake.enqueue(toolCall("mcp__asker__ask", {}), text("Declined."));
    await me.send("again");
    await waitFor("the question", () => texts().filter((t) => t === QUESTION).length === 2);
    await me.send("decline");
    await waitFor("the answer", () => texts().includes("Declined."));
    expect(resultAt(3)).toBe("decline");

    fake.enqueue(toolCall("mcp__hasty__ask", {}), text("No answer."));
    await me.send("once more");
    await waitFor("the question", () => texts().includes(QUESTION.replace('"asker"', '"hasty"')));
    await waitFor("the answer", () => texts().includes("No answer."));
    expect(resultAt(5)).toBe("decline");
    expect(fake.requests).toHaveLength(6);
  });
});

describe("elicitation on the terminal (hearth mcp call)", () => {
  it("asks one question per field; an empty line takes the default; the tool gets the values", async () => {
    const r = await runHearth(["mcp", "call", "asker", "ask"], daemon!.env, { input: "Bo\nyes\n" });
    expect(r).toEqual({
      code: 0,
      stdout: `${QUESTION}\n> Go ahead?\n(yes or no, required)\n> accept {"name":"Bo","ok":true}\n`,
      stderr: "",
    });
    const none = await runHearth(["mcp", "call", "asker", "ask"], daemon!.env, { input: "" });
    expect(none).toEqual({ code: 0, stdout: `${QUESTION}\n> decline\n`, stderr: "" });
  });
});

/** Keeps `expected`'s items in the order they appear in `actual` (the reply is edited in place). */
function byOrder(actual: string[]) {
  return (a: string, b: string) => actual.indexOf(a) - actual.indexOf(b);
}
