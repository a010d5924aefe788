// Attachments in requests: loaded from the stored file by reference, only the last
// media.keepTurns user turns carry images and documents, and a turn that became a one-line
// placeholder stays one (the cached prefix never flips back).
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import type { MediaRef, Message } from "../../src/agent/messages.ts";
import { toApiMessages } from "../../src/agent/providers/anthropic/request.ts";
import { toChatMessages } from "../../src/agent/providers/openai/request.ts";

let dir: string;
beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), "hearth-media-view-"));
});
afterEach(() => rmSync(dir, { recursive: true, force: true }));

const usage = { inputTokens: 0, outputTokens: 0, cacheReadTokens: 0, cacheCreationTokens: 0 };

function imageRef(i: number, bytes = 3000): MediaRef {
  const file = join(dir, `img-${i}.png`);
  writeFileSync(file, Buffer.alloc(bytes, i));
  return { kind: "image", path: `media/2026-11/img-${i}.png`, file, mime: "image/png", name: "photo.jpg" };
}

/** `n` exchanges, each user turn with one picture. */
function session(n: number): Message[] {
  const out: Message[] = [];
  for (let i = 0; i < n; i++) {
    out.push({ role: "user", kind: "message", text: `look ${i}`, media: [imageRef(i)], ts: i });
    out.push({ role: "assistant", content: [{ type: "text", text: `seen ${i}` }], stop: "end_turn", model: "m", usage, ts: i });
  }
  return out;
}

const images = (api: unknown) => JSON.stringify(api).split('"type":"image"').length - 1;

describe("media in requests", () => {
  it("an image is sent as a base64 block of the stored file's bytes, after a line naming where it is stored", () => {
    const ref = imageRef(7);
    const api = toApiMessages([{ role: "user", kind: "message", text: "what is it?", media: [ref], ts: 1 }]);
    expect(api[0]!.content).toEqual([
      { type: "text", text: "what is it?" },
      { type: "text", text: "[picture photo.jpg, stored at media/2026-11/img-7.png]" },
      { type: "image", source: { type: "base64", media_type: "image/png", data: Buffer.alloc(3000, 7).toString("base64") }, cache_control: { type: "ephemeral" } },
    ]);
  });

  it("20 turns with pictures: the request holds exactly keepTurns pictures, the rest are one-line placeholders, and its size stays bounded", () => {
    const twenty = toApiMessages(session(20), { mediaKeepTurns: 3 });
    const forty = toApiMessages(session(40), { mediaKeepTurns: 3 });
    expect(images(twenty)).toBe(3);
    expect(images(forty)).toBe(3);
    expect(JSON.stringify(twenty)).toContain("[picture photo.jpg, stored at media/2026-11/img-0.png: no longer shown]");
    // 20 more turns add only their text and placeholders, never another picture's bytes.
    expect(JSON.stringify(forty).length - JSON.stringify(twenty).length).toBeLessThan(20 * 300);
  });

  it("a placeholder, once chosen, stays: every later request keeps the earlier turns byte for byte", () => {
    const all = session(20);
    let previous: string[] | undefined;
    for (let n = 1; n <= 20; n++) {
      const api = toApiMessages(all.slice(0, n * 2 - 1), { mediaKeepTurns: 3 }).map((m) => JSON.stringify({ ...m, content: (m.content as object[]).map((b) => ({ ...b, cache_control: undefined })) }));
      if (previous) {
        // Everything before the turn that just became a placeholder is unchanged.
        const stable = Math.max(0, previous.length - 2 * 3 + 1);
        expect(api.slice(0, stable)).toEqual(previous.slice(0, stable));
      }
      previous = api;
    }
  });

  it("a stored file that is gone becomes a note, not an error", () => {
    const ref = { ...imageRef(1), file: join(dir, "missing.png") };
    const api = toApiMessages([{ role: "user", kind: "message", text: "x", media: [ref], ts: 1 }]);
    expect((api[0]!.content as Array<{ text?: string }>).map((b) => b.text)).toEqual(["x", "[image photo.jpg: the stored file media/2026-11/img-1.png is missing]"]);
  });

  it("OpenAI: an image_url part for a vision model, a placeholder line for one without", () => {
    const m: Message[] = [{ role: "user", kind: "message", text: "what is it?", media: [imageRef(2, 4)], ts: 1 }];
    const req = { system: [], tools: [], messages: m, maxTokens: 10 };
    expect(toChatMessages(req, { vision: true })).toEqual([
      {
        role: "user",
        content: [
          { type: "text", text: "what is it?" },
          { type: "text", text: "[picture photo.jpg, stored at media/2026-11/img-2.png]" },
          { type: "image_url", image_url: { url: `data:image/png;base64,${Buffer.alloc(4, 2).toString("base64")}` } },
        ],
      },
    ]);
    expect(toChatMessages(req, { vision: false })).toEqual([
      { role: "user", content: "what is it?\n\n[picture photo.jpg, stored at media/2026-11/img-2.png]\n\n[image omitted: this model cannot see images]" },
    ]);
  });
});
