// The read tool shows a picture in the workspace as an image block (main scope).
import { mkdtemp, realpath, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import sharp from "sharp";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { readTool } from "../../../src/agent/tools/files.ts";
import { silentLogger } from "../../../src/process/log.ts";
import { picture } from "../../support/media-files.ts";

let workspace: string;
beforeEach(async () => {
  workspace = await realpath(await mkdtemp(path.join(tmpdir(), "hearth-read-image-")));
});
afterEach(() => rm(workspace, { recursive: true, force: true }));

const read = (p: string) => readTool.execute({ path: p }, { signal: new AbortController().signal, workspace, scope: "main", sessionKey: "main", log: silentLogger });

describe("read: pictures", () => {
  it("a PNG comes back as an image block with the file's bytes", async () => {
    const png = await picture("png");
    await writeFile(path.join(workspace, "chart.png"), png);
    expect(await read("chart.png")).toEqual({ content: "The picture chart.png:", images: [{ type: "image", mediaType: "image/png", data: Buffer.from(png).toString("base64") }] });
  });

  it("a picture larger than the API takes is scaled down to 1568 px on the long edge", async () => {
    await writeFile(path.join(workspace, "big.jpg"), await picture("jpeg", 4000, 3000));
    const out = await read("big.jpg");
    expect(out.content).toBe("The picture big.jpg (picture scaled down to fit the model's limits):");
    const meta = await sharp(Buffer.from(out.images![0]!.data, "base64")).metadata();
    expect([meta.format, meta.width, meta.height]).toEqual(["jpeg", 1568, 1176]);
  });

  it("a damaged picture is one clear error", async () => {
    await writeFile(path.join(workspace, "bad.jpg"), Buffer.from([0xff, 0xd8, 0, 1]));
    expect(await read("bad.jpg")).toEqual({ content: "I couldn't open the picture bad.jpg: the file seems damaged.", isError: true });
  });
});
