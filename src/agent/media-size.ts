// What the attachments of a request weigh in the model's window (DESIGN §6, §10), for the
// context budget: the transcript holds only references, so the size of a request's JSON says
// nothing about the pictures it will carry.
//
// Estimates follow Anthropic's documentation and err high, like the rest of the budget: a
// picture costs about width × height / 750 tokens after the API scales its long edge to 1,568
// px, and never more than about 1,600; a PDF page is sent as a picture plus its text, 1,500 to
// 3,000 tokens a page, counted here as 3,000. A note (an attachment no longer shown) is text,
// and so is a text file sent inline: those are bytes, which the budget's calibration turns into
// tokens like every other byte of the request. A tool's pictures (base64 in its result) are
// pictures too, not bytes.
import { readFileSync } from "node:fs";
import { clip, DEFAULT_MEDIA_KEEP_TURNS, shownFrom } from "./media-view.ts";
import type { ImageBlock, MediaRef, Message } from "./messages.ts";

export const IMAGE_MAX_TOKENS = 1_600;
const IMAGE_EDGE = 1_568;
export const PDF_PAGE_TOKENS = 3_000;
/** A PDF whose pages cannot be counted from its bytes: one page per this many bytes. */
const PDF_BYTES_PER_PAGE = 50_000;
const PDF_MAX_PAGES = 100;

export interface MediaLoad {
  /** Pictures and PDFs as the API counts them (not subject to the bytes→tokens calibration). */
  tokens: number;
  /** Text the attachments add beyond the request's JSON: files sent inline. */
  bytes: number;
}

/** What the shown attachments of `messages` add to a request; notes add nothing beyond their reference. */
export function mediaLoad(messages: readonly Message[], keepTurns = DEFAULT_MEDIA_KEEP_TURNS): MediaLoad {
  const load = { tokens: 0, bytes: 0 };
  for (let i = shownFrom(messages, keepTurns); i < messages.length; i++) {
    const m = messages[i]!;
    if (m.role !== "user" || !m.media) continue;
    for (const ref of m.media) {
      const one = loadOf(ref);
      load.tokens += one.tokens;
      load.bytes += one.bytes;
    }
  }
  return load;
}

// Stored files never change (named by content hash): one look per reference object.
const loads = new WeakMap<MediaRef, MediaLoad>();

function loadOf(ref: MediaRef): MediaLoad {
  let load = loads.get(ref);
  if (!load) {
    load = measure(ref);
    loads.set(ref, load);
  }
  return load;
}

function measure(ref: MediaRef): MediaLoad {
  let bytes: Buffer;
  try {
    bytes = readFileSync(ref.file);
  } catch {
    return { tokens: 0, bytes: 0 }; // sent as a one-line note
  }
  switch (ref.kind) {
    case "image":
      return { tokens: imageTokens(imageSize(bytes)), bytes: 0 };
    case "document":
      return { tokens: pdfPages(bytes) * PDF_PAGE_TOKENS, bytes: 0 };
    case "text":
      return { tokens: 0, bytes: Buffer.byteLength(clip(bytes.toString("utf8"), ref)) };
    default:
      return ref.kind satisfies never;
  }
}

/** What a tool's pictures (base64 in its result) cost, each by its size. */
export const toolImageTokens = (images: readonly ImageBlock[]): number => images.reduce((n, b) => n + imageTokens(imageSize(Buffer.from(b.data, "base64"))), 0);

/** Anthropic's estimate for a picture of this size; the cap when the size is unknown. */
export function imageTokens(size: { width: number; height: number } | null): number {
  if (!size || size.width <= 0 || size.height <= 0) return IMAGE_MAX_TOKENS;
  const scale = Math.min(1, IMAGE_EDGE / Math.max(size.width, size.height));
  return Math.min(IMAGE_MAX_TOKENS, Math.ceil((size.width * scale * size.height * scale) / 750));
}

/** Width and height from a PNG, GIF, JPEG or WebP header; null for anything else. */
export function imageSize(b: Buffer): { width: number; height: number } | null {
  if (b.length >= 24 && b.readUInt32BE(0) === 0x89504e47) return { width: b.readUInt32BE(16), height: b.readUInt32BE(20) };
  if (b.length >= 10 && b.toString("latin1", 0, 4) === "GIF8") return { width: b.readUInt16LE(6), height: b.readUInt16LE(8) };
  if (b.length >= 30 && b.toString("latin1", 0, 4) === "RIFF" && b.toString("latin1", 8, 12) === "WEBP") return webpSize(b);
  if (b.length >= 4 && b[0] === 0xff && b[1] === 0xd8) return jpegSize(b);
  return null;
}

function webpSize(b: Buffer): { width: number; height: number } | null {
  switch (b.toString("latin1", 12, 16)) {
    case "VP8 ":
      return { width: b.readUInt16LE(26) & 0x3fff, height: b.readUInt16LE(28) & 0x3fff };
    case "VP8L": {
      const bits = b.readUInt32LE(21);
      return { width: (bits & 0x3fff) + 1, height: ((bits >> 14) & 0x3fff) + 1 };
    }
    case "VP8X":
      return { width: b.readUIntLE(24, 3) + 1, height: b.readUIntLE(27, 3) + 1 };
    default:
      return null;
  }
}

/** Walks the JPEG segments to the first start-of-frame marker. */
function jpegSize(b: Buffer): { width: number; height: number } | null {
  let i = 2;
  while (i + 9 < b.length) {
    if (b[i] !== 0xff) return null;
    const marker = b[i + 1]!;
    if (marker === 0xff) {
      i++; // fill byte
      continue;
    }
    if ((marker >= 0xd0 && marker <= 0xd9) || marker === 0x01) {
      i += 2; // a marker without a length
      continue;
    }
    // SOF0..SOF15, except DHT (C4), JPG (C8) and DAC (CC).
    if (marker >= 0xc0 && marker <= 0xcf && marker !== 0xc4 && marker !== 0xc8 && marker !== 0xcc) return { width: b.readUInt16BE(i + 7), height: b.readUInt16BE(i + 5) };
    i += 2 + b.readUInt16BE(i + 2);
  }
  return null;
}

/** Pages of a PDF, from its page objects (or its page count); by size when they are compressed away. */
function pdfPages(b: Buffer): number {
  const text = b.toString("latin1");
  const objects = text.match(/\/Type\s*\/Page(?![a-zA-Z])/g)?.length ?? 0;
  const counted = Math.max(0, ...[...text.matchAll(/\/Count\s+(\d+)/g)].map((m) => Number(m[1])));
  const pages = objects || counted || Math.ceil(b.length / PDF_BYTES_PER_PAGE);
  return Math.min(PDF_MAX_PAGES, Math.max(1, pages));
}
