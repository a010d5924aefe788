// A platform without buttons gets numbered choices answered by a reply that names its question (a
// bare number only where it cannot mean another), one without edits gets the answer whole, in
// parts of its length, once: the one place the channel-neutral code falls back.
import { describe, expect, it, vi } from "vitest";
import type { Channel, ChoicePress, ChoiceQuestion, DeliveryTarget, InboundMessage, ReplyJournal } from "../../src/channels/channel.ts";
import type { ChannelCapabilities } from "../../src/channels/capabilities.ts";
import { numberedQuestion, withFallbacks } from "../../src/channels/fallbacks.ts";

const PLAIN: ChannelCapabilities = { edits: false, buttons: false, reactions: false, threads: false, filesIn: false, filesOut: false, voiceIn: false, voiceOut: false, maxMessageLength: 40, groups: true, strangers: true };

/** A platform that can only send whole messages: what it sent (each named `sent-N`, as a quote of it names it), and a way to deliver inbound ones. */
function plainPlatform() {
  const sent: Array<{ to: DeliveryTarget; text: string; id: string }> = [];
  let deliver: ((m: InboundMessage) => void | Promise<void>) | undefined;
  const channel: Channel = {
    id: "telegram",
    async start(onMessage) {
      deliver = onMessage;
    },
    async stop() {},
    openReply() {
      throw new Error("this platform's adapter has no replies of its own");
    },
    async send(to, text) {
      const id = `sent-${sent.length + 1}`;
      sent.push({ to, text, id });
      return { type: "delivered", messageIds: [id] };
    },
    status: () => ({ state: "running" }),
  };
  const message = (text: string, sender: { id: string; isOwner: boolean }, chat = "500", replyTo?: string): InboundMessage => ({
    id: `m${Math.random()}`,
    channel: "telegram",
    chat: { id: chat, type: "group" },
    sender: { ...sender, name: sender.id },
    text,
    addressed: true,
    receivedAt: 0,
    ...(replyTo ? { replyTo: { id: replyTo, fromBot: true } } : {}),
  });
  return { channel, sent, inbound: (m: InboundMessage) => deliver!(m), message };
}

const owner = { id: "1", isOwner: true };
const stranger = { id: "2", isOwner: false };
const to: DeliveryTarget = { channel: "telegram", chatId: "500" };
const question: ChoiceQuestion = { key: "ap-1", kind: "approval", text: "Allow `rm -r build`?", choices: [{ id: "once", label: "Allow once" }, { id: "deny", label: "Deny" }] };
const pairing: ChoiceQuestion = { key: "pair-1", kind: "access", text: "🤝 Sam asks to talk with you privately.", choices: [{ id: "approve", label: "Approve" }, { id: "deny", label: "Deny" }] };

/** The fallback over a plain platform, its presses recorded (the owner's answered "Pressed <choice>."), and what it passed on. */
async function numbered() {
  const p = plainPlatform();
  const ch = withFallbacks(p.channel, PLAIN);
  const presses: ChoicePress[] = [];
  ch.onChoice!(async (press) => {
    presses.push(press);
    return press.by.isOwner ? `Pressed ${press.choiceId}.` : "Only the owner can answer this.";
  });
  const passed: string[] = [];
  await ch.start((m) => void passed.push(`${m.chat.id}:${m.text}`));
  const pressed = () => presses.map((x) => `${x.key}:${x.choiceId}`);
  return { p, ch, presses, pressed, passed };
}

describe("no buttons: numbered choices", () => {
  it("asks with the choices numbered; with one question open, the owner's bare number is the press, not a message", async () => {
    const { p, ch, presses, passed } = await numbered();
    const id = await ch.askChoices!(to, question);
    expect(p.sent.map((s) => s.text)).toEqual(["Allow `rm -r build`?\n\n1. Allow once\n2. Deny\n\nReply to this message with a number (e.g. 1 to allow once)."]);
    expect(numberedQuestion(question)).toBe(p.sent[0]!.text);

    await p.inbound(p.message("2", stranger));
    await p.inbound(p.message(" 1 ", owner));
    await expect.poll(() => p.sent.length).toBe(3);
    expect(presses.map((x) => [x.key, x.choiceId, x.by.id, x.by.isOwner])).toEqual([
      ["ap-1", "deny", "2", false],
      ["ap-1", "once", "1", true],
    ]);
    expect(p.sent.slice(1).map((s) => s.text)).toEqual(["Only the owner can answer this.", "Pressed once."]);
    expect(passed).toEqual([]);

    // Settled: a bare number means nothing any more and passes on as an ordinary message.
    await ch.settleChoices!(to, id, "✅ Allowed once by the owner");
    expect(p.sent.at(-1)!.text).toBe("✅ Allowed once by the owner");
    await p.inbound(p.message("1", owner));
    expect(passed).toEqual(["500:1"]);
  });

  it("an approval, then a pairing request: the owner's bare 1 is asked back and settles neither; a reply to the approval settles the approval", async () => {
    const { p, ch, pressed, passed } = await numbered();
    const approval = await ch.askChoices!(to, question);
    await ch.askChoices!(to, pairing);
    const [approvalMessage, pairingMessage] = p.sent.map((s) => s.id);
    await p.inbound(p.message("1", owner));
    await expect.poll(() => p.sent.length).toBe(3);
    expect(p.sent[2]!.text).toBe("Which one? Reply to the question you mean.");
    expect(pressed()).toEqual([]);
    expect(passed).toEqual([]);

    await p.inbound(p.message("1", owner, "500", approvalMessage));
    await expect.poll(() => pressed()).toEqual(["ap-1:once"]);
    await ch.settleChoices!(to, approval, "✅ Allowed once by the owner.");
    // The pairing request is still open, and still takes no bare number (now the only one open).
    await p.inbound(p.message("1", owner));
    await expect.poll(() => p.sent.length).toBe(6);
    expect(p.sent.slice(3).map((s) => s.text)).toEqual(["Pressed once.", "✅ Allowed once by the owner.", "Reply to the question itself to answer it: who may talk to Hearth is never decided by a bare number."]);
    expect(pressed()).toEqual(["ap-1:once"]);
    await p.inbound(p.message("2", owner, "500", pairingMessage));
    await expect.poll(() => pressed()).toEqual(["ap-1:once", "pair-1:deny"]);
  });

  it("a reply to the older of two questions settles it, whoever's the newer; a reply to a settled one is told so and answers no other", async () => {
    const { p, ch, pressed } = await numbered();
    const older = await ch.askChoices!(to, question);
    await ch.askChoices!(to, { ...question, key: "ap-2" });
    const [olderMessage] = p.sent.map((s) => s.id);
    await p.inbound(p.message("2", owner, "500", olderMessage));
    await expect.poll(() => pressed()).toEqual(["ap-1:deny"]);
    await ch.settleChoices!(to, older, "❌ Denied by the owner.");
    await p.inbound(p.message("1", owner, "500", olderMessage));
    await expect.poll(() => p.sent.at(-1)!.text).toBe("This request is no longer open.");
    // A number the question does not offer, quoting it: told which it offers.
    await p.inbound(p.message("7", owner, "500", p.sent[1]!.id));
    await expect.poll(() => p.sent.at(-1)!.text).toBe("Reply with one of its numbers, 1 to 2.");
    expect(pressed()).toEqual(["ap-1:deny"]);
    // Now the only one open: a bare number takes it.
    await p.inbound(p.message("1", owner));
    await expect.poll(() => pressed()).toEqual(["ap-1:deny", "ap-2:once"]);
  });

  it("a number out of range, other text, a message with a file, or another chat's reply passes on untouched", async () => {
    const { p, ch, presses, passed } = await numbered();
    await ch.askChoices!(to, question);
    await p.inbound(p.message("3", owner));
    await p.inbound(p.message("1 please", owner));
    await p.inbound(p.message("1", owner, "600"));
    await p.inbound({ ...p.message("1", owner), attachments: [{ kind: "image", name: "a.jpg", mime: "image/jpeg", fetch: async () => new Uint8Array() }] });
    expect(passed).toEqual(["500:3", "500:1 please", "600:1", "500:1"]);
    expect(presses).toEqual([]);
  });
});

describe("no edits: the answer whole, in parts, once", () => {
  it("shows nothing while the answer streams, then sends it split at the platform's length", async () => {
    const p = plainPlatform();
    const ch = withFallbacks(p.channel, PLAIN);
    const reply = ch.openReply(to);
    reply.textDelta("first words ");
    expect(p.sent).toEqual([]);
    const answer = "one two three four five six seven eight nine ten eleven twelve thirteen";
    await reply.finish(answer);
    expect(p.sent.every((s) => s.text.length <= 40)).toBe(true);
    expect(p.sent.length).toBeGreaterThan(1);
    expect(p.sent.map((s) => s.text).join(" ")).toBe(answer);
  });

  it("after a restart, the parts the journal has are not sent again", async () => {
    const p = plainPlatform();
    const ch = withFallbacks(p.channel, PLAIN);
    const answer = "one two three four five six seven eight nine ten eleven twelve thirteen";
    const created: Array<[number, string]> = [];
    const journal = (had: string[]): ReplyJournal => ({ key: "r1", messageIds: had, messageCreated: (i, id) => void created.push([i, id]) });
    await ch.openReply(to, journal([])).finish(answer);
    const all = p.sent.map((s) => s.text);
    p.sent.length = 0;
    await ch.openReply(to, journal(["r1:0"])).finish(answer);
    expect(p.sent.map((s) => s.text)).toEqual(all.slice(1));
    expect(created.slice(0, all.length)).toEqual(all.map((_, i) => [i, `r1:${i}`]));
  });
});

it("no edits: the chat shows typing while the whole answer is written, and no more once it is sent", async () => {
  vi.useFakeTimers();
  try {
    const p = plainPlatform();
    const typing: DeliveryTarget[] = [];
    p.channel.showActivity = async (t) => void typing.push(t as DeliveryTarget);
    const reply = withFallbacks(p.channel, PLAIN).openReply(to);
    reply.textDelta("Almost there");
    await vi.advanceTimersByTimeAsync(8_000);
    expect(typing).toEqual([to, to, to]);
    await reply.finish("Almost there.");
    await vi.advanceTimersByTimeAsync(20_000);
    expect(typing).toHaveLength(3);
    expect(p.sent.map((s) => s.text)).toEqual(["Almost there."]);
  } finally {
    vi.useRealTimers();
  }
});

describe("a part sent but not yet journaled when the daemon died", () => {
  it("is sent again with the same message key, which a platform that lets the sender pick ids turns into the same message", async () => {
    const keys: Array<string | undefined> = [];
    const p = plainPlatform();
    const channel: Channel = { ...p.channel, send: async (_to, _text, meta) => void keys.push(meta?.messageKey) };
    const ch = withFallbacks(channel, PLAIN);
    const journal: ReplyJournal = { key: "r7", messageIds: [], messageCreated: () => {} };
    await ch.openReply(to, journal).finish("short answer");
    // The restart finds nothing journaled (the crash came between the send and the record).
    await ch.openReply(to, journal).finish("short answer");
    expect(keys).toEqual(["r7:0", "r7:0"]);
    const { messageIdOf } = await import("../../src/channels/whatsapp/channel.ts");
    expect(messageIdOf("r7:0:0")).toBe(messageIdOf("r7:0:0"));
    expect(messageIdOf("r7:0:0")).toMatch(/^3EB0[0-9A-F]{18}$/);
    expect(messageIdOf("r7:0:0")).not.toBe(messageIdOf("r7:1:0"));
  });
});

it("a platform with buttons and edits is used as it is", () => {
  const p = plainPlatform();
  const rich: Channel = { ...p.channel, askChoices: async () => "1" };
  expect(withFallbacks(rich, { ...PLAIN, edits: true, buttons: true })).toBe(rich);
});
