// Messages whose run failed because the disk was full stay open in the inbox (their sender was
// told "your message is kept and will be answered when there is space"). This keeps that
// promise without a restart: it watches the free space of the home's disk and, once there is
// room again, hands the kept messages back to the lanes — once, so a disk that stays full
// produces one notice per message, not one per retry.
import { statfsSync } from "node:fs";
import type { Logger } from "../../process/log.ts";

export interface DiskRetryOptions {
  /** The home folder: its disk is the one that filled up. */
  home: string;
  /** Runs the kept inbox entries again. Must not throw; ids no longer open are skipped by the caller. */
  resubmit: (entryIds: string[]) => void;
  log: Logger;
  /** How often the free space is checked while messages are kept. */
  everyMs?: number;
  /** Free bytes that count as "space again". */
  minFreeBytes?: number;
  /** Free bytes on the disk of `dir` (a seam for tests); default statfs. */
  freeBytes?: (dir: string) => number;
}

export class DiskRetry {
  readonly #o: Required<DiskRetryOptions>;
  readonly #kept = new Set<string>();
  #timer: NodeJS.Timeout | null = null;

  constructor(opts: DiskRetryOptions) {
    this.#o = { everyMs: 2_000, minFreeBytes: 1024 * 1024, freeBytes: freeBytesOf, ...opts };
  }

  /** Remembers entries that could not be answered for want of space. */
  keep(entryIds: string[]): void {
    for (const id of entryIds) this.#kept.add(id);
    this.#o.log.warn("disk.full_messages_kept", { kept: this.#kept.size, home: this.#o.home, action: "answered once the disk has space again" });
    this.#schedule();
  }

  stop(): void {
    if (this.#timer) clearTimeout(this.#timer);
    this.#timer = null;
  }

  #schedule(): void {
    if (this.#timer) return;
    this.#timer = setTimeout(() => {
      this.#timer = null;
      this.#check();
    }, this.#o.everyMs);
    this.#timer.unref();
  }

  #check(): void {
    let free: number;
    try {
      free = this.#o.freeBytes(this.#o.home);
    } catch (err) {
      this.#o.log.warn("disk.statfs_failed", { home: this.#o.home, error: err });
      free = 0;
    }
    if (free < this.#o.minFreeBytes) return this.#schedule();
    const ids = [...this.#kept];
    this.#kept.clear();
    this.#o.log.info("disk.space_again", { freeBytes: free, retrying: ids.length });
    this.#o.resubmit(ids);
  }
}

function freeBytesOf(dir: string): number {
  const s = statfsSync(dir);
  return s.bavail * s.bsize;
}
