// Notes about each person in a group, end to end (the real daemon, the Bot API emulator, a fake
// model): what Ann asks Hearth to remember about herself goes to her own file in the group's
// folder; it is in the requests when Ann addresses Hearth and absent when Bob does; Bob cannot
// read it through a tool; the owner's main chat can.
import { appendFileSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { cleanupDaemon, makeHome, startDaemon, waitFor, type Daemon } from "../support/daemon.ts";
import { lastUserContent, startFakeModel, text, toolCall, type FakeModel } from "../support/fake-model.ts";
import { startTelegramEmulator, type TelegramEmulator } from "../support/telegram-emulator.ts";

const OWNER = 100;
const ANN = 200;
const BOB = 300;
const FAMILY = { id: -1001, type: "supergroup" as const, title: "Family" };
const NOTES = `memory/chats/telegram_${FAMILY.id}/people/${ANN}.md`;

let fake: FakeModel;
let emu: TelegramEmulator;
let daemon: Daemon | undefined;
let home: string;

beforeAll(async () => {
  fake = await startFakeModel();
  emu = await startTelegramEmulator();
  home = makeHome({
    channels: { telegram: { apiRoot: emu.apiRoot, ownerIds: [String(OWNER)], dmPolicy: "allowlist", groups: { policy: "allowlist", allow: [String(FAMILY.id)], requireMention: true } } },
  });
  daemon = await startDaemon(home, { TELEGRAM_BOT_TOKEN: emu.token, ANTHROPIC_API_KEY: "test-key", ANTHROPIC_BASE_URL: fake.url });
  await waitFor("telegram polling", () => daemon!.log().includes("telegram.polling"));
});

afterAll(async () => {
  await cleanupDaemon(daemon, home);
  await emu.stop();
  await fake.close();
});

const ann = () => emu.user({ userId: ANN, firstName: "Ann", chat: FAMILY });
const bob = () => emu.user({ userId: BOB, firstName: "Bob", chat: FAMILY });
const owner = () => emu.user({ userId: OWNER, firstName: "Olga" });
const lastIn = (chat: number) => emu.botMessages(chat).at(-1)?.text;
const system = (i: number) => (fake.requests[i]!.body.system as Array<{ text: string }>).map((b) => b.text).join("\n");
const toolResult = (i: number) => lastUserContent(fake.requests[i]!).find((b) => b.type === "tool_result");

describe("notes about people in a group (daemon e2e)", () => {
  it("Ann's fact goes to her own file, and is in the requests only when Ann addresses Hearth", async () => {
    fake.enqueue(toolCall("memory_write", { text: "Ann is vegetarian.", target: "person" }), text("Noted, Ann."));
    await ann().send("@TestNameBot remember that I'm vegetarian");
    await waitFor("the answer", () => lastIn(FAMILY.id) === "Noted, Ann.", 30_000);
    expect(String(toolResult(1)!.content)).toBe(`Saved to ${NOTES}.`);
    expect(readFileSync(join(home, "workspace", NOTES), "utf8")).toBe("- Ann is vegetarian.\n");
    // The owner edits the file by hand; the next request of Ann's shows it.
    appendFileSync(join(home, "workspace", NOTES), "- Ann is allergic to kiwifruit.\n");

    const annRequest = fake.requests.length;
    fake.enqueue(text("Chocolate it is."));
    await ann().send("@TestNameBot what cake should we get for me?");
    await waitFor("the answer", () => lastIn(FAMILY.id) === "Chocolate it is.", 30_000);
    expect(system(annRequest)).toContain(`## ${NOTES} (your notes about the person writing to you now)\n- Ann is vegetarian.\n- Ann is allergic to kiwifruit.`);

    const bobRequest = fake.requests.length;
    fake.enqueue(text("I don't know that."));
    await bob().send("@TestNameBot what should I bring for Ann?");
    await waitFor("the answer", () => lastIn(FAMILY.id) === "I don't know that.", 30_000);
    // Ann's own words in the group are the group's; her notes are not.
    expect(system(bobRequest)).not.toContain("people/");
    expect(system(bobRequest)).not.toContain("Ann is vegetarian.");
    expect(JSON.stringify(fake.requests[bobRequest]!.body)).not.toContain("kiwifruit");
  });

  it("Bob cannot read Ann's file by any tool; the owner's main chat can", async () => {
    const first = fake.requests.length;
    fake.enqueue(toolCall("memory_get", { path: NOTES }), toolCall("memory_search", { query: "kiwifruit" }), text("Nothing there."));
    await bob().send("@TestNameBot look up Ann's notes");
    await waitFor("the answer", () => lastIn(FAMILY.id) === "Nothing there.", 30_000);
    expect(toolResult(first + 1)!.is_error).toBe(true);
    expect(String(toolResult(first + 1)!.content)).not.toContain("kiwifruit");
    expect(String(toolResult(first + 2)!.content)).toBe("No matches.");

    const owners = fake.requests.length;
    fake.enqueue(toolCall("memory_get", { path: NOTES }), text("Ann: vegetarian, no kiwifruit."));
    await owner().send("what do you know about Ann in the family group?");
    await waitFor("the answer", () => lastIn(OWNER) === "Ann: vegetarian, no kiwifruit.", 30_000);
    expect(String(toolResult(owners + 1)!.content)).toContain("Ann is allergic to kiwifruit.");
  });
});
