// The archive reader's caps, each crossed on its own (small limits, so small archives cross
// them): an entry's declared size is refused before a byte of it is read, the total and the
// expansion as the bytes arrive, and a second compressed stream inside the gzip is refused too.
import { createHash, randomBytes } from "node:crypto";
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { gzipSync } from "node:zlib";
import * as tar from "tar";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { ARCHIVE_LIMITS } from "../../src/backup/archive-reader.ts";
import { verifyBackup } from "../../src/backup/archive.ts";

let dir: string;
beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), "hearth-limits-"));
});
afterEach(() => rmSync(dir, { recursive: true, force: true }));

/** A valid archive of one file with these bytes. */
async function archiveOf(bytes: Buffer): Promise<string> {
  const staging = join(dir, "staging");
  mkdirSync(join(staging, "home"), { recursive: true });
  writeFileSync(join(staging, "home", "f.bin"), bytes);
  const sha256 = createHash("sha256").update(bytes).digest("hex");
  writeFileSync(join(staging, "manifest.json"), JSON.stringify({ format: "hearth-backup", version: 1, createdAt: "2026-11-27T00:00:00.000Z", hearth: "0.1.0", files: [{ path: "f.bin", size: bytes.length, sha256 }], left: [] }));
  const out = join(dir, "a.tar.gz");
  await tar.c({ gzip: true, file: out, cwd: staging }, ["manifest.json", "home/f.bin"]);
  return out;
}

const problems = async (file: string, limits: Partial<typeof ARCHIVE_LIMITS>) => {
  const r = await verifyBackup(file, { ...ARCHIVE_LIMITS, ...limits });
  return r.ok ? [] : r.problems;
};

describe("the archive reader's caps", () => {
  it("within every cap, the archive verifies", async () => {
    expect(await problems(await archiveOf(randomBytes(100_000)), {})).toEqual([]);
  });

  it("an entry larger than the per-entry cap is refused by its header", async () => {
    expect(await problems(await archiveOf(randomBytes(100_000)), { entryBytes: 50 * 1024 })).toEqual([
      "refused: home/f.bin would be 97.7 kiB decompressed, over the 50.0 kiB a Hearth backup's file may hold",
    ]);
  });

  it("more decompressed bytes than the total cap are refused as they arrive", async () => {
    const [p] = await problems(await archiveOf(randomBytes(300_000)), { totalBytes: 200 * 1024 });
    expect(p).toBe("refused: it expands to more than 200.0 kiB, over what a Hearth backup holds");
  });

  it("an expansion over the ratio is refused once past its threshold", async () => {
    const [p] = await problems(await archiveOf(Buffer.alloc(2_000_000)), { ratioAfterBytes: 512 * 1024 });
    expect(p).toMatch(/^refused: it expands more than 200× \(\d+\.\d kiB gave \d+\.\d (kiB|MiB) so far\); a Hearth backup does not, this looks like a decompression bomb$/);
  });

  it("a manifest that would parse to millions of values is refused before it is parsed", async () => {
    const staging = join(dir, "staging");
    mkdirSync(staging, { recursive: true });
    writeFileSync(join(staging, "manifest.json"), `{"format":"hearth-backup","version":1,"createdAt":"x","hearth":"x","left":[],"files":[${Array(400_000).fill("{}").join(",")}]}`);
    const file = join(dir, "m.tar.gz");
    await tar.c({ gzip: true, file, cwd: staging }, ["manifest.json"]);
    expect(await problems(file, {})).toEqual(["manifest.json: more entries than a Hearth backup's manifest holds (at most 300000 objects)"]);
  });

  it("a gzip inside the gzip is refused: tar would inflate it all at once", async () => {
    const file = join(dir, "double.tar.gz");
    writeFileSync(file, gzipSync(gzipSync(Buffer.alloc(10_000))));
    expect(await problems(file, {})).toEqual(["refused: it holds another compressed stream inside its gzip, not a tar; a Hearth backup is compressed once"]);
  });
});
