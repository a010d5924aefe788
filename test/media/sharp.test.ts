// sharp as the daemon loads it: no operation cache holding decoded pictures, one thread.
import { describe, expect, it } from "vitest";
import { loadSharp } from "../../src/media/sharp.ts";

describe("sharp, loaded for the daemon", () => {
  it("keeps no decoded pictures in libvips's cache and works on one thread", async () => {
    const sharp = await loadSharp();
    expect(sharp.cache()).toMatchObject({ memory: { max: 0 }, files: { max: 0 }, items: { max: 0 } });
    expect(sharp.concurrency()).toBe(1);
    // And it still converts a picture.
    const png = await sharp({ create: { width: 4, height: 3, channels: 3, background: "#f00" } }).png().toBuffer();
    expect(await sharp(png).metadata()).toMatchObject({ format: "png", width: 4, height: 3 });
    expect(await loadSharp()).toBe(sharp);
  });
});
