// The router in a real in-process gateway: what is refused before it can cost anything.
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import type { InboundMessage } from "../../src/channels/channel.ts";
import type { Gateway } from "../../src/gateway/gateway.ts";
import { MAX_MESSAGE_CHARS } from "../../src/gateway/router.ts";
import { waitFor } from "../support/daemon.ts";
import { startFakeModel, text, type FakeModel } from "../support/fake-model.ts";
import type { TestChannel } from "../support/test-channel.ts";
import { startTestGateway, type TestGateway } from "../support/test-gateway.ts";

let fake: FakeModel;
let test: TestGateway;
let gateway: Gateway;
let channel: TestChannel;
beforeEach(async () => {
  fake = await startFakeModel();
  test = await startTestGateway(fake.url, { memory: false });
  ({ gateway, channel } = test);
});
afterEach(async () => {
  await test.stop();
  await fake.close();
});

const dm = (id: string, text: string): InboundMessage => ({
  id,
  channel: "telegram",
  chat: { id: "1", type: "dm", members: ["1"] },
  sender: { id: "1", name: "Owner", isOwner: true },
  text,
  addressed: true,
  receivedAt: Date.now(),
});

describe("router", () => {
  it("refuses a 1 MB message with a clear answer, no model call and nothing in the inbox", async () => {
    gateway.deliver(dm("big", "x".repeat(1024 * 1024)));
    await waitFor("the refusal", () => channel.replies.has("big"));
    expect(channel.replies.get("big")![0]).toMatch(/too long for me \(1,048,576 characters; the limit is 100,000\)/);
    expect(MAX_MESSAGE_CHARS).toBe(100_000);
    expect(fake.requests).toHaveLength(0);
    expect(gateway.context.inbox.pending()).toEqual([]);
  });

  it("answers a platform message delivered twice only once", async () => {
    fake.enqueue(text("Once."), text("Twice?"));
    gateway.deliver(dm("m1", "hello"));
    gateway.deliver(dm("m1", "hello"));
    await waitFor("the answer", () => channel.replies.has("m1"));
    await new Promise((r) => setTimeout(r, 200));
    expect(channel.replies.get("m1")).toEqual(["Once."]);
    expect(fake.requests).toHaveLength(1);
  });
});

describe("router: strangers cost nothing", () => {
  let strangers: TestGateway;
  let seq = 0;
  afterEach(async () => {
    await strangers?.stop();
  });

  const from = (sender: string, over: Partial<InboundMessage> = {}): InboundMessage => ({
    id: `s${++seq}`,
    channel: "telegram",
    chat: { id: sender, type: "dm", members: [sender] },
    sender: { id: sender, name: `user${sender}`, isOwner: sender === "1" },
    text: "hello?",
    addressed: true,
    receivedAt: Date.now(),
    ...over,
  });
  const photo = (sender: string) => from(sender, { text: "", unreadableNote: "I can't see pictures yet, sorry." });
  const replyCount = (ch: TestChannel) => [...ch.replies.values()].flat().length;

  it("under allowlist a stranger's text, photo, sticker and commands get no reply; the owner's photo gets the note, without a model call", async () => {
    strangers = await startTestGateway(fake.url, { memory: false, telegram: { dmPolicy: "allowlist" } });
    const ch = strangers.channel;
    for (const m of [from("9"), photo("9"), from("9", { text: "", unreadableNote: "Nice sticker!" }), from("9", { text: "/status" }), from("9", { text: "/start" })]) {
      strangers.gateway.deliver(m);
    }
    const mine = photo("1");
    strangers.gateway.deliver(mine);
    await waitFor("the owner's note", () => ch.replies.has(mine.id));
    await new Promise((r) => setTimeout(r, 200));
    expect(ch.replies.get(mine.id)).toEqual(["I can't see pictures yet, sorry."]);
    expect(replyCount(ch)).toBe(1);
    expect(fake.requests).toHaveLength(0);
    expect(strangers.gateway.context.inbox.pending()).toEqual([]);
  });

  it("under pairing 30 DMs of any kind from one stranger get one reply, the pairing code", async () => {
    strangers = await startTestGateway(fake.url, { memory: false });
    const ch = strangers.channel;
    const first = from("9");
    strangers.gateway.deliver(first);
    await waitFor("the pairing code", () => ch.replies.has(first.id));
    for (let i = 1; i < 30; i++) strangers.gateway.deliver(i % 3 === 0 ? photo("9") : i % 3 === 1 ? from("9", { text: "/start" }) : from("9", { text: `hello ${i}` }));
    await new Promise((r) => setTimeout(r, 300));
    expect(replyCount(ch)).toBe(1);
    expect(ch.replies.get(first.id)![0]).toMatch(/^Hi! I'm a personal assistant and only talk with people my owner has approved\.\n\nYour pairing code: [A-HJKMNP-Z2-9]{8}\n\n/);
    expect(fake.requests).toHaveLength(0);
  });

  it("a model error in a group is told without configuration, keys or files; the owner's DM gets the detail", async () => {
    strangers = await startTestGateway(fake.url, { memory: false, telegram: { groups: { policy: "open" } } });
    const ch = strangers.channel;
    fake.enqueue({ type: "http_error", status: 401 }, { type: "http_error", status: 401 });
    const inGroup = ch.say({ chat: "-50", sender: "7", text: "@bot hi" });
    await waitFor("the group's reply", () => ch.replies.has(inGroup));
    const [groupText] = ch.replies.get(inGroup)!;
    expect(groupText).toBe("Sorry, I can't answer right now because of a problem on my side. My owner can see what went wrong in Hearth's log.");
    expect(groupText).not.toMatch(/config|key|ANTHROPIC|\.json/i);
    const mine = from("1", { text: "hi" });
    strangers.gateway.deliver(mine);
    await waitFor("the owner's reply", () => ch.replies.has(mine.id));
    expect(ch.replies.get(mine.id)).toEqual([
      "The model API rejected the API key (HTTP 401). Set a valid key in ANTHROPIC_API_KEY (in Hearth's .env, or the environment), then restart Hearth.",
    ]);
  });
});
