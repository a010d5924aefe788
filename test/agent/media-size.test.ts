// The context budget counts what the attachments of a request cost: a picture still shown by
// its size (width × height / 750, at most 1,600 tokens), a PDF by its pages, a text file by its
// bytes; a note counts as the text it is. The calibration takes the pictures off first.
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import sharp from "sharp";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { ContextBudget } from "../../src/agent/context-budget.ts";
import { imageSize, imageTokens, mediaLoad } from "../../src/agent/media-size.ts";
import type { MediaRef, Message } from "../../src/agent/messages.ts";
import type { ModelRequest } from "../../src/agent/providers/model.ts";
import { silentLogger } from "../../src/process/log.ts";
import { pdf, picture } from "../support/media-files.ts";

let dir: string;
beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), "hearth-media-size-"));
});
afterEach(() => rmSync(dir, { recursive: true, force: true }));

const usage = { inputTokens: 0, outputTokens: 0, cacheReadTokens: 0, cacheCreationTokens: 0 };

function stored(name: string, bytes: Uint8Array, kind: MediaRef["kind"], mime: string): MediaRef {
  const file = join(dir, name);
  writeFileSync(file, bytes);
  return { kind, path: `media/2026-11/${name}`, file, mime, name };
}

const turn = (i: number, media?: MediaRef[]): Message => ({ role: "user", kind: "message", text: `look ${i}`, ...(media ? { media } : {}), ts: i });
const answer = (i: number): Message => ({ role: "assistant", content: [{ type: "text", text: `seen ${i}` }], stop: "end_turn", model: "m", usage, ts: i });
const request = (messages: Message[]): ModelRequest => ({ system: [{ text: "You are Hearth." }], tools: [], messages, maxTokens: 100, mediaKeepTurns: 3 });

const budget = () =>
  new ContextBudget({
    window: 200_000,
    model: { model: "m", stream: async () => ({ type: "error", error: { kind: "unknown", model: "m", message: "no" }, partial: [] }) },
    maxTokens: 100,
    log: silentLogger,
    clock: () => 0,
    record: () => {},
  });

describe("what attachments cost in the window", () => {
  it("reads the size of a PNG, JPEG, GIF and WebP (lossy and lossless) from its header", async () => {
    for (const format of ["png", "jpeg", "gif", "webp"] as const) {
      const bytes = await sharp({ create: { width: 123, height: 45, channels: 3, background: { r: 1, g: 2, b: 3 } } }).toFormat(format).toBuffer();
      expect([format, imageSize(bytes)]).toEqual([format, { width: 123, height: 45 }]);
    }
    const lossless = await sharp({ create: { width: 321, height: 54, channels: 4, background: { r: 1, g: 2, b: 3, alpha: 0.5 } } }).webp({ lossless: true }).toBuffer();
    expect(imageSize(lossless)).toEqual({ width: 321, height: 54 });
    expect(imageSize(Buffer.from("not a picture at all"))).toBeNull();
  });

  it("a picture costs width × height / 750 after the long edge is scaled to 1,568 px, at most 1,600; an unknown one the most", () => {
    expect(imageTokens({ width: 1000, height: 750 })).toBe(1000);
    expect(imageTokens({ width: 200, height: 150 })).toBe(40);
    expect(imageTokens({ width: 4000, height: 300 })).toBe(Math.ceil((1568 * 117.6) / 750));
    expect(imageTokens({ width: 3000, height: 3000 })).toBe(1600);
    expect(imageTokens(null)).toBe(1600);
  });

  it("counts only the attachments still shown: a picture that became a note costs nothing more than its reference", async () => {
    const big = stored("big.png", await picture("png", 1000, 750), "image", "image/png");
    // Same name length: the two requests differ only in the picture's size.
    const tiny = stored("bit.png", await picture("png", 100, 75), "image", "image/png");
    const b = budget();
    const shown = (ref: MediaRef) => b.estimate(request([turn(0), answer(0), turn(1, [ref])]));
    expect(shown(big) - shown(tiny)).toBe(1000 - 10);
    // Three turns later the picture is a note (a new block began at turn 3).
    const later = (ref: MediaRef) => b.estimate(request([turn(0, [ref]), answer(0), turn(1), answer(1), turn(2), answer(2), turn(3)]));
    expect(later(big) - later(tiny)).toBe(0);
    expect(mediaLoad([turn(0, [big]), answer(0), turn(1), answer(1), turn(2), answer(2), turn(3)], 3)).toEqual({ tokens: 0, bytes: 0 });
  });

  it("a tool's picture (base64 in its result) counts as a picture, not as its bytes", async () => {
    const png = Buffer.from(await picture("png", 1000, 750)).toString("base64");
    const call: Message = { role: "assistant", content: [{ type: "tool_call", id: "t1", name: "read", input: { path: "chart.png" } }], stop: "tool_use", model: "m", usage, ts: 1 };
    const result = (images: Array<{ type: "image"; mediaType: string; data: string }>): Message => ({ role: "tool_result", toolCallId: "t1", toolName: "read", content: "The picture chart.png:", images, isError: false, ts: 1 });
    const b = budget();
    const withPicture = b.estimate(request([turn(0), call, result([{ type: "image", mediaType: "image/png", data: png }])]));
    const without = b.estimate(request([turn(0), call, result([])]));
    expect(withPicture - without).toBe(1000);
  });

  it("a PDF costs 3,000 tokens a page; a text file its bytes", () => {
    const doc = stored("doc.pdf", pdf(4), "document", "application/pdf");
    const notes = stored("notes.txt", new TextEncoder().encode("x".repeat(10_000)), "text", "text/plain");
    const load = mediaLoad([turn(0, [doc, notes])]);
    expect(load.tokens).toBe(12_000);
    expect(load.bytes).toBe(10_000);
  });

  it("calibrates on the request's text only: three pictures do not make every later byte a token", async () => {
    const refs = await Promise.all([0, 1, 2].map(async (i) => stored(`p${i}.png`, await picture("png", 1000, 750), "image", "image/png")));
    const withPictures = request([turn(0, [refs[0]!]), answer(0), turn(1, [refs[1]!]), answer(1), turn(2, [refs[2]!])]);
    const textOnly = request([turn(0), answer(0), turn(1), answer(1), turn(2)]);
    const b = budget();
    const textTokens = 150;
    // The API counted the three pictures (3 × 1,000) and the text.
    b.observe(withPictures, { ...usage, inputTokens: 3000 + textTokens });
    expect(b.estimate(withPictures)).toBeGreaterThanOrEqual(3000 + textTokens);
    expect(b.estimate(withPictures)).toBeLessThanOrEqual(3000 + textTokens + 60);
    // The same turns without pictures: the text's share, not the pictures' too.
    expect(b.estimate(textOnly)).toBeLessThan(textTokens);
    expect(b.calibration()!.tokens).toBe(textTokens);
  });
});
