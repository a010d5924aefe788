// A small real file system that can be filled up: a tmpfs mount (needs root and a sandbox that
// allows mounts). Tests that need a genuinely full disk skip themselves where it is refused.
import { execFileSync } from "node:child_process";
import { closeSync, mkdtempSync, openSync, rmSync, writeSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";

export interface Tmpfs {
  dir: string;
  /** Writes a filler file until the file system is full; returns its path (delete it to free the space). */
  fill(): string;
  unmount(): void;
}

/** Mounts a tmpfs of `sizeMb` MB on a new temp folder; null where mounting is not allowed. */
export function mountTmpfs(sizeMb = 2): Tmpfs | null {
  const dir = mkdtempSync(join(tmpdir(), "hearth-tmpfs-"));
  try {
    execFileSync("mount", ["-t", "tmpfs", "-o", `size=${sizeMb}m,mode=0700`, "tmpfs", dir], { stdio: "ignore" });
  } catch {
    rmSync(dir, { recursive: true, force: true });
    return null;
  }
  let fillers = 0;
  return {
    dir,
    fill() {
      const path = join(dir, `filler-${++fillers}`);
      const fd = openSync(path, "w");
      const chunk = Buffer.alloc(4096, 0x61);
      try {
        for (;;) writeSync(fd, chunk);
      } catch (err) {
        if ((err as NodeJS.ErrnoException).code !== "ENOSPC") throw err;
      } finally {
        closeSync(fd);
      }
      return path;
    },
    unmount() {
      execFileSync("umount", [dir], { stdio: "ignore" });
      rmSync(dir, { recursive: true, force: true });
    },
  };
}
