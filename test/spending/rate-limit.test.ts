// Rate limits for shared scopes through a real in-process gateway: past a sender's or a chat's
// limit a message costs nothing (no model call), one polite refusal per window, and the owner
// is never limited.
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { normalizeMessage, type DiscordMessageFacts } from "../../src/channels/discord/inbound.ts";
import { RateLimiter, rateKeysFor } from "../../src/spending/rate-limit.ts";
import { waitFor } from "../support/daemon.ts";
import { requestText, startFakeModel, text, type FakeModel } from "../support/fake-model.ts";
import type { TestChannel } from "../support/test-channel.ts";
import { startTestGateway, type TestGateway } from "../support/test-gateway.ts";

let fake: FakeModel;
let t: TestGateway | undefined;
beforeEach(async () => {
  fake = await startFakeModel();
  fake.setDefault(text("ok"));
  t = undefined;
});
afterEach(async () => {
  await t?.stop();
  await fake.close();
});

const SENDER_REFUSAL = /^You've sent me a lot of messages in a short time, so I'm taking a break from yours\. I can answer you again in about (59|60) minutes\.$/;

// followup: every accepted message is its own run, so model requests count accepted messages.
const start = (telegram: Record<string, unknown> = {}) => startTestGateway(fake.url, { memory: false, telegram: { queueMode: "followup", groups: { policy: "open" }, ...telegram } });

const settle = () => new Promise((r) => setTimeout(r, 300));
const idle = (t: TestGateway) => waitFor("idle lanes", () => t.gateway.context.lanes.snapshot().every((l) => !l.running && l.queued === 0), 15_000);
const allReplies = (channel: TestChannel, ids: string[]) => ids.map((id) => channel.replies.get(id) ?? []);

describe("rate limits", () => {
  it("20 mentions from one member in a minute: 10 model runs, one refusal, the rest silent; another member is unaffected", async () => {
    t = await start();
    const ids = Array.from({ length: 20 }, (_, i) => t!.channel.say({ chat: "-100", sender: "7", text: `@bot msg-${String(i + 1).padStart(2, "0")}` }));
    // The lanes are idle before the router has handed them anything: wait for the replies first.
    await waitFor("ten answers and the refusal", () => allReplies(t!.channel, ids.slice(0, 11)).every((r) => r.length > 0), 15_000);
    await idle(t);
    await settle();
    expect(fake.requests).toHaveLength(10);
    const seen = fake.requests.map(requestText).join("\n");
    for (let i = 1; i <= 20; i++) expect(seen.includes(`msg-${String(i).padStart(2, "0")}`)).toBe(i <= 10);
    const replies = allReplies(t.channel, ids);
    expect(replies.slice(0, 10)).toEqual(Array(10).fill(["ok"]));
    expect(replies[10]).toHaveLength(1);
    expect(replies[10]![0]).toMatch(SENDER_REFUSAL);
    expect(replies.slice(11)).toEqual(Array(9).fill([]));

    const other = t.channel.say({ chat: "-100", sender: "8", text: "@bot my turn" });
    await waitFor("the other member's answer", () => t!.channel.replies.has(other), 15_000);
    expect(t.channel.replies.get(other)).toEqual(["ok"]);
    expect(fake.requests).toHaveLength(11);
  });

  it("a restart keeps the windows: a member past the limit stays refused, silently, and the file holds the counts", async () => {
    const home = mkdtempSync(join(tmpdir(), "hearth-rate-"));
    try {
      const first = await startTestGateway(fake.url, { home, memory: false, telegram: { queueMode: "followup", groups: { policy: "open", rateLimit: { perSender: 2, perChat: 30, window: "1h" } } } });
      t = first;
      const ids = ["a", "b", "c"].map((x) => first.channel.say({ chat: "-100", sender: "7", text: `@bot ${x}` }));
      await waitFor("two answers and the refusal", () => allReplies(first.channel, ids).every((r) => r.length > 0), 15_000);
      await idle(first);
      await first.stop();
      t = undefined;
      const saved = JSON.parse(readFileSync(join(home, "rate-limits.json"), "utf8")) as { hits: Record<string, number[]>; answeredAt: Record<string, number> };
      expect(Object.values(saved.hits).map((times) => times.length).sort()).toEqual([2, 2]);
      expect(Object.keys(saved.answeredAt)).toHaveLength(1);

      const second = await startTestGateway(fake.url, { home, memory: false, telegram: { queueMode: "followup", groups: { policy: "open", rateLimit: { perSender: 2, perChat: 30, window: "1h" } } } });
      t = second;
      const again = second.channel.say({ chat: "-100", sender: "7", text: "@bot d" });
      await settle();
      expect(second.channel.replies.get(again) ?? []).toEqual([]);
      expect(fake.requests).toHaveLength(2);
    } finally {
      await t?.stop();
      t = undefined;
      rmSync(home, { recursive: true, force: true });
    }
  });

  it("accepts an admitted group message into the inbox before the channel's handler returns", async () => {
    t = await start();
    const id = t.channel.say({ chat: "-100", sender: "7", text: "@bot on disk at once" });
    // No await between say() and this check: the platform may be acknowledged right after.
    expect(t.gateway.context.inbox.has(`telegram:${id}`)).toBe(true);
    await waitFor("the answer", () => t!.channel.replies.has(id), 15_000);
  });

  it("never limits the owner in a group, nor counts the owner against the chat", async () => {
    t = await start({ groups: { policy: "open", rateLimit: { perSender: 2, perChat: 3 } } });
    const ids = Array.from({ length: 6 }, (_, i) => t!.channel.say({ chat: "-100", sender: "1", text: `@bot owner ${i}` }));
    await waitFor("the owner's answers", () => ids.every((id) => t!.channel.replies.has(id)), 15_000);
    await idle(t);
    expect(allReplies(t.channel, ids)).toEqual(Array(6).fill(["ok"]));
    const member = t.channel.say({ chat: "-100", sender: "7", text: "@bot me too" });
    await waitFor("the member's answer", () => t!.channel.replies.has(member), 15_000);
    expect(t.channel.replies.get(member)).toEqual(["ok"]);
    expect(fake.requests).toHaveLength(7);
  });

  it("limits a chat as a whole, and a paired person by dmRateLimit", async () => {
    t = await start({ allowFrom: ["5"], dmPolicy: "allowlist", groups: { policy: "open", rateLimit: { perChat: 3 } }, dmRateLimit: { perSender: 2 } });
    const group = ["7", "8", "9", "10", "11"].map((s) => t!.channel.say({ chat: "-100", sender: s, text: `@bot from ${s}` }));
    const dms = [1, 2, 3].map((i) => t!.channel.say({ chat: "5", type: "dm", sender: "5", text: `dm ${i}` }));
    await waitFor("the group's and the DMs' replies", () => [...group.slice(0, 4), ...dms].every((id) => t!.channel.replies.has(id)), 15_000);
    await idle(t);
    await settle();
    const g = allReplies(t.channel, group);
    expect(g.slice(0, 3)).toEqual(Array(3).fill(["ok"]));
    expect(g[3]).toHaveLength(1);
    expect(g[3]![0]).toMatch(/^This chat has sent me a lot of messages in a short time, so I'm taking a break here\. I can answer again in about (59|60) minutes\.$/);
    expect(g[4]).toEqual([]);
    const d = allReplies(t.channel, dms);
    expect(d.slice(0, 2)).toEqual([["ok"], ["ok"]]);
    expect(d[2]![0]).toMatch(SENDER_REFUSAL);
    expect(fake.requests).toHaveLength(5);
  });
});

describe("RateLimiter", () => {
  it("allows again once the window has moved on, and answers the first refusal of each window", () => {
    const limiter = new RateLimiter();
    const rule = { perSender: 2, perChat: 0, windowMs: 60_000 };
    const at = (ms: number) => limiter.admit("chat", "s", rule, ms);
    expect([at(0), at(1_000)].map((d) => d.type)).toEqual(["allow", "allow"]);
    expect(at(2_000)).toEqual({ type: "refuse", limit: "sender", answer: true, retryInMs: 58_000 });
    expect(at(3_000)).toMatchObject({ type: "refuse", answer: false });
    expect(at(60_000)).toEqual({ type: "allow" });
    expect(at(60_500)).toMatchObject({ type: "refuse", answer: false }); // same refusal window as at 2 s
    expect(at(61_500)).toEqual({ type: "allow" }); // the hit at 1 s left the window
    expect(at(62_500)).toEqual({ type: "refuse", limit: "sender", answer: true, retryInMs: 57_500 }); // a new refusal window
  });
});

describe("rate-limits.json from before threads were folded in", () => {
  it("adds each topic's saved counts to its group's windows", () => {
    const dir = mkdtempSync(join(tmpdir(), "hearth-rate-"));
    try {
      const path = join(dir, "rate-limits.json");
      const now = 10_000_000;
      writeFileSync(
        path,
        JSON.stringify({
          version: 1,
          hits: { "c:telegram:-100:": [now - 3000], "c:telegram:-100:11": [now - 2000], "c:telegram:-100:12": [now - 1000], "s:telegram:-100:11:7": [now - 2000], "s:telegram:-100:12:7": [now - 1000] },
          answeredAt: {},
        }),
      );
      const limiter = new RateLimiter({ path, log: { warn() {}, error() {}, info() {}, debug() {} } as never, clock: () => now });
      const keys = { chat: "telegram:-100:", sender: "telegram:-100::7" };
      expect(limiter.admit(keys.chat, keys.sender, { perSender: 2, perChat: 10, windowMs: 3_600_000 }, now)).toEqual({ type: "refuse", limit: "sender", answer: true, retryInMs: 3_600_000 - 2000 });
      expect(limiter.admit(keys.chat, "telegram:-100::8", { perSender: 10, perChat: 3, windowMs: 3_600_000 }, now)).toEqual({ type: "refuse", limit: "chat", answer: true, retryInMs: 3_600_000 - 3000 });
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});

describe("rateKeysFor", () => {
  const discord = (place: DiscordMessageFacts["place"]) => {
    const r = normalizeMessage(
      {
        id: "m1",
        content: "<@900> hi",
        createdAt: 0,
        author: { id: "7", name: "Bob", bot: false },
        place,
        mentions: { users: [{ id: "900", name: "hearth" }], roleIds: [], everyone: false },
        attachments: [],
        voice: false,
        system: false,
      },
      { bot: { id: "900", name: "hearth" }, ownerIds: ["1"], namePattern: null },
    );
    if (r.kind !== "inbound") throw new Error(r.reason);
    return r.message;
  };

  it("puts a Discord thread in its parent channel's windows, as the adapter reports it", () => {
    const inChannel = rateKeysFor(discord({ kind: "channel", guildId: "g", channelId: "general" }));
    const inThread = rateKeysFor(discord({ kind: "thread", guildId: "g", channelId: "plans", parentId: "general" }));
    expect(inThread).toEqual(inChannel);
    expect(inChannel).toEqual({ chat: "discord:general:", sender: "discord:general::7" });
    expect(rateKeysFor(discord({ kind: "channel", guildId: "g", channelId: "random" })).chat).not.toBe(inChannel.chat);
  });
});
