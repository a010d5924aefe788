// The 👀 sign on a message while it is answered, at the Telegram channel (in-process, against
// the Bot API emulator): which replies show it, and that it is off before a reply's delivery
// resolves — the outbox records "delivered" only then — also for a reply opened again after a
// restart.
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import type { Channel, InboundMessage, ReplyJournal } from "../../../src/channels/channel.ts";
import { createTelegramChannel, type TelegramChannelOptions } from "../../../src/channels/telegram/channel.ts";
import { createLogger } from "../../../src/process/log.ts";
import { waitFor } from "../../support/daemon.ts";
import { startTelegramEmulator, type TelegramEmulator } from "../../support/telegram-emulator.ts";

const OWNER = 100;
const GROUP = { id: -1001, type: "supergroup" as const, title: "Family" };
const EYES = [{ type: "emoji", emoji: "👀" }];

let emu: TelegramEmulator;
let channel: Channel | undefined;
let received: InboundMessage[];
let logs: string[];

beforeEach(async () => {
  emu = await startTelegramEmulator();
  received = [];
  logs = [];
});
afterEach(async () => {
  await channel?.stop();
  channel = undefined;
  await emu.stop();
});

async function startChannel(reactions: TelegramChannelOptions["reactions"]): Promise<Channel> {
  const log = createLogger({ level: "debug", sink: { write: (l) => void logs.push(l) } });
  const opts: TelegramChannelOptions = { token: emu.token, apiRoot: emu.apiRoot, ownerIds: [String(OWNER)], namePattern: null, polling: { idlePollMs: 10, idlePollMaxMs: 20 }, ...(reactions ? { reactions } : {}) };
  channel = createTelegramChannel(opts, { log });
  await channel.start((m) => void received.push(m));
  return channel;
}

/** A message as the inbox hands it back after a restart: through JSON. */
async function receive(send: () => Promise<number>): Promise<{ id: number; message: InboundMessage }> {
  const id = await send();
  const count = received.length + 1;
  await waitFor(`inbound message #${count}`, () => received.length >= count, 5000);
  return { id, message: JSON.parse(JSON.stringify(received[count - 1])) as InboundMessage };
}

const journal = (key: string): ReplyJournal => {
  const ids: string[] = [];
  return { key, messageIds: ids, messageCreated: (i, id) => void (ids[i] = id) };
};
const reactions = () => emu.callsTo("setMessageReaction").map((c) => [c.body.chat_id, c.body.message_id, c.body.reaction]);

describe("telegram channel: the 👀 sign", () => {
  it("a reply opened again after a restart puts 👀 on and has taken it off when its delivery resolves, after the answer is in the chat", async () => {
    const ch = await startChannel("private");
    const { id, message } = await receive(() => emu.user({ userId: OWNER, firstName: "Ann" }).send("Is the kettle on?"));
    // The run before the crash: its reply showed the sign and never finished.
    ch.openReply(message, journal(message.id));
    await waitFor("the first sign", () => reactions().length === 1);

    await ch.openReply(message, journal(message.id)).finish("The kettle is on.");
    // No wait: finish resolved only after the sign came off.
    expect(reactions()).toEqual([
      [OWNER, id, EYES],
      [OWNER, id, EYES],
      [OWNER, id, []],
    ]);
    const answer = emu.calls.findLastIndex((c) => (c.method === "sendMessage" || c.method === "editMessageText") && c.body.text === "The kettle is on.");
    const off = emu.calls.findLastIndex((c) => c.method === "setMessageReaction");
    expect(answer).toBeGreaterThanOrEqual(0);
    expect(off).toBeGreaterThan(answer);
    expect(emu.botMessages(OWNER).map((m) => m.text)).toEqual(["The kettle is on."]);
  });

  it("no sign for a reply without a journal (a command's), in a group under \"private\", or anywhere under \"off\"", async () => {
    const ch = await startChannel("private");
    const dm = await receive(() => emu.user({ userId: OWNER, firstName: "Ann" }).send("/status"));
    await ch.openReply(dm.message).finish("Model: x");
    const group = await receive(() => emu.user({ userId: 200, firstName: "Bob", chat: GROUP }).send("@TestNameBot hi"));
    await ch.openReply(group.message, journal(group.message.id)).finish("Hello, Bob.");
    expect(reactions()).toEqual([]);
    await ch.stop();

    const off = await startChannel("off");
    const later = await receive(() => emu.user({ userId: OWNER, firstName: "Ann" }).send("hello"));
    await off.openReply(later.message, journal(later.message.id)).finish("Hi.");
    expect(reactions()).toEqual([]);
  });

  it("\"all\" signs group messages too; a sign Telegram refuses is logged and the answer still arrives", async () => {
    const ch = await startChannel("all");
    const { id, message } = await receive(() => emu.user({ userId: 200, firstName: "Bob", chat: GROUP }).send("@TestNameBot hi"));
    emu.inject({ method: "setMessageReaction", times: 2, reply: { status: 400, body: { ok: false, error_code: 400, description: "Bad Request: REACTION_INVALID" } } });
    await ch.openReply(message, journal(message.id)).finish("Hello, Bob.");
    expect(reactions()).toEqual([
      [GROUP.id, id, EYES],
      [GROUP.id, id, []],
    ]);
    expect(emu.botMessages(GROUP.id).map((m) => m.text)).toEqual(["Hello, Bob."]);
    expect(logs.filter((l) => l.includes("telegram.reaction_failed"))).toHaveLength(2);
  });
});
