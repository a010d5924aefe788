// Bounded memory: a session's in-memory state (transcript view, budget, context snapshot) is
// released after agent.releaseIdleAfter or beyond agent.maxSessionsInMemory, and reloaded from
// disk on its next message as if nothing happened. Sessions showing the same context share
// one copy of its text.
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { waitFor } from "../support/daemon.ts";
import { startFakeModel, text, type FakeModel } from "../support/fake-model.ts";
import { startTestGateway, type TestGateway } from "../support/test-gateway.ts";

let fake: FakeModel;
let t: TestGateway | undefined;
let now = Date.UTC(2026, 10, 23, 10);
beforeEach(async () => {
  fake = await startFakeModel();
  fake.setDefault(text("ok"));
  now = Date.UTC(2026, 10, 23, 10);
});
afterEach(async () => {
  await t?.stop();
  await fake.close();
});

async function start(agent: Record<string, unknown> = {}) {
  t = await startTestGateway(fake.url, { clock: () => now, config: { agent }, telegram: { groups: { policy: "open", requireMention: false } } });
  return t;
}

let n = 0;
async function say(chat: string, words: string): Promise<void> {
  const id = t!.channel.say({ chat, type: "group", sender: "7", text: words, id: `g${++n}` });
  await waitFor(`the answer to ${words}`, () => t!.channel.replies.has(id), 15_000);
}

const runtime = () => t!.gateway.context.runtime;

describe("releasing idle sessions", () => {
  it("releases every session idle for 30 minutes, and a released session continues its conversation", async () => {
    await start();
    for (let i = 1; i <= 5; i++) await say(`-100${i}`, `hello from group ${i}`);
    expect(runtime().sessionsInMemory()).toBe(5);
    expect(runtime().memory!.contextStats().snapshots).toBe(5);
    now += 29 * 60_000;
    expect(runtime().releaseIdle()).toBe(0);
    now += 2 * 60_000;
    expect(runtime().releaseIdle()).toBe(5);
    expect(runtime().sessionsInMemory()).toBe(0);
    expect(runtime().memory!.contextStats()).toEqual({ snapshots: 0, texts: 0 });

    await say("-1003", "and again");
    const last = fake.requests.at(-1)!.body.messages as Array<{ role: string; content: Array<{ text?: string }> }>;
    expect(last.map((m) => m.role)).toEqual(["user", "assistant", "user"]);
    expect(JSON.stringify(last[0])).toContain("hello from group 3");
    expect(JSON.stringify(last[2])).toContain("and again");
    expect(runtime().sessionsInMemory()).toBe(1);
  });

  it("keeps at most agent.maxSessionsInMemory sessions, releasing the least recently used", async () => {
    await start({ maxSessionsInMemory: 3 });
    for (let i = 1; i <= 6; i++) await say(`-200${i}`, `hi ${i}`);
    expect(runtime().sessionsInMemory()).toBe(3);
    expect(runtime().memory!.contextStats().snapshots).toBeLessThanOrEqual(3);
  });

  it("sessions of groups that show the same context share one copy of its text", async () => {
    await start();
    for (let i = 1; i <= 4; i++) await say(`-300${i}`, `first words ${i}`);
    const stats = runtime().memory!.contextStats();
    expect(stats.snapshots).toBe(4);
    expect(stats.texts).toBe(1);
  });
});
