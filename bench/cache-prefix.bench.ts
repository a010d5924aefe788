// How much of each request the prompt cache can reuse (issue 8): across a scripted 20-run main
// session with tool loops, the share of a request's bytes that repeats the previous request's
// prefix, in the order the API caches (tools, system, messages), without the moving markers.
// And (issue 15) a 20-message session with a different photo in every message.
import { randomBytes } from "node:crypto";
import sharp from "sharp";
import type { Attachment } from "../src/channels/channel.ts";
import { startFakeModel, text, toolCall, type RecordedRequest } from "../test/support/fake-model.ts";
import { startTestGateway } from "../test/support/test-gateway.ts";
import { round, type Figure } from "./harness.ts";

/** The request as the cache sees it: tools, system, then messages, cache_control removed. */
function cacheView(req: RecordedRequest): string {
  const strip = (v: unknown): unknown =>
    Array.isArray(v) ? v.map(strip) : v && typeof v === "object" ? Object.fromEntries(Object.entries(v).filter(([k]) => k !== "cache_control").map(([k, x]) => [k, strip(x)])) : v;
  return JSON.stringify(strip(req.body.tools ?? [])) + JSON.stringify(strip(req.body.system)) + JSON.stringify(strip(req.body.messages));
}

function commonPrefix(a: string, b: string): number {
  const n = Math.min(a.length, b.length);
  let i = 0;
  while (i < n && a.charCodeAt(i) === b.charCodeAt(i)) i++;
  return i;
}

export async function cachePrefixBench(): Promise<Figure[]> {
  return [...(await toolLoopSession()), ...(await photoSession())];
}

async function toolLoopSession(): Promise<Figure[]> {
  const fake = await startFakeModel();
  const { channel, stop } = await startTestGateway(fake.url);
  try {
    for (let run = 0; run < 20; run++) {
      // A tool loop of one to three steps, then an answer.
      const steps = 1 + (run % 3);
      for (let s = 0; s < steps; s++) fake.enqueue(toolCall("exec", { command: `ls -la notes/${run}-${s} 2>/dev/null; echo checked ${run}-${s}` }));
      fake.enqueue(text(`Run ${run}: I checked ${steps} place${steps > 1 ? "s" : ""}; everything is in order, and the notes are where you left them.`));
      const id = channel.say({ chat: "1", type: "dm", sender: "1", text: `Please check my notes for item ${run} and tell me if anything is missing.` });
      while (!channel.replies.has(id)) await new Promise((r) => setTimeout(r, 5));
    }
    const views = fake.requests.map(cacheView);
    let reused = 0;
    let total = 0;
    const shares: number[] = [];
    for (let i = 1; i < views.length; i++) {
      const same = commonPrefix(views[i - 1]!, views[i]!);
      reused += same;
      total += views[i]!.length;
      shares.push(same / views[i]!.length);
    }
    shares.sort((a, b) => a - b);
    return [
      { name: "cacheable prefix, 20-run session with tool loops (share of bytes)", value: round(reused / total, 3), unit: "", target: 0.95, better: "higher" },
      { name: "cacheable prefix, lowest single request", value: round(shares[0]!, 3), unit: "", target: 0.9, better: "higher" },
    ];
  } finally {
    await stop();
    await fake.close();
  }
}

const KEEP_TURNS = 3;

/** A photo as a phone sends it: a JPEG of 110-200 KB, different every time (noise does not compress). */
async function photo(i: number): Promise<Uint8Array> {
  const width = 480 + (i % 5) * 40;
  const height = (width * 3) / 4;
  return new Uint8Array(await sharp(randomBytes(width * height * 3), { raw: { width, height, channels: 3 } }).jpeg({ quality: 80 }).toBuffer());
}

/**
 * 20 owner messages, each with its own photo, through the real gateway (download, media store,
 * transcript, request builder); every third answer follows a tool call. Figures:
 * - the share of the re-sent bytes that repeat the previous request's prefix: per request, the
 *   bytes of what the previous request already held (tools, system, its messages as rendered
 *   now), of which the common prefix with the previous request is the part a cache can reuse.
 *   What the previous request did not hold (the new photo and text, the answer before it) can
 *   never come from the cache and is left out of both sides;
 * - the same through the simulated prompt cache (its breakpoints and 20-block lookback, about
 *   4 bytes a token): tokens read from the cache over the re-sent tokens;
 * - the largest request, and the most image blocks in one request.
 */
async function photoSession(): Promise<Figure[]> {
  const fake = await startFakeModel({ promptCache: { clock: Date.now, minTokens: () => 1 } });
  const { channel, stop } = await startTestGateway(fake.url, { config: { media: { keepTurns: KEEP_TURNS } } });
  const photos: Uint8Array[] = [];
  try {
    for (let run = 0; run < 20; run++) {
      const bytes = await photo(run);
      photos.push(bytes);
      if (run % 3 === 2) fake.enqueue(toolCall("exec", { command: `ls -la photos/${run}` }));
      fake.enqueue(text(`Photo ${run}: a grainy picture, mostly grey noise; nothing in it I can name.`));
      const attachment: Attachment = { kind: "image", name: `photo-${run}.jpg`, mime: "image/jpeg", size: bytes.length, fetch: async () => bytes };
      const id = `p${run}`;
      channel.deliver({ id, channel: "telegram", chat: { id: "1", type: "dm", members: ["1"] }, sender: { id: "1", name: "owner", isOwner: true }, text: `What is in this photo (${run})?`, addressed: true, attachments: [attachment], receivedAt: Date.now() });
      while (!channel.replies.has(id)) await new Promise((r) => setTimeout(r, 5));
    }
    const requests = fake.requests.filter((r) => r.path.endsWith("/messages"));
    let reused = 0;
    let resent = 0;
    let read = 0;
    let resentTokens = 0;
    for (let i = 1; i < requests.length; i++) {
      const prev = requests[i - 1]!;
      const req = requests[i]!;
      const held = prev.body.messages.length;
      const old = cacheViewOf(req, req.body.messages.slice(0, held)).length - 1; // without the closing "]"
      reused += Math.min(old, commonPrefix(cacheView(prev), cacheView(req)));
      resent += old;
      const u = req.usage!;
      const total = u.input_tokens + u.cache_read_input_tokens + u.cache_creation_input_tokens;
      read += u.cache_read_input_tokens;
      resentTokens += total - blockTokens(req.body.messages.slice(held));
    }
    const images = requests.map((r) => JSON.stringify(r.body.messages).split('"type":"image"').length - 1);
    const sizes = requests.map((r) => r.rawBody.length);
    const largestPhoto = Math.max(...photos.map((p) => Math.ceil(p.length / 3) * 4));
    return [
      { name: "photo session (20 messages, a photo each): reused share of the re-sent bytes (new turn excluded)", value: round(reused / resent, 3), unit: "", target: 0.95, better: "higher" },
      { name: "photo session: simulated cache, share of re-sent tokens read (new turn excluded)", value: round(read / resentTokens, 3), unit: "", target: 0.95, better: "higher" },
      // Bounded: keepTurns photos (base64) plus 64 KB of text, however long the session.
      { name: "photo session: largest request", value: round(Math.max(...sizes) / 1024, 0), unit: "KB", target: round((KEEP_TURNS * largestPhoto + 64 * 1024) / 1024, 0) },
      { name: `photo session: most image blocks in one request (keepTurns ${KEEP_TURNS})`, value: Math.max(...images), unit: "", target: KEEP_TURNS + 1 },
      { name: "photo session: fewest image blocks in one request", value: Math.min(...images), unit: "", target: 1, better: "higher" },
    ];
  } finally {
    await stop();
    await fake.close();
  }
}

/** cacheView with the given messages in place of the request's own. */
const cacheViewOf = (req: RecordedRequest, messages: unknown[]): string => cacheView({ ...req, body: { ...req.body, messages } });

/** Tokens of API messages as the simulated cache counts them (test/support/fake-prompt-cache.ts). */
function blockTokens(messages: Array<{ role: string; content: unknown }>): number {
  let tokens = 0;
  for (const m of messages) {
    const blocks = typeof m.content === "string" ? [{ type: "text", text: m.content }] : (m.content as Array<{ type: string; text?: string; cache_control?: unknown }>);
    blocks.forEach(({ cache_control: _, ...b }, i) => {
      const json = JSON.stringify(i === 0 ? { ...b, role: m.role } : b);
      tokens += Math.max(1, Math.ceil((b.type === "text" && typeof b.text === "string" ? b.text.length : json.length) / 4));
    });
  }
  return tokens;
}
