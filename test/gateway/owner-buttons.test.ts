// The owner's buttons besides approvals, through a real gateway in this process with a channel
// that has buttons: a budget notice offers to raise today's limit, and only the owner's press does.
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { waitFor } from "../support/daemon.ts";
import { startFakeModel, text, type FakeModel } from "../support/fake-model.ts";
import { ButtonChannel } from "../support/test-channel.ts";
import { startTestGateway, type TestGateway } from "../support/test-gateway.ts";


let fake: FakeModel;
let gw: TestGateway;
beforeEach(async () => {
  fake = await startFakeModel();
});
afterEach(async () => {
  await gw?.stop();
  await fake.close();
});

describe("owner buttons", () => {
  it("a budget notice offers \"Raise today's limit by $N\"; a stranger's press changes nothing, the owner's raises the limit", async () => {
    const channel = new ButtonChannel();
    gw = await startTestGateway(fake.url, { config: { budget: { daily: 2 } }, memory: false, channel });
    expect(gw.channel).toBe(channel);
    fake.enqueue(text("An expensive answer.", { usage: { input_tokens: 2_000_000, output_tokens: 10 } }));
    channel.deliver({ id: "m1", channel: "telegram", chat: { id: "1", type: "dm", members: ["1"] }, sender: { id: "1", name: "Ann", isOwner: true }, text: "hello", addressed: true, receivedAt: Date.now() });
    await waitFor("the budget notice", () => channel.questions.length === 1);
    const { q, to } = channel.questions[0]!;
    expect(to).toEqual({ channel: "telegram", chatId: "1" });
    expect(q.choices).toEqual([{ id: "raise", label: "Raise today's limit by $1.00" }]);
    expect(q.kind).toBe("setting");
    const press = (isOwner: boolean) => channel.handler!({ key: q.key, choiceId: "raise", channel: "telegram", by: { id: isOwner ? "1" : "2", name: isOwner ? "Ann" : "Bob", isOwner } });
    expect(await press(false)).toBe("Only the owner can decide this.");
    expect(gw.gateway.context.budget.status().today.limitUsd).toBe(2);
    expect(await press(true)).toBe("Raised.");
    expect(channel.questions[0]!.settled).toBe(`${q.text}\n\n✅ Ann raised today's limit by $1.00, until midnight.`);
    expect(gw.gateway.context.budget.status().today.limitUsd).toBe(3);
    expect(await press(true)).toBe("This request is no longer open.");
  });

  it("a stranger's pairing request is asked as a question about access, which no bare number may settle where there are no buttons", async () => {
    const channel = new ButtonChannel();
    gw = await startTestGateway(fake.url, { memory: false, channel });
    fake.enqueue(text("Hi Ann."));
    channel.deliver({ id: "m1", channel: "telegram", chat: { id: "1", type: "dm", members: ["1"] }, sender: { id: "1", name: "Ann", isOwner: true }, text: "hello", addressed: true, receivedAt: Date.now() });
    await waitFor("the answer", () => channel.replies.has("m1"));
    channel.deliver({ id: "m2", channel: "telegram", chat: { id: "7", type: "dm", members: ["7"] }, sender: { id: "7", name: "Sam", isOwner: false }, text: "let me in", addressed: true, receivedAt: Date.now() });
    await waitFor("the pairing request", () => channel.questions.length === 1);
    const { q, to } = channel.questions[0]!;
    expect(to).toEqual({ channel: "telegram", chatId: "1" });
    expect(q.text).toMatch(/^🤝 Sam \(telegram:7\) asks to talk with you privately\. Their pairing code: [A-Z0-9]{8}$/);
    expect(q.kind).toBe("access");
  });

  it("other notices to the owner (a failed scheduled backup) come as plain messages, without the raise button", async () => {
    // The owner's chat is known from an earlier run.
    const home = mkdtempSync(join(tmpdir(), "hearth-owner-"));
    try {
      const first = new ButtonChannel();
      gw = await startTestGateway(fake.url, { home, config: { budget: { daily: 2 } }, memory: false, channel: first });
      fake.enqueue(text("Hi."));
      const id = "m1";
      first.deliver({ id, channel: "telegram", chat: { id: "1", type: "dm", members: ["1"] }, sender: { id: "1", name: "Ann", isOwner: true }, text: "hello", addressed: true, receivedAt: Date.now() });
      await waitFor("the answer", () => first.replies.has(id));
      await gw.stop();
      // Then the scheduled backup fails: its folder cannot be made.
      const channel = new ButtonChannel();
      gw = await startTestGateway(fake.url, { home, config: { budget: { daily: 2 }, backup: { every: "1m", keep: 1, dir: "/dev/null/backups" } }, memory: false, schedule: true, channel });
      await waitFor("the backup notice", () => (channel.replies.get("send:1") ?? []).some((t) => t.startsWith("The scheduled backup failed")));
      expect(channel.questions).toEqual([]);
    } finally {
      await gw.stop();
      rmSync(home, { recursive: true, force: true });
    }
  });
});
