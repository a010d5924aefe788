// The heartbeat through a real gateway and the fake model: its request does not grow with
// main's transcript, HEARTBEAT_OK leaves main untouched, a delivered heartbeat is part of main,
// the prefix is cached for an hour on the cheap model, and it pauses when the owner is away.
import { existsSync, mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import type { Message } from "../../src/agent/messages.ts";
import { Transcript } from "../../src/agent/transcript.ts";
import { homePaths } from "../../src/config/home.ts";
import { silentLogger } from "../../src/process/log.ts";
import { startFakeModel, text, type FakeModel, type RecordedRequest } from "../support/fake-model.ts";
import { startTestGateway, type TestGateway } from "../support/test-gateway.ts";
import { FakeTime } from "./fakes.ts";

const START = "2026-11-23T09:00:00Z";
const HALF_HOUR = 30 * 60_000;

let fake: FakeModel | undefined;
let gw: TestGateway | undefined;
const homes: string[] = [];
afterEach(async () => {
  await gw?.stop();
  gw = undefined;
  await fake?.close();
  fake = undefined;
  for (const h of homes.splice(0)) rmSync(h, { recursive: true, force: true });
});

/** A home whose main transcript holds `n` exchanges, the i-th marked "item-<i>", days before START. */
function homeWithExchanges(n: number): string {
  const home = mkdtempSync(join(tmpdir(), "hearth-hb-"));
  homes.push(home);
  const t = Transcript.open(homePaths(home).sessionFile("main"), "main", silentLogger, () => Date.parse("2026-11-01T08:00:00Z"));
  for (let i = 0; i < n; i++) {
    const ts = Date.parse("2026-11-01T08:00:00Z") + i * 60_000;
    const asked: Message = { role: "user", kind: "message", text: `[2026-11-01 08:00 (Sun), UTC · telegram · Alice]\nPlease note item-${pad(i)}: the plumber's number is 0170 555 ${pad(i)}.`, ts };
    const said: Message = { role: "assistant", content: [{ type: "text", text: `Noted item-${pad(i)}, the plumber's number. I will remind you when the boiler needs a check.` }], stop: "end_turn", model: "claude-sonnet-5-5", usage: { inputTokens: 10, outputTokens: 10, cacheReadTokens: 0, cacheCreationTokens: 0 }, ts };
    t.append({ type: "message", message: asked });
    t.append({ type: "message", message: said });
  }
  return home;
}

const pad = (i: number) => String(i).padStart(4, "0");

async function start(home: string | undefined, config: Record<string, unknown> = {}): Promise<{ time: FakeTime; gw: TestGateway; fake: FakeModel }> {
  fake = await startFakeModel();
  const time = new FakeTime(START);
  gw = await startTestGateway(fake.url, {
    ...(home ? { home } : {}),
    clock: time.clock,
    timers: time,
    schedule: true,
    config: { timezone: "UTC", heartbeat: { activeHours: { start: "00:00", end: "00:00" }, ...config }, agent: {} },
  });
  return { time, gw, fake };
}

/** Advances to the next tick and waits until main's lane is free again (the reply delivered). */
async function tick(time: FakeTime, g: TestGateway, f: FakeModel, reply: string): Promise<RecordedRequest> {
  const before = f.requests.length;
  f.enqueue(text(reply));
  time.advance(HALF_HOUR);
  await f.waitForRequests(before + 1, 20_000);
  await idle(g);
  return f.requests[before]!;
}

async function idle(g: TestGateway): Promise<void> {
  const deadline = Date.now() + 20_000;
  while (g.gateway.context.lanes.snapshot().some((l) => l.running || l.queued > 0)) {
    if (Date.now() > deadline) throw new Error("main's lane did not become idle");
    await new Promise((r) => setTimeout(r, 10));
  }
}

describe("the heartbeat's light session", () => {
  it("sends the same request size with 0, 50 and 500 prior main exchanges, and no main message older than the digest", async () => {
    const sizes: number[] = [];
    for (const n of [0, 50, 500]) {
      const home = homeWithExchanges(n);
      const { time, gw: g, fake: f } = await start(home);
      const req = await tick(time, g, f, "HEARTBEAT_OK");
      sizes.push(req.rawBody.length);
      const body = req.rawBody;
      const seen = [...body.matchAll(/item-(\d{4})/g)].map((m) => Number(m[1]));
      const expected = n === 0 ? [] : [n - 5, n - 4, n - 3, n - 2, n - 1];
      expect([...new Set(seen)]).toEqual(expected);
      await g.stop();
      gw = undefined;
      await f.close();
      fake = undefined;
    }
    expect(Math.max(...sizes) - Math.min(...sizes)).toBeLessThanOrEqual(2048);
    // 50 and 500 exchanges: the same five exchanges' worth of bytes, give or take the digits.
    expect(Math.abs(sizes[2]! - sizes[1]!)).toBeLessThanOrEqual(10);
  });

  it("asks the heartbeat model with a 1-hour cache on its prefix; a chat keeps the 5-minute cache on the main model", async () => {
    const { time, gw: g, fake: f } = await start(undefined);
    const req = await tick(time, g, f, "HEARTBEAT_OK");
    expect(req.body.model).toBe("claude-haiku-4-5");
    expect(req.body.max_tokens).toBe(1024);
    expect(req.body.tools).toBeUndefined();
    expect(req.body.system.map((b: { cache_control?: unknown }) => b.cache_control)).toEqual([
      { type: "ephemeral", ttl: "1h" },
      { type: "ephemeral", ttl: "1h" },
    ]);
    expect(req.body.system[1].text).toContain("## HEARTBEAT.md\n# Heartbeat\n\nGo through this list quickly.");
    expect(req.body.messages).toHaveLength(1);
    expect(req.body.messages[0].content).toEqual([
      { type: "text", text: "[2026-11-23 09:30 (Mon), UTC · heartbeat · Hearth]\nHeartbeat check-in: go through the checklist now.", cache_control: { type: "ephemeral" } },
    ]);

    f.enqueue(text("Hello!"));
    const id = g.channel.say({ chat: "1", type: "dm", sender: "1", isOwner: true, text: "hi" });
    await f.waitForRequests(2, 20_000);
    const chat = f.requests[1]!;
    expect(chat.body.model).toBe("claude-sonnet-5-5");
    expect(chat.body.system.map((b: { cache_control?: unknown }) => b.cache_control)).toEqual([{ type: "ephemeral" }]);
    await idle(g);
    expect(g.channel.replies.get(id)).toEqual(["Hello!"]);
  });

  it("offers only the tools listed in heartbeat.tools, on its own model and answer length", async () => {
    const { time, gw: g, fake: f } = await start(undefined, { tools: ["memory_search"], model: "claude-sonnet-5-5", maxTokens: 300 });
    const req = await tick(time, g, f, "HEARTBEAT_OK");
    expect(req.body.tools.map((t: { name: string }) => t.name)).toEqual(["memory_search"]);
    expect(req.body.model).toBe("claude-sonnet-5-5");
    expect(req.body.max_tokens).toBe(300);
  });

  it("leaves main's transcript and the daily log byte for byte unchanged on HEARTBEAT_OK", async () => {
    const home = homeWithExchanges(3);
    const mainFile = homePaths(home).sessionFile("main");
    const before = readFileSync(mainFile);
    const { time, gw: g, fake: f } = await start(home);
    await tick(time, g, f, "HEARTBEAT_OK");
    await tick(time, g, f, "**HEARTBEAT_OK**");
    expect(f.requests).toHaveLength(2);
    expect(readFileSync(mainFile).equals(before)).toBe(true);
    expect(existsSync(join(g.config.workspace, "memory", "2026-11-23.md"))).toBe(false);
    expect(g.channel.replies.size).toBe(0);
    // The ticks are in the heartbeat's own transcript.
    expect(readFileSync(homePaths(home).sessionFile("heartbeat"), "utf8")).toContain('"HEARTBEAT_OK"');
  });

  it("delivers a message to the owner and adds it to main, where the next chat request sees it", async () => {
    const { time, gw: g, fake: f } = await start(undefined);
    f.enqueue(text("Noted: dentist at 15:00."));
    const id = g.channel.say({ chat: "1", type: "dm", sender: "1", isOwner: true, text: "My dentist appointment is at 15:00 today." });
    await f.waitForRequests(1, 20_000);
    await idle(g);
    expect(g.channel.replies.get(id)).toEqual(["Noted: dentist at 15:00."]);

    await tick(time, g, f, "Your dentist appointment is at 15:00: leave by 14:30.");
    expect(g.channel.replies.get("send:1")).toEqual(["Your dentist appointment is at 15:00: leave by 14:30."]);
    const main = readFileSync(homePaths(g.home).sessionFile("main"), "utf8").trim().split("\n").map((l) => JSON.parse(l));
    const last = main.at(-1);
    expect(last.type).toBe("message");
    expect(last.message.role).toBe("assistant");
    expect(last.message.content).toEqual([{ type: "text", text: "Your dentist appointment is at 15:00: leave by 14:30." }]);

    f.enqueue(text("You're welcome."));
    g.channel.say({ chat: "1", type: "dm", sender: "1", isOwner: true, text: "thanks" });
    await f.waitForRequests(3, 20_000);
    const messages = f.requests[2]!.body.messages as Array<{ role: string; content: Array<{ type: string; text?: string }> }>;
    expect(messages.map((m) => m.role)).toEqual(["user", "assistant", "user"]);
    expect(messages[1]!.content.map((b) => b.text)).toEqual(["Noted: dentist at 15:00.", "Your dentist appointment is at 15:00: leave by 14:30."]);
    await idle(g);
  });

  it("sees today's log as it is at each tick, while an idle day keeps the same prefix", async () => {
    const { time, gw: g, fake: f } = await start(undefined);
    const first = await tick(time, g, f, "HEARTBEAT_OK");
    const second = await tick(time, g, f, "HEARTBEAT_OK");
    expect(JSON.stringify(second.body.system)).toBe(JSON.stringify(first.body.system));
    f.enqueue(text("I'll remind you at 17:00."));
    g.channel.say({ chat: "1", type: "dm", sender: "1", isOwner: true, text: "Remind me to call the garage at 17:00." });
    await f.waitForRequests(3, 20_000);
    await idle(g);
    const third = await tick(time, g, f, "HEARTBEAT_OK");
    const system = third.body.system[0].text as string;
    expect(system).toContain("## memory/2026-11-23.md (today)");
    expect(system).toContain("> Remind me to call the garage at 17:00.");
  });

  it("pauses after heartbeat.pauseAfterIdle without a message from the owner and resumes with the next one", async () => {
    const { time, gw: g, fake: f } = await start(undefined, { pauseAfterIdle: "2h" });
    f.enqueue(text("Hi."));
    g.channel.say({ chat: "1", type: "dm", sender: "1", isOwner: true, text: "hello" });
    await f.waitForRequests(1, 20_000);
    await idle(g);
    f.setDefault(text("HEARTBEAT_OK"));
    for (let i = 0; i < 3; i++) {
      time.advance(HALF_HOUR);
      await f.waitForRequests(2 + i, 20_000);
      await idle(g);
    }
    time.advance(HALF_HOUR); // two hours since the owner wrote
    time.advance(5 * HALF_HOUR);
    await new Promise((r) => setTimeout(r, 200));
    expect(f.requests).toHaveLength(4);

    f.enqueue(text("Back."));
    g.channel.say({ chat: "1", type: "dm", sender: "1", isOwner: true, text: "I'm back" });
    await f.waitForRequests(5, 20_000);
    await idle(g);
    time.advance(HALF_HOUR);
    await f.waitForRequests(6, 20_000);
    expect(f.requests[5]!.body.model).toBe("claude-haiku-4-5");
    await idle(g);
  });
});
