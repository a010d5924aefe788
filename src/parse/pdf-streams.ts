// A PDF's compressed streams, measured before pdf.js sees the file: pdf.js inflates a stream
// whole into memory outside the JavaScript heap (where a worker's heap limit does not reach),
// so a 1 MB file whose one FlateDecode stream unpacks to 1 GB would take 1 GB. Each stream is
// inflated here in small chunks that are counted and dropped, stopping at the limit.
import { createInflate } from "node:zlib";

export interface StreamLimits {
  /** Unpacked bytes one stream may have. */
  maxStreamBytes: number;
  /** Unpacked bytes all streams together may have. */
  maxTotalBytes: number;
}

/** Why the PDF is refused (for a sentence), or null when its streams are within the limits. */
export async function checkPdfStreams(pdf: Uint8Array, limits: StreamLimits): Promise<string | null> {
  const buf = Buffer.from(pdf.buffer, pdf.byteOffset, pdf.byteLength);
  let total = 0;
  let at = 0;
  for (;;) {
    const kw = buf.indexOf("stream", at, "latin1");
    if (kw < 0) return null;
    at = kw + 6;
    if (buf.subarray(Math.max(0, kw - 3), kw).toString("latin1") === "end") continue;
    const start = buf[at] === 0x0d && buf[at + 1] === 0x0a ? at + 2 : buf[at] === 0x0a || buf[at] === 0x0d ? at + 1 : -1;
    if (start < 0) continue;
    const dictFrom = buf.lastIndexOf("obj", kw, "latin1");
    const dict = buf.subarray(dictFrom < 0 || kw - dictFrom > 8192 ? Math.max(0, kw - 8192) : dictFrom, kw).toString("latin1");
    const endAt = buf.indexOf("endstream", start, "latin1");
    const end = endAt < 0 ? buf.length : endAt;
    at = end;
    if (!/\/FlateDecode\b|\/Fl\b/.test(dict)) continue;
    const room = Math.min(limits.maxStreamBytes, limits.maxTotalBytes - total);
    const size = await inflatedSize(buf.subarray(start, end), room);
    if (size === "over") {
      return room < limits.maxStreamBytes ? `its compressed parts unpack to more than ${mb(limits.maxTotalBytes)}` : `a compressed part of it unpacks to more than ${mb(limits.maxStreamBytes)}`;
    }
    total += size;
  }
}

const mb = (bytes: number) => `${Math.round(bytes / (1024 * 1024))} MB`;

/** The unpacked size of one zlib stream, or "over" once it passes `max`; a damaged stream counts what came out. */
function inflatedSize(data: Buffer, max: number): Promise<number | "over"> {
  return new Promise((resolve) => {
    let size = 0;
    const inflate = createInflate({ chunkSize: 64 * 1024 });
    inflate.on("data", (chunk: Buffer) => {
      size += chunk.length;
      if (size > max) {
        inflate.destroy();
        resolve("over");
      }
    });
    inflate.on("error", () => resolve(size > max ? "over" : size));
    inflate.on("end", () => resolve(size));
    inflate.on("close", () => resolve(size > max ? "over" : size));
    inflate.end(data);
  });
}
