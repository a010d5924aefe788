// Attachments in requests: loaded from the stored file by reference; user turns are grouped in
// blocks of media.keepTurns from a fixed origin and only the current block shows its pictures,
// so a request holds 1..keepTurns of them, grows byte for byte between steps, and a turn that
// became a one-line note stays one — also after a compaction and after a reload from disk.
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { ContextBudget } from "../../src/agent/context-budget.ts";
import type { MediaRef, Message } from "../../src/agent/messages.ts";
import { toApiMessages, toApiParams } from "../../src/agent/providers/anthropic/request.ts";
import type { ModelClient, ModelRequest } from "../../src/agent/providers/model.ts";
import { toChatMessages } from "../../src/agent/providers/openai/request.ts";
import { Transcript } from "../../src/agent/transcript.ts";
import { silentLogger } from "../../src/process/log.ts";
import { PromptCache } from "../support/fake-prompt-cache.ts";

let dir: string;
beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), "hearth-media-view-"));
});
afterEach(() => rmSync(dir, { recursive: true, force: true }));

const usage = { inputTokens: 0, outputTokens: 0, cacheReadTokens: 0, cacheCreationTokens: 0 };
const IMAGE_BYTES = 3000;
const K = 3;

const imageData = (i: number) => Buffer.alloc(IMAGE_BYTES, i).toString("base64");

function imageRef(i: number): MediaRef {
  const file = join(dir, `img-${i}.png`);
  writeFileSync(file, Buffer.alloc(IMAGE_BYTES, i));
  return { kind: "image", path: `media/2026-11/img-${i}.png`, file, mime: "image/png", name: `photo-${i}.jpg` };
}

const turn = (i: number): Message => ({ role: "user", kind: "message", text: `look ${i}`, media: [imageRef(i)], ts: i });
const answer = (i: number): Message => ({ role: "assistant", content: [{ type: "text", text: `seen ${i}` }], stop: "end_turn", model: "m", usage, ts: i });

const call = (i: number, j: number): Message => ({ role: "assistant", content: [{ type: "tool_call", id: `t${i}-${j}`, name: "exec", input: { command: `ls ${j}` } }], stop: "tool_use", model: "m", usage, ts: i });
const result = (i: number, j: number): Message => ({ role: "tool_result", toolCallId: `t${i}-${j}`, toolName: "exec", content: `listing ${j}`, isError: false, ts: i });

/**
 * The view of the request for turn `n` (0-based) of a session where every turn carries a
 * picture, and each answer follows `tools` tool calls.
 */
const viewAt = (n: number, tools = 0): Message[] =>
  Array.from({ length: n + 1 }, (_, i) => (i < n ? [turn(i), ...Array.from({ length: tools }, (_, j) => [call(i, j), result(i, j)]).flat(), answer(i)] : [turn(i)])).flat();

type ApiBlock = { type: string; text?: string; source?: { data: string }; cache_control?: unknown };
const blocksOf = (api: ReturnType<typeof toApiMessages>): ApiBlock[] => api.flatMap((m) => m.content as ApiBlock[]);
const strip = (api: ReturnType<typeof toApiMessages>) => api.map((m) => ({ ...m, content: (m.content as ApiBlock[]).map(({ cache_control: _, ...b }) => b) }));

/** Which turns' pictures a request shows (by their bytes) and which it names in a note. */
function seen(api: ReturnType<typeof toApiMessages>, turns: number): { shown: number[]; noted: number[] } {
  const blocks = blocksOf(api);
  const data = new Set(blocks.filter((b) => b.type === "image").map((b) => b.source!.data));
  const texts = new Set(blocks.flatMap((b) => (b.type === "text" ? [b.text] : [])));
  const all = Array.from({ length: turns }, (_, i) => i);
  return {
    shown: all.filter((i) => data.has(imageData(i))),
    noted: all.filter((i) => texts.has(`[picture photo-${i}.jpg, stored at media/2026-11/img-${i}.png: no longer shown]`)),
  };
}

/** The invariants of one request against the one before it (null for the first). */
function expectStepRule(api: ReturnType<typeof toApiMessages>, newest: number, prev: { shown: number[]; noted: number[] } | null) {
  const now = seen(api, newest + 1);
  expect(now.shown.length).toBeGreaterThanOrEqual(1);
  expect(now.shown.length).toBeLessThanOrEqual(K);
  expect(now.shown).toContain(newest);
  // Every turn is either shown or noted, and the shown ones are the newest, consecutive.
  expect([...now.noted, ...now.shown]).toEqual(Array.from({ length: newest + 1 }, (_, i) => i));
  expect(blocksOf(api).filter((b) => b.type === "image")).toHaveLength(now.shown.length);
  // A note never turns back into a picture.
  for (const i of prev?.noted ?? []) expect(now.noted).toContain(i);
  return now;
}

describe("media in requests", () => {
  it("an image is sent as a base64 block of the stored file's bytes, after a line naming where it is stored", () => {
    const api = toApiMessages([{ role: "user", kind: "message", text: "what is it?", media: [imageRef(7)], ts: 1 }]);
    expect(api[0]!.content).toEqual([
      // The block before the first picture still shown carries a breakpoint: the next step reads up to it.
      { type: "text", text: "what is it?", cache_control: { type: "ephemeral" } },
      { type: "text", text: "[picture photo-7.jpg, stored at media/2026-11/img-7.png]" },
      { type: "image", source: { type: "base64", media_type: "image/png", data: imageData(7) }, cache_control: { type: "ephemeral" } },
    ]);
  });

  it("20 turns with a picture each: every request shows the turns of the current block of 3 (the newest always), notes never turn back, the size stays bounded", () => {
    let prev: { shown: number[]; noted: number[] } | null = null;
    const sizes: number[] = [];
    for (let n = 0; n < 20; n++) {
      const api = toApiMessages(viewAt(n), { mediaKeepTurns: K });
      prev = expectStepRule(api, n, prev);
      // Blocks from the session's first turn: 0-2, 3-5, 6-8…
      const start = Math.floor(n / K) * K;
      expect(prev.shown).toEqual(Array.from({ length: n - start + 1 }, (_, i) => start + i));
      sizes.push(JSON.stringify(api).length);
    }
    // At most three pictures' bytes plus a few hundred bytes of text and notes per turn.
    const picture = imageData(0).length;
    expect(Math.max(...sizes)).toBeLessThan(K * picture + 20 * 300);
    expect(JSON.stringify(toApiMessages(viewAt(39), { mediaKeepTurns: K })).length).toBeLessThan(K * picture + 40 * 300);
  });

  it("between steps a request repeats the one before byte for byte; at a step everything before the previous block stays", () => {
    let prev: ReturnType<typeof strip> | null = null;
    for (let n = 0; n < 20; n++) {
      const api = strip(toApiMessages(viewAt(n), { mediaKeepTurns: K }));
      if (prev) {
        // API messages: turn i is message 2i, its answer 2i + 1.
        const stable = n % K === 0 ? 2 * (n - K) : prev.length;
        expect(api.slice(0, stable)).toEqual(prev.slice(0, stable));
        if (n % K === 0) expect(api[stable]).not.toEqual(prev[stable]);
      }
      prev = api;
    }
  });

  it.each([0, 4])("through the provider's prompt cache, a step writes only the notes and the new turn (%i tool calls a turn): the block before the previous step's first picture is a breakpoint", (tools) => {
    const cache = new PromptCache({ clock: () => 0, minTokens: () => 1 });
    const system = [{ text: "You are Hearth. ".repeat(400), cacheBreakpoint: true }];
    let resent = 0;
    let read = 0;
    let sent = 0; // API messages of the request before
    for (let n = 0; n < 20; n++) {
      const body = toApiParams({ system, tools: [], messages: viewAt(n, tools), maxTokens: 100, mediaKeepTurns: K }, "claude-test");
      // Never more breakpoints than the API takes.
      expect(JSON.stringify(body).split("cache_control").length - 1).toBeLessThanOrEqual(4);
      const used = cache.use(body);
      // What the request before did not hold: the last answer (and its tool loop) and the new turn.
      const fresh = cacheTokens(body.messages.slice(sent));
      sent = body.messages.length;
      if (n > 0) {
        // What is not read is that, plus (at a step) the notes and texts of the block before it:
        // never a picture's bytes a second time.
        expect(used.write5m + used.input - fresh).toBeLessThan(Math.ceil(imageData(0).length / 4));
        resent += used.read + used.write5m + used.input - fresh;
        read += used.read;
      }
    }
    expect(read / resent).toBeGreaterThan(0.95);
  });

  it("with two breakpoints in the system prompt, the messages use the two left: the last block and the step", () => {
    const system = [{ text: "a", cacheBreakpoint: true }, { text: "b", cacheBreakpoint: true }];
    const body = toApiParams({ system, tools: [], messages: viewAt(K), maxTokens: 100, mediaKeepTurns: K }, "claude-test");
    expect(JSON.stringify(body).split("cache_control").length - 1).toBe(4);
  });

  it("after a compaction the kept turns show what they showed, and the blocks go on from the same origin", async () => {
    // A picture still shown counts 1,600 tokens (these test files are no real pictures), so
    // keepTokens decides where the cut falls relative to the current block's first turn.
    for (const [at, keepTokens] of [
      [13, 1], // keeps turn 13 only: the block's first turn (12) is cut away
      [13, 3_300], // keeps 12-13: the cut falls on the block's first turn
      [13, 3_600], // keeps 10-13: 10 and 11 were notes and stay notes
      [14, 4_000], // keeps 12-14, the whole block
      [11, 2_000], // keeps 10-11 of the block 9-11
      [12, 1_000], // keeps 12, a block of one turn
    ] as const) {
      const budget = new ContextBudget({ window: 1_000_000, model: summarizer(), maxTokens: 1_000, log: silentLogger, clock: () => 0, record: () => {}, keepTokens });
      const before = viewAt(at);
      const req: ModelRequest = { system: [], tools: [], messages: before, maxTokens: 100, mediaKeepTurns: K };
      const outcome = await budget.compact(req, { reason: "command", signal: new AbortController().signal });
      if (outcome.type !== "compacted") throw new Error(`expected a compaction, got ${outcome.type}`);
      let view = outcome.record.view;
      expect(view.length).toBeLessThan(before.length);
      // The request right after the compaction shows exactly what the one before it did.
      const kept = view.flatMap((m) => (m.role === "user" && m.kind === "message" ? [m.ts] : []));
      const prevSeen = seen(toApiMessages(before, { mediaKeepTurns: K }), at + 1);
      let prev = seen(toApiMessages(view, { mediaKeepTurns: K }), at + 1);
      expect(prev.shown).toEqual(prevSeen.shown.filter((i) => kept.includes(i)));
      for (let n = at + 1; n < 20; n++) {
        view = [...view, answer(n - 1), turn(n)];
        const api = toApiMessages(view, { mediaKeepTurns: K });
        const now = seen(api, n + 1);
        expect(now.shown.length).toBeGreaterThanOrEqual(1);
        expect(now.shown.length).toBeLessThanOrEqual(K);
        expect(now.shown).toContain(n);
        for (const i of prev.noted) expect(now.noted).toContain(i);
        for (const i of now.shown) expect(prev.noted).not.toContain(i);
        // When the block's first turn survived the cut, the steps fall where they fell before.
        if (view.some((m) => m.role === "user" && m.mediaOrigin)) expect(now.shown).toEqual(seen(toApiMessages(viewAt(n), { mediaKeepTurns: K }), n + 1).shown);
        prev = now;
      }
    }
  });

  it("a restarted daemon reads the compacted view back from disk and sends the same request", async () => {
    const file = join(dir, "main.jsonl");
    const t = Transcript.open(file, "main", silentLogger, () => 0);
    const budget = new ContextBudget({ window: 1_000_000, model: summarizer(), maxTokens: 1_000, log: silentLogger, clock: () => 0, keepTokens: 3_600, record: (c) => t.append({ type: "compaction", reason: c.reason, messages: c.view, summarized: c.summarized, tokensBefore: c.tokensBefore, tokensAfter: c.tokensAfter, ts: 0 }) });
    for (const m of viewAt(13)) t.append({ type: "message", message: m });
    await budget.compact({ system: [], tools: [], messages: t.messages(), maxTokens: 100, mediaKeepTurns: K }, { reason: "command", signal: new AbortController().signal });
    t.append({ type: "message", message: answer(13) });
    t.append({ type: "message", message: turn(14) });
    const live = JSON.stringify(toApiMessages(t.messages(), { mediaKeepTurns: K }));
    const reloaded = Transcript.open(file, "main", silentLogger, () => 0).messages();
    expect(reloaded).toEqual(t.messages());
    expect(reloaded.filter((m) => m.role === "user" && m.mediaOrigin)).toHaveLength(1);
    expect(JSON.stringify(toApiMessages(reloaded, { mediaKeepTurns: K }))).toBe(live);
    expect(seen(JSON.parse(live), 15).shown).toEqual([12, 13, 14]);
  });

  it("a stored file that is gone becomes a note, not an error", () => {
    const ref = { ...imageRef(1), file: join(dir, "missing.png") };
    const api = toApiMessages([{ role: "user", kind: "message", text: "x", media: [ref], ts: 1 }]);
    expect((api[0]!.content as Array<{ text?: string }>).map((b) => b.text)).toEqual(["x", "[image photo-1.jpg: the stored file media/2026-11/img-1.png is missing]"]);
  });

  it("OpenAI: an image_url part for a vision model, a placeholder line for one without", () => {
    const m: Message[] = [{ role: "user", kind: "message", text: "what is it?", media: [imageRef(2)], ts: 1 }];
    const req = { system: [], tools: [], messages: m, maxTokens: 10 };
    expect(toChatMessages(req, { vision: true })).toEqual([
      {
        role: "user",
        content: [
          { type: "text", text: "what is it?" },
          { type: "text", text: "[picture photo-2.jpg, stored at media/2026-11/img-2.png]" },
          { type: "image_url", image_url: { url: `data:image/png;base64,${imageData(2)}` } },
        ],
      },
    ]);
    expect(toChatMessages(req, { vision: false })).toEqual([
      { role: "user", content: "what is it?\n\n[picture photo-2.jpg, stored at media/2026-11/img-2.png]\n\n[image omitted: this model cannot see images]" },
    ]);
  });

  it("OpenAI: the same blocks over 20 turns, and each request repeats the one before between steps", () => {
    let prev: ReturnType<typeof toChatMessages> | null = null;
    for (let n = 0; n < 20; n++) {
      const chat = toChatMessages({ system: [{ text: "sys" }], tools: [], messages: viewAt(n), maxTokens: 10, mediaKeepTurns: K }, { vision: true });
      const urls = JSON.stringify(chat).match(/data:image\/png;base64,[A-Za-z0-9+/=]+/g) ?? [];
      const start = Math.floor(n / K) * K;
      expect(urls).toEqual(Array.from({ length: n - start + 1 }, (_, i) => `data:image/png;base64,${imageData(start + i)}`));
      if (prev && n % K !== 0) expect(chat.slice(0, prev.length)).toEqual(prev);
      prev = chat;
    }
  });
});

/** Tokens of API messages as the simulated prompt cache counts them (fake-prompt-cache.ts). */
function cacheTokens(messages: Array<{ role: string; content: unknown }>): number {
  let tokens = 0;
  for (const m of messages) {
    (m.content as ApiBlock[]).forEach(({ cache_control: _, ...b }, i) => {
      const json = JSON.stringify(i === 0 ? { ...b, role: m.role } : b);
      tokens += Math.max(1, Math.ceil((b.type === "text" ? b.text!.length : json.length) / 4));
    });
  }
  return tokens;
}

/** A model that answers every summary request with one line. */
function summarizer(): ModelClient {
  return {
    model: "m",
    stream: async () => ({ type: "ok", message: { role: "assistant", content: [{ type: "text", text: "They looked at pictures." }], stop: "end_turn", model: "m", usage, ts: 0 } }),
  };
}
