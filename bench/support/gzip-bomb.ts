// A backup archive that is a decompression bomb, for the archive reader's test and bench: a
// valid manifest naming one file, then entries of zeros — gigabytes of them — in a gzip file of
// about `compressedMb` MB. Built by streaming: one gzip member of 64 MiB of zeros is made once and
// written again and again (gunzip reads concatenated members as one stream), so neither the
// zeros nor the archive are ever held in memory. And the child-process runner that measures a
// command's peak RSS (VmHWM) as its own.
import { spawn } from "node:child_process";
import { createHash } from "node:crypto";
import { closeSync, openSync, readFileSync, writeSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { gzipSync } from "node:zlib";
import { Header } from "tar";

const BLOCK = 512;
const MEMBER_ZEROS = 64 * 1024 * 1024;
/** Each entry is this many members of zeros: 3.5 GiB, under the reader's per-entry cap, so the expansion cap is what stops it. */
const MEMBERS_PER_ENTRY = 56;

function header(path: string, size: number): Buffer {
  const h = new Header({ path, size, type: "File", mode: 0o600, mtime: new Date(0), uid: 0, gid: 0 });
  const block = Buffer.alloc(BLOCK);
  h.encode(block, 0);
  return block;
}

/** Writes the bomb to `file`; returns its size in bytes. */
export function writeGzipBomb(file: string, compressedMb = 20): number {
  const entrySize = MEMBER_ZEROS * MEMBERS_PER_ENTRY;
  const manifest = Buffer.from(
    JSON.stringify({ format: "hearth-backup", version: 1, createdAt: "2026-11-27T00:00:00.000Z", hearth: "0.1.0", files: [{ path: "zeros.bin", size: entrySize, sha256: createHash("sha256").update("").digest("hex") }], left: [] }),
  );
  const pad = (n: number) => Buffer.alloc((BLOCK - (n % BLOCK)) % BLOCK);
  const zeros = gzipSync(Buffer.alloc(MEMBER_ZEROS), { level: 9 });
  const fd = openSync(file, "w", 0o600);
  let written = 0;
  const put = (b: Buffer) => (written += writeSync(fd, b));
  try {
    put(gzipSync(Buffer.concat([header("manifest.json", manifest.length), manifest, pad(manifest.length)])));
    for (let entry = 0; written < compressedMb * 1024 * 1024; entry++) {
      put(gzipSync(header(entry === 0 ? "home/zeros.bin" : `home/zeros-${entry}.bin`, entrySize)));
      for (let i = 0; i < MEMBERS_PER_ENTRY; i++) put(zeros);
    }
    put(gzipSync(Buffer.alloc(2 * BLOCK)));
  } finally {
    closeSync(fd);
  }
  return written;
}

const PRELOAD = fileURLToPath(new URL("./peak-rss-preload.ts", import.meta.url));

/**
 * Runs `node ARGS` in a child whose exit writes its peak RSS (VmHWM, read from /proc/self/status
 * as it exits: after exit there is nothing left to read) to stderr's last line; resolves with the
 * exit code, stdout, stderr without that line, and the peak in MB.
 */
export function runMeasured(args: string[], env: NodeJS.ProcessEnv, cwd: string): Promise<{ code: number | null; stdout: string; stderr: string; peakMb: number }> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, ["--import", PRELOAD, ...args], { env, cwd, stdio: ["ignore", "pipe", "pipe"] });
    let stdout = "";
    let stderr = "";
    child.stdout.on("data", (d: Buffer) => (stdout += d.toString()));
    child.stderr.on("data", (d: Buffer) => (stderr += d.toString()));
    child.on("error", reject);
    child.on("close", (code) => {
      const m = /peak-rss-kb=(\d+)\n$/.exec(stderr);
      if (!m) return reject(new Error(`no peak RSS reported; stderr: ${stderr.slice(-2000)}`));
      resolve({ code, stdout, stderr: stderr.slice(0, m.index), peakMb: Number(m[1]) / 1024 });
    });
  });
}

/** VmHWM of this process, in kB. */
export function peakRssKb(): number {
  return Number(/VmHWM:\s+(\d+) kB/.exec(readFileSync("/proc/self/status", "utf8"))?.[1] ?? 0);
}
