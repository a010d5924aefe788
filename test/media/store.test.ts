// The media store: one file per content, under the scope's folder, with derived copies for
// pictures the API would not take as they are.
import { mkdtempSync, readdirSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import sharp from "sharp";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { mediaDir, storeMedia } from "../../src/media/store.ts";
import { pdf, picture } from "../support/media-files.ts";

let ws: string;
beforeEach(() => {
  ws = mkdtempSync(join(tmpdir(), "hearth-store-"));
});
afterEach(() => rmSync(ws, { recursive: true, force: true }));

const AT = Date.UTC(2026, 10, 23, 12);

describe("media store", () => {
  it("names files by date and content hash; the same file sent twice is stored once", async () => {
    const png = await picture("png");
    const a = await storeMedia(ws, mediaDir({ kind: "main" }, AT), { bytes: png, name: "a.png", mime: "image/png" }, AT);
    const b = await storeMedia(ws, mediaDir({ kind: "main" }, AT), { bytes: png, name: "b.png", mime: "image/png" }, AT);
    expect(a.type === "stored" && a.ref.path).toMatch(/^media\/2026-11\/2026-11-23-[0-9a-f]{12}\.png$/);
    expect(b.type === "stored" && b.ref.path).toBe(a.type === "stored" && a.ref.path);
    expect(readdirSync(join(ws, "media", "2026-11"))).toHaveLength(1);
  });

  it("a shared chat's files go to its own folder", () => {
    expect(mediaDir({ kind: "shared", chat: "telegram_-1001" }, AT)).toBe("memory/chats/telegram_-1001/media");
  });

  it("a picture past 1568 px is kept as sent and scaled into a .model.jpg the model gets", async () => {
    const big = await picture("png", 3000, 1000);
    const r = await storeMedia(ws, "media/2026-11", { bytes: big, name: "wide.png", mime: "image/png" }, AT);
    if (r.type !== "stored") throw new Error(r.reason);
    expect(readFileSync(join(ws, r.ref.path)).equals(Buffer.from(big))).toBe(true);
    expect(r.ref.file).toBe(join(ws, `${r.ref.path}.model.jpg`));
    expect([r.ref.mime, r.ref.note]).toEqual(["image/jpeg", "(picture scaled down to fit the model's limits)"]);
    const meta = await sharp(r.ref.file).metadata();
    expect([meta.width, meta.height]).toEqual([1568, 523]);
  });

  it("a TIFF is converted to JPEG; a PDF past 100 pages becomes its extracted text", async () => {
    const tiff = await storeMedia(ws, "media/x", { bytes: await picture("tiff"), name: "scan.tiff", mime: "image/tiff" }, AT);
    expect(tiff.type === "stored" && [tiff.ref.kind, tiff.ref.mime, tiff.ref.note]).toEqual(["image", "image/jpeg", "(picture converted from tiff to JPEG)"]);
    const long = await storeMedia(ws, "media/x", { bytes: pdf(101), name: "book.pdf", mime: "application/pdf" }, AT);
    if (long.type !== "stored") throw new Error(long.reason);
    expect([long.ref.kind, long.ref.note]).toEqual(["text", "(a 101-page PDF, past what the model reads as a document: its extracted text follows)"]);
    const text = readFileSync(long.ref.file, "utf8");
    expect(text.startsWith("Page 1")).toBe(true);
    expect(text).toContain("Page 101");
  });
});
