// A photo in every message, through the real gateway (download, media store, transcript,
// request builder), across a /compact and a restart on the same home: every request shows the
// photos of the current block of media.keepTurns messages (the newest always), and a photo that
// became a note never comes back.
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import type { Message } from "../../src/agent/messages.ts";
import { waitFor } from "../support/daemon.ts";
import { startFakeModel, text, type FakeModel, type RecordedRequest } from "../support/fake-model.ts";
import { picture } from "../support/media-files.ts";
import type { TestChannel } from "../support/test-channel.ts";
import { startTestGateway, type TestGateway } from "../support/test-gateway.ts";

let fake: FakeModel;
let home: string;
let gw: TestGateway | undefined;
beforeEach(async () => {
  fake = await startFakeModel();
  home = mkdtempSync(join(tmpdir(), "hearth-media-blocks-"));
});
afterEach(async () => {
  await gw?.stop();
  await fake.close();
  rmSync(home, { recursive: true, force: true });
});

const K = 3;
const isSummary = (req: RecordedRequest) => JSON.stringify(req.body.system ?? "").includes("You write the running summary");
const isFlush = (req: RecordedRequest) => JSON.stringify(req.body.messages).includes("about to be compacted");

const start = async () => {
  gw = await startTestGateway(fake.url, { home, config: { media: { keepTurns: K } } });
  return gw.channel;
};

async function send(channel: TestChannel, i: number, bytes: Uint8Array, text: string): Promise<void> {
  const id = `m${i}`;
  channel.deliver({
    id,
    channel: "telegram",
    chat: { id: "1", type: "dm", members: ["1"] },
    sender: { id: "1", name: "owner", isOwner: true },
    text,
    addressed: true,
    attachments: [{ kind: "image", name: `photo-${i}.png`, mime: "image/png", size: bytes.length, fetch: async () => bytes }],
    receivedAt: Date.now(),
  });
  await waitFor(`the answer to photo ${i}`, () => channel.replies.has(id), 15_000);
}

describe("photos in a long conversation", () => {
  it("every request holds the current block's photos, 1 to keepTurns, the newest always; none comes back after /compact or a restart", async () => {
    // Usage as the API would count it (about 0.3 tokens a byte), so the budget sees the long texts.
    const usage = (req: RecordedRequest) => ({ usage: { input_tokens: Math.ceil(req.rawBody.length * 0.3) } });
    fake.setDefault({ type: "respond", fn: (req) => (isSummary(req) ? text("Summary: the owner sent photos.") : text("A photo.", usage(req))) });
    const photos = await Promise.all(Array.from({ length: 12 }, (_, i) => picture("png", 40 + i, 30)));
    const byData = new Map(photos.map((p, i) => [Buffer.from(p).toString("base64"), i]));
    const chatRequests = () => fake.requests.filter((r) => !isSummary(r) && !isFlush(r));

    let channel = await start();
    // Long texts, so /compact has older turns to summarise.
    for (let i = 0; i < 7; i++) await send(channel, i, photos[i]!, `photo ${i} ${"details ".repeat(8000)}`);
    const compact = channel.say({ chat: "1", type: "dm", sender: "1", text: "/compact" });
    await waitFor("the compaction", () => channel.replies.has(compact), 15_000);
    expect(channel.replies.get(compact)![0]).toMatch(/^Compacted: /);
    for (let i = 7; i < 9; i++) await send(channel, i, photos[i]!, `photo ${i}`);
    // The compaction kept turns 5 and 6 and marked 6, the first of the current block, as the origin.
    const compaction = readFileSync(join(home, "sessions/main.jsonl"), "utf8").split("\n").filter((l) => l.startsWith('{"type":"compaction"'));
    expect(compaction).toHaveLength(1);
    const kept = (JSON.parse(compaction[0]!) as { messages: Message[] }).messages.flatMap((m) => (m.role === "user" && m.kind === "message" ? [[m.media?.[0]?.name, m.mediaOrigin ?? false]] : []));
    expect(kept).toEqual([["photo-5.png", false], ["photo-6.png", true]]);
    await gw!.stop();
    gw = undefined;
    channel = await start();
    for (let i = 9; i < 12; i++) await send(channel, i, photos[i]!, `photo ${i}`);

    const requests = chatRequests();
    expect(requests).toHaveLength(12);
    let noted = new Set<number>();
    for (const [n, req] of requests.entries()) {
      const blocks = (req.body.messages as Array<{ content: Array<{ type: string; text?: string; source?: { data: string } }> }>).flatMap((m) => m.content);
      const shown = blocks.filter((b) => b.type === "image").map((b) => byData.get(b.source!.data));
      const start = Math.floor(n / K) * K;
      // Blocks of three from the first message: 0-2, 3-5, 6-8, 9-11; the compaction kept 6 on.
      expect([n, shown]).toEqual([n, Array.from({ length: n - start + 1 }, (_, j) => start + j)]);
      const notes = new Set(blocks.flatMap((b) => (b.type === "text" ? [...b.text!.matchAll(/\[picture photo-(\d+)\.png, stored at media\/\d{4}-\d{2}\/[^\]]+: no longer shown\]/g)].map((m) => Number(m[1])) : [])));
      // A note never turns back into a photo; before the cut, every note stays one.
      expect(shown.filter((i) => noted.has(i!))).toEqual([]);
      if (n < 7) for (const i of noted) expect([n, i, notes.has(i)]).toEqual([n, i, true]);
      noted = notes;
    }
  });
});
