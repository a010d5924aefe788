// Compaction that respects the prompt cache: the memory flush sends the chat's exact system
// prompt and tool list (its prefix is the chat's), the summary carries no cache_control, a
// restart does not compact a session by itself, and a compaction changes the prompt once.
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { waitFor } from "../support/daemon.ts";
import { startFakeModel, text, type FakeModel, type RecordedRequest } from "../support/fake-model.ts";
import type { TestChannel } from "../support/test-channel.ts";
import { startTestGateway, type TestGateway } from "../support/test-gateway.ts";

let fake: FakeModel;
let home: string;
let t: TestGateway | undefined;
beforeEach(async () => {
  fake = await startFakeModel();
  home = mkdtempSync(join(tmpdir(), "hearth-cc-"));
  t = undefined;
});
afterEach(async () => {
  await t?.stop();
  await fake.close();
  rmSync(home, { recursive: true, force: true });
});

const WINDOW = 24_000;
const isSummary = (req: RecordedRequest) => JSON.stringify(req.body.system ?? "").includes("You write the running summary");
const isFlush = (req: RecordedRequest) => JSON.stringify(req.body.messages).includes("about to be compacted");
const isChat = (req: RecordedRequest) => !isSummary(req) && !isFlush(req);
/** The API's count, as the fake reports it: `perByte` tokens per byte of the request body. */
const answering = (perByte: number) => ({
  type: "respond" as const,
  fn: (req: RecordedRequest) => text(isSummary(req) ? "Summary: the owner talked about cats." : isFlush(req) ? "done" : "ok", { usage: { input_tokens: Math.ceil(Buffer.byteLength(req.rawBody) * perByte) } }),
});

async function start() {
  t = await startTestGateway(fake.url, { home, config: { model: { contextWindow: WINDOW, maxTokens: 1024 } } });
  return t.channel;
}

let asked = 0;
async function ask(channel: TestChannel, text: string): Promise<void> {
  // Ids unique across restarts: a new channel's own counter would repeat them (and be deduplicated).
  // The owner's own words: another person's would be outside content, whose flush is skipped.
  const id = channel.say({ chat: "1", type: "dm", sender: "1", isOwner: true, text, id: `m${++asked}` });
  await waitFor(`the answer to ${text.slice(0, 20)}`, () => channel.replies.has(id), 15_000);
}

/** The request's body without cache_control markers: what the provider's cache compares. */
const withoutCacheMarks = (v: unknown): unknown => JSON.parse(JSON.stringify(v, (k, x) => (k === "cache_control" ? undefined : x)));

describe("cache-correct compaction", () => {
  it("the flush request's tools, system prompt and messages start with the chat's last request, byte for byte; the summary has no cache_control", async () => {
    const channel = await start();
    fake.setDefault(answering(0.3));
    for (let i = 0; fake.requests.filter(isFlush).length === 0; i++) {
      expect(i).toBeLessThan(20);
      await ask(channel, `about cats ${i} ${"meow ".repeat(1200)}`);
    }
    const flushAt = fake.requests.findIndex(isFlush);
    const flush = fake.requests[flushAt]!;
    const chat = fake.requests.slice(0, flushAt).findLast(isChat)!;
    expect(JSON.stringify(flush.body.tools)).toBe(JSON.stringify(chat.body.tools));
    expect(JSON.stringify(flush.body.system)).toBe(JSON.stringify(chat.body.system));
    const chatMessages = withoutCacheMarks(chat.body.messages) as unknown[];
    const flushMessages = withoutCacheMarks(flush.body.messages) as unknown[];
    expect(JSON.stringify(flushMessages.slice(0, chatMessages.length))).toBe(JSON.stringify(chatMessages));
    const summary = fake.requests.find(isSummary)!;
    expect(summary.rawBody.includes("cache_control")).toBe(false);
  });

  it("a session at about 50 % of the window does not compact on its first message after a restart", async () => {
    // The API counts fewer tokens per byte than Hearth's uncalibrated estimate assumes.
    fake.setDefault(answering(0.2));
    let channel = await start();
    let tokens = 0;
    for (let i = 0; tokens < 0.5 * WINDOW; i++) {
      expect(i).toBeLessThan(20);
      await ask(channel, `about cats ${i} ${"meow ".repeat(1200)}`);
      tokens = Math.ceil(Buffer.byteLength(fake.requests.at(-1)!.rawBody) * 0.2);
    }
    expect(tokens).toBeLessThan(0.65 * WINDOW);
    expect(fake.requests.filter((r) => !isChat(r))).toEqual([]);
    await t!.stop();
    const before = fake.requests.length;
    channel = await start();
    await ask(channel, "and one more thing");
    expect(fake.requests.length - before).toBe(1);
    expect(isChat(fake.requests.at(-1)!)).toBe(true);
  });

  it("after a compaction the system prompt changes once: the next run's prompt is the compacted run's", async () => {
    const channel = await start();
    fake.setDefault(answering(0.3));
    for (let i = 0; fake.requests.filter(isSummary).length === 0; i++) {
      expect(i).toBeLessThan(20);
      await ask(channel, `about cats ${i} ${"meow ".repeat(1200)}`);
    }
    await ask(channel, "short one");
    await ask(channel, "another short one");
    const summaryAt = fake.requests.findIndex(isSummary);
    const chats = fake.requests.filter(isChat);
    const systems = chats.map((r) => JSON.stringify(r.body.system));
    const firstAfter = chats.findIndex((r) => fake.requests.indexOf(r) > summaryAt);
    expect(systems[firstAfter]).not.toBe(systems[firstAfter - 1]);
    expect(new Set(systems.slice(firstAfter)).size).toBe(1);
  });
});
