// Reading a backup archive in bounded memory. An archive is outside content, and a gzip stream
// expands up to ~1,000×: tar's own reader inflates each 16 MB it reads at once, so a 20 MB bomb
// held gigabytes before any check could run. Here the file is read 16 kB at a time through
// Node's streaming gunzip (which hands its output on in 64 kB pieces), every piece is counted
// against the caps as it arrives — bytes per entry, bytes in total, and the expansion over the
// compressed bytes read so far — and only then given to tar's parser, which waits when its
// consumer (the hash, a file being written) is busy. A cap that is crossed stops the read there.
import { createReadStream } from "node:fs";
import { createGunzip } from "node:zlib";
import type { Parser, Unpack } from "tar";

export interface ArchiveLimits {
  /** The largest file one entry may hold, decompressed. */
  entryBytes: number;
  /** All entries together, decompressed. */
  totalBytes: number;
  /** Decompressed bytes per compressed byte, checked once `ratioAfterBytes` came out. */
  ratio: number;
  /** Small archives of very compressible files (an empty log, a zero-filled file) are not bombs. */
  ratioAfterBytes: number;
}

const GIB = 1024 * 1024 * 1024;
/**
 * A home holds notes, transcripts and media (20 MB each by default): a 4 GiB file or 64 GiB in
 * all is far beyond it; text compresses about 5–10×, and gzip's ceiling (zeros) is ~1,030×.
 */
export const ARCHIVE_LIMITS: ArchiveLimits = { entryBytes: 4 * GIB, totalBytes: 64 * GIB, ratio: 200, ratioAfterBytes: 64 * 1024 * 1024 };

/** The archive crossed one of the caps: refused at that byte. */
export class ArchiveLimitError extends Error {
  override name = "ArchiveLimitError";
  constructor(message: string) {
    super(message);
  }
}

/** The limit of metadata entries (PAX headers, long names), which tar keeps whole in memory. */
export const MAX_META_ENTRY_BYTES = 64 * 1024;

/**
 * gzip and zstd magic: tar's parser would inflate such a stream itself, all at once. A tar inside
 * the gzip starts with its first entry's name; another compressed stream there is refused.
 */
const NESTED_COMPRESSION = [Buffer.from([0x1f, 0x8b]), Buffer.from([0x28, 0xb5, 0x2f, 0xfd])];

/**
 * Streams `file` (a gzipped tar) into `parser` (tar's `Parser` or `Unpack`, made by the caller with
 * `maxMetaEntrySize: MAX_META_ENTRY_BYTES`), applying `limits`. Resolves once the parser is done
 * (`Unpack`: every file written); rejects with ArchiveLimitError at a crossed cap, or with the
 * stream's or the parser's error. The parser is aborted on any failure.
 */
export async function readArchive(file: string, parser: Parser | Unpack, done: "end" | "close", limits: ArchiveLimits = ARCHIVE_LIMITS): Promise<void> {
  const input = createReadStream(file, { highWaterMark: 16 * 1024 });
  const gunzip = createGunzip({ chunkSize: 64 * 1024 });
  let failed: Error | null = null;
  const parserDone = new Promise<void>((resolve, reject) => {
    parser.on(done, () => resolve());
    parser.on("error", (err: Error) => reject(err));
  });
  parserDone.catch(() => {});
  // Each entry's declared size is its decompressed size: checked before a byte of it is read.
  parser.on("error", (err: Error) => fail(err));
  parser.on("entry", (entry: { size: number; path: string }) => {
    if (entry.size > limits.entryBytes) fail(new ArchiveLimitError(`${entry.path} would be ${formatSize(entry.size)} decompressed, over the ${formatSize(limits.entryBytes)} a Hearth backup's file may hold`));
  });
  const fail = (err: Error) => {
    failed ??= err;
    input.destroy();
    gunzip.destroy();
  };
  input.pipe(gunzip);
  input.on("error", fail);
  let out = 0;
  let head = Buffer.alloc(0);
  try {
    for await (const chunk of gunzip as AsyncIterable<Buffer>) {
      if (failed) break;
      if (head.length < 4) {
        head = Buffer.concat([head, chunk.subarray(0, 4 - head.length)]);
        if (NESTED_COMPRESSION.some((m) => head.subarray(0, m.length).equals(m))) throw new ArchiveLimitError("it holds another compressed stream inside its gzip, not a tar; a Hearth backup is compressed once");
      }
      out += chunk.length;
      if (out > limits.totalBytes) throw new ArchiveLimitError(`it expands to more than ${formatSize(limits.totalBytes)}, over what a Hearth backup holds`);
      const read = input.bytesRead;
      if (out > limits.ratioAfterBytes && out > read * limits.ratio) {
        throw new ArchiveLimitError(`it expands more than ${limits.ratio}× (${formatSize(read)} gave ${formatSize(out)} so far); a Hearth backup does not, this looks like a decompression bomb`);
      }
      if (!parser.write(chunk)) await new Promise<void>((resolve) => parser.once("drain", resolve));
      if (failed) break;
    }
    if (failed) throw failed;
    parser.end();
    await parserDone;
  } catch (err) {
    fail(err as Error);
    parser.abort(failed ?? (err as Error));
    throw failed ?? err;
  }
}

function formatSize(n: number): string {
  if (n >= GIB) return `${(n / GIB).toFixed(1)} GiB`;
  if (n >= 1024 * 1024) return `${(n / 1024 / 1024).toFixed(1)} MiB`;
  return `${(n / 1024).toFixed(1)} kiB`;
}
